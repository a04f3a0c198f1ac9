// Package cuda is the zyx-tt backend for NVIDIA GPUs: it drives the CUDA
// driver API, NVRTC and cuBLAS through purego (no cgo), so one binary runs
// on hosts with and without a GPU. Devices are named "cuda:N"; programs run
// their CUDA C variant (compiled by NVRTC for the device's exact arch and
// cached on disk) or their GEMM variant (cuBLAS).
package cuda

import (
	"context"
	"errors"
	"fmt"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// Name is the backend's registry key.
const Name = "cuda"

func init() {
	driver.Register(Name, driver.DriverFunc(open))
	driver.RegisterSection(Name, Config{})
}

// Config is the "cuda" section of the config file.
type Config struct {
	// CacheDir holds compiled modules. Empty means the user cache
	// directory (zyx/cuda under os.UserCacheDir); "off" disables the cache.
	CacheDir string `json:"cache_dir"`
	// NVRTC and CUBLAS are explicit library paths, tried before the usual
	// sonames.
	NVRTC  string `json:"nvrtc"`
	CUBLAS string `json:"cublas"`
	// StagingChunk is the size of each of the two pinned staging buffers
	// for copies of ordinary (not host-pool) memory larger than the bounce
	// budget, which is max(4 × StagingChunk, 64 MiB). Default 16 MiB.
	// 0 means the default; the bound keeps 4 × StagingChunk an int64.
	StagingChunk int64 `json:"staging_chunk" min:"0" max:"4294967296" unit:"bytes"`
	// PreferKernel runs a program's CUDA C variant even when it also has a
	// GEMM variant (by default cuBLAS runs the GEMM).
	PreferKernel bool `json:"prefer_kernel"`
	// HostPool is the host pool whose segments are pinned once and that
	// stages copies; nil means hostpool.Default(). The driver sets the
	// runtime's.
	HostPool *hostpool.Pool `json:"-"`
}

const defaultStagingChunk = 16 << 20

func open(ctx context.Context, env *driver.Env) ([]driver.Device, error) {
	var c Config
	if err := driver.Section(env, Name, &c); err != nil {
		return nil, err
	}
	c.HostPool = env.HostPool
	if c.StagingChunk <= 0 {
		c.StagingChunk = defaultStagingChunk
	}
	drv, err := loadDriver()
	if err != nil {
		return nil, err
	}
	var n int32
	if err := drv.check("cuDeviceGetCount", drv.callPtr(drv.deviceGetCount, &n)); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: the CUDA driver reports no devices", driver.ErrNoDevice)
	}
	common := driver.Common(env, Name)
	var devs []driver.Device
	var errs []error
	for i := 0; i < int(n); i++ {
		if !common.Allows(i) {
			driver.Debug(driver.DebugDevice, "cuda device skipped by device_ids", "ordinal", i)
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		d, err := openDevice(drv, i, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("cuda:%d: %w", i, err))
			continue
		}
		devs = append(devs, d)
	}
	if len(devs) == 0 {
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		return nil, fmt.Errorf("%w: device_ids allows none of the %d CUDA devices", driver.ErrNoDevice, n)
	}
	for _, e := range errs {
		driver.Debug(driver.DebugDevice, "cuda device not opened", "err", e)
	}
	return devs, nil
}
