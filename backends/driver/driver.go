// Package driver is what a backend author implements and calls: Register
// for the driver, the environment it opens in, its config section, the
// checks every backend needs at launch, and logging. Users of zyx-tt see
// package backends only, as database/sql users do not see
// database/sql/driver.
package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/zyxtt/zyxtt/internal/config"
	"github.com/zyxtt/zyxtt/internal/registry"
	"github.com/zyxtt/zyxtt/internal/zlog"
)

// Env is what a driver opens with: the runtime's config, its host pool and
// its logger.
type Env = registry.Env

// Driver opens a backend. Backends register a Driver in init; each Runtime
// opens it lazily and once, on first use, even under concurrent use. The
// context bounds the open (the runtime's, or OpenTimeouter's timeout); it is
// never the first caller's own context.
type Driver interface {
	// Open initialises the backend and returns its devices. An error is
	// the reason the backend has no devices ("libcuda.so.1: cannot open
	// shared object file"); it is kept and shown by probe.
	Open(ctx context.Context, env *Env) ([]Device, error)
}

// DriverFunc adapts a function to Driver.
type DriverFunc func(ctx context.Context, env *Env) ([]Device, error)

// Open calls f.
func (f DriverFunc) Open(ctx context.Context, env *Env) ([]Device, error) {
	return f(ctx, env)
}

// Optional driver capabilities, found by type assertion.
type (
	// OpenTimeouter is a driver with its own bound on Open (the Tenstorrent
	// driver starts a runtime process per chip).
	OpenTimeouter interface{ OpenTimeout() time.Duration }
	// ConfigSectioner is a driver whose config section is not its backend
	// name (the tt backend reads "tenstorrent").
	ConfigSectioner interface{ ConfigSection() string }
	// DeviceNamer is a driver whose devices have names that are not its
	// backend name ("tt-emu:0" for backend tt), so that a selector naming
	// them opens only this backend: each prefix with what such a device is
	// ("tt-emu": "emulator"), for messages.
	DeviceNamer interface{ DeviceNamePrefixes() map[string]string }
)

// Register makes a backend available under name. Like database/sql, it
// panics when called twice for one name or with a nil driver: both are
// programming errors caught at init.
func Register(name string, d Driver) {
	if d == nil {
		panic("backends: Register driver is nil")
	}
	registry.Register(name, d)
}

// RegisterFormat makes a new variant format known: its name, the file a
// program bundle keeps it in, and the Go type of its code (a pointer type;
// bundles can describe only the code types they know). It panics on a
// duplicate name or file, at init.
func RegisterFormat(name Format, file string, code reflect.Type) {
	registry.RegisterFormat(registry.Format{Name: string(name), File: file, Code: code})
}

// RegisterSection makes config section name known, with defaults (the
// struct the driver decodes its section into, holding its default values)
// as its keys and their types: a json tag names a key, and min, max and
// unit tags bound a number ("timeout_s" min:"0.001" max:"86400"
// unit:"seconds"). Every command then checks the section whether or not the
// backend opens, and reports a fault by key path with line and column. A
// backend calls it in init, next to Register; it panics on a name
// registered twice or a type a config cannot hold.
func RegisterSection(name string, defaults any) { config.RegisterSection(name, defaults) }

// ConfigKeyError is a fault of one key that a section type's Validate
// method (checks beyond types and bounds) returns: it is reported at that
// key, by its path.
type ConfigKeyError = config.KeyError

// Suggest is the name in known that name is most likely a typo of, or "".
func Suggest(name string, known []string) string { return config.Suggest(name, known) }

// Section decodes the driver's config section into v, a pointer to the
// struct that holds the defaults (see backends.Config.Section): an unknown
// key, a value of the wrong type or out of bounds is an error naming the
// key path, and leaves v as it was.
func Section(env *Env, name string, v any) error { return env.Config.Section(name, v) }

// Common is the section's device_ids.
func Common(env *Env, name string) config.Common { return env.Config.Common(name) }

// The debug areas of ZYX_DEBUG.
const (
	DebugDevice   = zlog.Device
	DebugPerf     = zlog.Perf
	DebugSched    = zlog.Sched
	DebugCompile  = zlog.Compile
	DebugAssembly = zlog.Assembly
)

// Debug logs msg in area m (see backends.SetLogger for levels).
func Debug(m zlog.Mask, msg string, args ...any) { zlog.Debug(m, msg, args...) }

// DebugEnabled reports whether ZYX_DEBUG selects area m.
func DebugEnabled(m zlog.Mask) bool { return zlog.Enabled(m) }

// SectionDriver is the driver of a backend whose devices open from its
// config section alone: each Open decodes section name into a C (whose
// zero value holds the defaults) and opens with it.
func SectionDriver[C any](name string, open func(context.Context, C) ([]Device, error)) DriverFunc {
	return func(ctx context.Context, env *Env) ([]Device, error) {
		var c C
		if err := Section(env, name, &c); err != nil {
			return nil, err
		}
		return open(ctx, c)
	}
}

// OpenEach opens the devices of ordinals 0..n-1 that kept (the section's
// device_ids) allows, in order, each with open, and returns what Opened
// returns for them: a device that does not open is a reason ("<backend>:<i>:
// …"), after the reasons the caller gathered already (a platform it could
// not list). A ctx done before a device closes the devices opened so far
// and returns ctx's error.
func OpenEach(ctx context.Context, backend string, n int, kept config.Common, open func(ordinal int) (Device, error), reasons []error, none string) ([]Device, error) {
	var devs []Device
	for i := range n {
		if !kept.Allows(i) {
			continue
		}
		if err := ctx.Err(); err != nil {
			for _, d := range devs {
				_ = d.Close()
			}
			return nil, err
		}
		d, err := open(i)
		if err != nil {
			reasons = append(reasons, fmt.Errorf("%s:%d: %w", backend, i, err))
			continue
		}
		devs = append(devs, d)
	}
	return Opened(backend, devs, reasons, none)
}

// Opened is what an Open returns once it has tried each of its devices: the
// devices that opened, with every other device's reason logged as skipped;
// or, when none opened, ErrNoDevice with every reason, or with none (why
// there was nothing to try, "device_ids leaves no device") where there is
// no reason.
func Opened(backend string, devs []Device, reasons []error, none string) ([]Device, error) {
	if len(devs) > 0 {
		for _, r := range reasons {
			Debug(DebugDevice, backend+": device skipped", "reason", r)
		}
		return devs, nil
	}
	if len(reasons) == 0 {
		return nil, fmt.Errorf("%w: %s", ErrNoDevice, none)
	}
	return nil, fmt.Errorf("%w: %w", ErrNoDevice, errors.Join(reasons...))
}
