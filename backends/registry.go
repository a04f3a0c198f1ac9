package backends

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Driver opens a backend. Backends register a Driver in init; the registry
// opens each one lazily and once, on first use, even under concurrent use.
type Driver interface {
	// Open initialises the backend with the process config and returns its
	// devices. An error is the reason the backend has no devices ("libcuda.so.1:
	// cannot open shared object file"); it is kept and shown by probe.
	Open(ctx context.Context, cfg *Config) ([]Device, error)
}

// DriverFunc adapts a function to Driver.
type DriverFunc func(ctx context.Context, cfg *Config) ([]Device, error)

// Open calls f.
func (f DriverFunc) Open(ctx context.Context, cfg *Config) ([]Device, error) { return f(ctx, cfg) }

type entry struct {
	name   string
	driver Driver
	once   sync.Once
	devs   []Device
	err    error
	// opened is set once devs and err are final, so CloseAll can read them
	// without waiting on (or racing with) a backend that is still opening.
	opened atomic.Bool
}

var (
	regMu    sync.RWMutex
	registry = map[string]*entry{}
)

// Register makes a backend available under name. Like database/sql, it
// panics when called twice for one name or with a nil driver: both are
// programming errors caught at init.
func Register(name string, d Driver) {
	regMu.Lock()
	defer regMu.Unlock()
	if d == nil {
		panic("backends: Register driver is nil")
	}
	if _, dup := registry[name]; dup {
		panic("backends: Register called twice for " + name)
	}
	registry[name] = &entry{name: name, driver: d}
}

// Registered lists the registered backend names, sorted.
func Registered() []string {
	regMu.RLock()
	defer regMu.RUnlock()
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func lookupEntry(name string) (*entry, error) {
	regMu.RLock()
	e, ok := registry[name]
	regMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown backend %q (forgotten import?)", name)
	}
	return e, nil
}

func (e *entry) open(ctx context.Context) {
	e.once.Do(func() {
		defer e.opened.Store(true)
		defer func() {
			if r := recover(); r != nil {
				e.devs, e.err = nil, fmt.Errorf("%s: backend panicked during init: %v", e.name, r)
			}
		}()
		e.devs, e.err = e.driver.Open(ctx, CurrentConfig())
		if e.err == nil && len(e.devs) == 0 {
			e.err = fmt.Errorf("%w: the backend found no devices", ErrNoDevice)
		}
		if e.err != nil {
			Debug(DebugDevice, "backend has no devices", "backend", e.name, "reason", e.err)
		}
		for _, d := range e.devs {
			Debug(DebugDevice, "device", "backend", e.name, "name", d.Name(), "info", d.Info().Name)
		}
	})
}

// BackendStatus is what one backend contributed: its devices, or the reason
// it has none.
type BackendStatus struct {
	Name    string
	Devices []Device
	Err     error
}

// Backend opens (once) and reports one backend.
func Backend(ctx context.Context, name string) (BackendStatus, error) {
	e, err := lookupEntry(name)
	if err != nil {
		return BackendStatus{}, err
	}
	e.open(ctx)
	return BackendStatus{Name: name, Devices: e.devs, Err: e.err}, nil
}

// Status opens every registered backend and reports each, sorted by name.
func Status(ctx context.Context) []BackendStatus {
	names := Registered()
	out := make([]BackendStatus, 0, len(names))
	for _, n := range names {
		st, err := Backend(ctx, n)
		if err != nil {
			continue
		}
		out = append(out, st)
	}
	return out
}

// Devices opens every backend and lists every device.
func Devices(ctx context.Context) []Device {
	var out []Device
	for _, st := range Status(ctx) {
		out = append(out, st.Devices...)
	}
	return out
}

// PoolStatus is one pool and its free bytes.
type PoolStatus struct {
	Pool      Pool
	FreeBytes int64
	Devices   []string
}

// Pools lists every pool with its free bytes. A pool shared by several
// devices (the host pool) appears once.
func Pools(ctx context.Context) []PoolStatus {
	var out []PoolStatus
	index := map[Pool]int{}
	for _, d := range Devices(ctx) {
		p := d.Pool()
		if i, ok := index[p]; ok {
			out[i].Devices = append(out[i].Devices, d.Name())
			continue
		}
		index[p] = len(out)
		out = append(out, PoolStatus{Pool: p, FreeBytes: p.FreeBytes(), Devices: []string{d.Name()}})
	}
	return out
}

// Lookup finds one device by selector: "backend" (its first device),
// "backend:N", or a device's exact name.
func Lookup(ctx context.Context, selector string) (Device, error) {
	backend, idx, hasIdx := splitSelector(selector)
	e, unknown := lookupEntry(backend)
	if unknown == nil {
		e.open(ctx)
		if e.err != nil {
			return nil, fmt.Errorf("%s: %w", selector, e.err)
		}
		if !hasIdx {
			return e.devs[0], nil
		}
		for _, d := range e.devs {
			if d.Name() == selector {
				return d, nil
			}
		}
		if idx >= 0 && idx < len(e.devs) {
			return e.devs[idx], nil
		}
		return nil, fmt.Errorf("%s: %w: backend %s has %d devices", selector, ErrNoDevice, backend, len(e.devs))
	}
	// Not a backend name: a device name, or a prefix such as "tt-emu".
	for _, d := range Devices(ctx) {
		if d.Name() == selector || strings.HasPrefix(d.Name(), selector+":") {
			return d, nil
		}
	}
	return nil, unknown
}

func splitSelector(s string) (backend string, idx int, hasIdx bool) {
	b, n, ok := strings.Cut(s, ":")
	if !ok {
		return s, 0, false
	}
	i, err := strconv.Atoi(n)
	if err != nil {
		return b, -1, true
	}
	return b, i, true
}

// CloseAll closes every opened device. Backends stay registered but are not
// opened again in this process.
func CloseAll() error {
	regMu.RLock()
	defer regMu.RUnlock()
	var errs []error
	for _, e := range registry {
		if !e.opened.Load() {
			continue // never opened, or still opening: nothing to close yet
		}
		for _, d := range e.devs {
			errs = append(errs, d.Close())
		}
	}
	return errors.Join(errs...)
}
