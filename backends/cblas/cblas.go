//go:build darwin || freebsd || linux || netbsd

// Package cblas is the CBLAS backend: it runs the GEMM variant of a program
// (f32 and f64, transposes, leading dimensions, alpha and beta, batches)
// through a CBLAS library loaded with purego, on the host pool's memory.
// It runs only such ahead-of-time GEMM programs.
package cblas

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zyxtt/zyxtt/backends/c/cpuinfo"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/onedevice"
	"github.com/zyxtt/zyxtt/hostpool"
)

// BackendName is the registry key and Device.Backend; also the device name.
const BackendName = "cblas"

// Config is the "cblas" section of the config file.
type Config struct {
	// Library is a CBLAS to try before the default sonames (a path or a
	// soname).
	Library string `json:"library"`
	// Threads sets the library's thread count (OpenBLAS, BLIS); 0 keeps
	// the library's default.
	Threads int `json:"threads" min:"0" max:"4096"`
	// HostPool is the pool the device computes on; nil means
	// hostpool.Default(). The driver sets the runtime's.
	HostPool *hostpool.Pool `json:"-"`
}

// openDriver, registered as the backend's driver, opens the device with
// the runtime's host pool.
var openDriver = onedevice.Register(BackendName, func(ctx context.Context, c Config, host *hostpool.Pool) (*Device, error) {
	c.HostPool = host
	return Open(ctx, c)
})

// Device is the CBLAS device.
type Device struct {
	lib  *library
	pool *hostpool.Pool
	info *driver.DeviceInfo

	// queue runs the GEMM calls one after another on a goroutine of its
	// own: each one already uses every thread the library has, and not
	// every CBLAS is reentrant (docs/api.md, "Events").
	queue *driver.Queue

	closeMu sync.RWMutex
	closed  bool
}

var _ driver.Device = (*Device)(nil)

// Open loads a CBLAS (the configured library first, then DefaultLibraries)
// and sets its thread count.
func Open(ctx context.Context, cfg Config) (*Device, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Threads < 0 {
		return nil, fmt.Errorf("%w: cblas: threads must be >= 0, got %d", driver.ErrInvalidArgument, cfg.Threads)
	}
	candidates := DefaultLibraries
	if cfg.Library != "" {
		candidates = append([]string{cfg.Library}, DefaultLibraries...)
	}
	lib, err := loadLibrary(candidates)
	if err != nil {
		return nil, fmt.Errorf("%w: cblas: no usable CBLAS library: %w", driver.ErrNoDevice, err)
	}
	if cfg.Library != "" && lib.path != cfg.Library {
		driver.Debug(driver.DebugDevice, "cblas: configured library not used", "library", cfg.Library, "using", lib.path)
	}
	threadNote := ""
	if cfg.Threads > 0 {
		if lib.setThreads != nil {
			lib.setThreads(cfg.Threads)
		} else {
			threadNote = fmt.Sprintf("config asks for %d threads but %s has no thread control", cfg.Threads, lib.path)
			driver.Debug(driver.DebugDevice, "cblas: "+threadNote)
		}
	}
	pool := cfg.HostPool
	if pool == nil {
		hp, err := hostpool.Default()
		if err != nil {
			return nil, fmt.Errorf("cblas: host pool: %w", err)
		}
		pool = hp
	}
	d := &Device{lib: lib, pool: pool, queue: driver.NewQueue()}
	d.info = d.describe(threadNote)
	return d, nil
}

// Threads is the library's thread count, or 0 where it cannot say.
func (d *Device) Threads() int {
	if d.lib.getThreads == nil {
		return 0
	}
	return d.lib.getThreads()
}

func (d *Device) describe(threadNote string) *driver.DeviceInfo {
	cpu := cpuinfo.Host()
	extra := cpu.Extra()
	extra["library"] = d.lib.path
	extra["vendor"] = d.lib.vendor
	extra["aot_only"] = "true"
	if t := d.Threads(); t > 0 {
		extra["threads"] = strconv.Itoa(t)
	} else {
		extra["threads"] = "library default (not reported)"
	}
	if threadNote != "" {
		extra["threads_note"] = threadNote
	}
	if d.lib.config != "" {
		extra["library_config"] = strings.TrimSpace(d.lib.config)
	}
	if d.lib.core != "" {
		extra["library_core"] = d.lib.core
	}
	return &driver.DeviceInfo{
		Formats:             []driver.Format{driver.FormatGEMM},
		Name:                d.lib.vendor + " on " + cpu.Model,
		Kind:                driver.KindCPU,
		Compute:             cpu.PeakFLOPs(),
		MaxGlobalWorkDims:   []uint64{1, 1, 1},
		MaxLocalThreads:     1,
		MaxLocalWorkDims:    []uint32{1, 1, 1},
		PreferredVectorSize: uint8(min(cpu.VectorBytes, 255)),
		LocalMemSize:        uint64(cpu.CacheBytes("L1d")),
		WarpSize:            1,
		Cores:               cpu.Cores,
		Extra:               extra,
		// DTypeCaps stay empty: the device runs GEMM programs only, no
		// generated elementwise code.
	}
}

// Name is "cblas".
func (d *Device) Name() string { return BackendName }

// Backend is "cblas".
func (d *Device) Backend() string { return BackendName }

// Info describes the CPU and the library.
func (d *Device) Info() *driver.DeviceInfo { return d.info }

// Pool is the process-wide host pool.
func (d *Device) Pool() driver.Pool { return d.pool }

// Close stops the device; compiled programs fail with ErrClosed afterwards.
// The library stays loaded (unloading a threaded BLAS under its worker
// threads is unsafe) and the shared host pool stays open.
func (d *Device) Close() error {
	d.closeMu.Lock()
	first := !d.closed
	d.closed = true
	d.closeMu.Unlock()
	if first {
		// Queued calls that have not started are cancelled; a running one
		// cannot be stopped and is not waited for.
		d.queue.Abandon(driver.Errorf(BackendName, "launch", driver.ErrClosed, "the device was closed before the call started"))
	}
	return nil
}

func (d *Device) isClosed() bool {
	d.closeMu.RLock()
	defer d.closeMu.RUnlock()
	return d.closed
}

// Compile checks p's GEMM variant. Programs without one are ErrNoVariant;
// dtypes other than f32 and f64 are ErrUnsupported.
func (d *Device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if d.isClosed() {
		return nil, driver.Errorf(BackendName, "compile", driver.ErrClosed, "")
	}
	g := p.GEMM()
	switch g.DType {
	case driver.F32, driver.F64:
	default:
		return nil, driver.Errorf(BackendName, "compile", driver.ErrUnsupported, "program %q: GEMM dtype %s (cblas runs f32 and f64)", p.Name, g.DType)
	}
	switch g.Compute {
	case "", "tf32": // tf32 asks for at least tf32 precision; f32 math gives more
	default:
		return nil, driver.Errorf(BackendName, "compile", driver.ErrUnsupported, "program %q: GEMM compute mode %q", p.Name, g.Compute)
	}
	for _, op := range []struct {
		name string
		ord  int
	}{{"a", g.A}, {"b", g.B}, {"c", g.C}} {
		if dt := p.Params[op.ord].DType; dt != g.DType {
			return nil, driver.Errorf(BackendName, "compile", driver.ErrInvalidArgument,
				"program %q: GEMM operand %s (param %d) is %s, the GEMM is %s", p.Name, op.name, op.ord, dt, g.DType)
		}
	}
	if g.A == g.C || g.B == g.C {
		return nil, driver.Errorf(BackendName, "compile", driver.ErrInvalidArgument,
			"program %q: GEMM output c must be a different param from a and b", p.Name)
	}
	prog := *p
	return &executable{dev: d, prog: &prog}, nil
}
