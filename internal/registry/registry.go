// Package registry holds the backend drivers that backends/driver.Register
// records, and the environment a driver opens in. It sits below package
// backends and backends/driver so that both can reach it: drivers register
// through driver, runtimes open them through backends.
package registry

import (
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"sort"
	"sync"

	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/config"
)

// Env is what a driver opens with: the runtime's config, its host pool (the
// memory host-side devices compute on and every cross-pool copy stages
// through) and its logger.
type Env struct {
	Config   *config.Config
	HostPool *hostpool.Pool
	Logger   *slog.Logger
	// KernelOutput receives what kernels print (DPRINT), a line at a
	// time; nil discards it.
	KernelOutput io.Writer
	// KernelDebug, when set, asks for kernels a debugger can step through
	// (Tenstorrent's emulator: -O0 with debug info, no call deadlines; see
	// docs/emulator.md, "Stepping through a kernel with gdb"). It is called
	// with each such device's name and the pid of the process to attach to.
	KernelDebug func(device string, pid int)
	// EmuEnv adds NAME=VALUE settings to the environment of the emulator's
	// runtimes (the watcher's switches, docs/emulator.md).
	EmuEnv []string
}

var (
	mu      sync.RWMutex
	drivers = map[string]any{}
)

// Register records d under name. Like database/sql, it panics when called
// twice for one name or with a nil driver: both are programming errors
// caught at init.
func Register(name string, d any) {
	mu.Lock()
	defer mu.Unlock()
	if d == nil {
		panic("backends: Register driver is nil")
	}
	if _, dup := drivers[name]; dup {
		panic("backends: Register called twice for " + name)
	}
	drivers[name] = d
}

// Lookup is the driver registered under name.
func Lookup(name string) (any, error) {
	mu.RLock()
	d, ok := drivers[name]
	mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (forgotten import?)", name)
	}
	return d, nil
}

// Names lists the registered backends, sorted.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	out := make([]string, 0, len(drivers))
	for n := range drivers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Format is one variant format: its name, the file a bundle keeps it in, and
// the Go type of its code.
type Format struct {
	Name string
	File string
	Code reflect.Type
	// NoGrid: the format's code runs whole, not over a grid of work groups
	// (a GEMM), so a program's grid means nothing for it.
	NoGrid bool
}

var formats []Format

// RegisterFormat records a variant format; it panics on a duplicate name or
// file, or a format without a code type.
func RegisterFormat(f Format) {
	mu.Lock()
	defer mu.Unlock()
	if f.Name == "" || f.File == "" || f.Code == nil {
		panic("backends: RegisterFormat needs a name, a file and a code type")
	}
	for _, g := range formats {
		if g.Name == f.Name || g.File == f.File {
			panic("backends: RegisterFormat called twice for " + f.Name + " (" + f.File + ")")
		}
	}
	formats = append(formats, f)
}

// Formats lists the registered formats in registration order.
func Formats() []Format {
	mu.RLock()
	defer mu.RUnlock()
	return append([]Format(nil), formats...)
}
