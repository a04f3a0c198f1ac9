//go:build darwin || freebsd || linux || netbsd

// Package c is the C backend: it compiles a program's C variant with the
// system compiler into a shared object, loads it with purego and runs the
// whole launch grid inside C, in parallel across the host's cores, on the
// host pool's memory.
package c

import (
	"context"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/internal/onedevice"
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
	Threads int `json:"threads"`
	// CacheDir holds compiled objects; default the user cache dir's zyx/c.
	CacheDir string `json:"cache_dir"`
}

// DefaultFlags are the optimisation flags used when the config names none.
var DefaultFlags = []string{"-O3", "-march=native"}

func init() {
	backends.Register(BackendName, backends.DriverFunc(openDriver))
}

func openDriver(ctx context.Context, cfg *backends.Config) ([]backends.Device, error) {
	return onedevice.Open(ctx, cfg, BackendName, Open)
}
