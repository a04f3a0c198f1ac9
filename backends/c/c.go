//go:build darwin || freebsd || linux || netbsd

// Package c is the C backend: it compiles a program's C variant with the
// system compiler into a shared object, loads it with purego and runs the
// whole launch grid inside C, in parallel across the host's cores, on the
// host pool's memory.
package c

import (
	"context"

	"github.com/zyxtt/zyxtt/backends/internal/onedevice"
	"github.com/zyxtt/zyxtt/hostpool"
)

// BackendName is the registry key and Device.Backend of the C backend; it is
// also the one device's name.
const BackendName = "c"

// Config is the "c" section of the config file.
type Config struct {
	// Compiler is the C compiler command (default "cc").
	Compiler string `json:"compiler"`
	// Flags replace the default optimisation flags
	// (-O3 -march=native). -fPIC and -shared are always added.
	Flags *[]string `json:"flags"`
	// OpenMP: absent means "use it when the compiler supports it", true
	// requires it, false never uses it.
	OpenMP *bool `json:"openmp"`
	// Threads is how many threads a launch uses; 0 means one per core.
	Threads int `json:"threads" min:"0" max:"4096"`
	// CacheDir holds compiled objects; default the user cache dir's zyx/c.
	CacheDir string `json:"cache_dir"`
	// HostPool is the pool the device computes on; nil means
	// hostpool.Default(). The driver sets the runtime's.
	HostPool *hostpool.Pool `json:"-"`
}

// hostPoolOf is the configured host pool, or the process-wide one.
func hostPoolOf(p *hostpool.Pool) (*hostpool.Pool, error) {
	if p != nil {
		return p, nil
	}
	return hostpool.Default()
}

// DefaultFlags are the optimisation flags used when the config names none.
var DefaultFlags = []string{"-O3", "-march=native"}

// openDriver, registered as the backend's driver, opens the device with
// the runtime's host pool.
var openDriver = onedevice.Register(BackendName, func(ctx context.Context, c Config, host *hostpool.Pool) (*Device, error) {
	c.HostPool = host
	return Open(ctx, c)
})
