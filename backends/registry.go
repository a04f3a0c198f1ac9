package backends

import (
	"context"
	"sync"

	"github.com/zyxtt/zyxtt/internal/registry"
)

// The package-level functions below work on a default Runtime, as
// http.Get works on http.DefaultClient. It is made on first use with the
// config file and a host pool of its own; CloseAll closes it, and the next
// call makes a fresh one.
var defaultRT struct {
	sync.Mutex
	rt *Runtime
}

// Default is the default Runtime, made on first use.
func Default() (*Runtime, error) {
	defaultRT.Lock()
	defer defaultRT.Unlock()
	if defaultRT.rt == nil {
		rt, err := Open(context.Background(), Options{})
		if err != nil {
			return nil, err
		}
		defaultRT.rt = rt
	}
	return defaultRT.rt, nil
}

// CloseAll closes the default Runtime: every device it opened and its host
// pool. The next package-level call opens backends afresh.
func CloseAll() error {
	defaultRT.Lock()
	rt := defaultRT.rt
	defaultRT.rt = nil
	defaultRT.Unlock()
	if rt == nil {
		return nil
	}
	return rt.Close()
}

// Registered lists the registered backend names, sorted.
func Registered() []string { return registry.Names() }

// Backend opens (once) and reports one backend of the default Runtime.
func Backend(ctx context.Context, name string) (BackendStatus, error) {
	rt, err := Default()
	if err != nil {
		return BackendStatus{}, err
	}
	return rt.Backend(ctx, name)
}

// Status opens every backend of the default Runtime and reports each.
func Status(ctx context.Context) []BackendStatus {
	rt, err := Default()
	if err != nil {
		return []BackendStatus{{Name: "runtime", Err: err}}
	}
	return rt.Status(ctx)
}

// Devices lists every device of the default Runtime.
func Devices(ctx context.Context) []*Device {
	rt, err := Default()
	if err != nil {
		return nil
	}
	return rt.Devices(ctx)
}

// Pools lists every pool of the default Runtime with its free bytes.
func Pools(ctx context.Context) []PoolStatus {
	rt, err := Default()
	if err != nil {
		return nil
	}
	return rt.Pools(ctx)
}

// Lookup finds one device of the default Runtime by selector (see
// Runtime.Lookup).
func Lookup(ctx context.Context, selector string) (*Device, error) {
	rt, err := Default()
	if err != nil {
		return nil, err
	}
	return rt.Lookup(ctx, selector)
}

// HostPool is the default Runtime's host pool.
func HostPool() (*Pool, error) {
	rt, err := Default()
	if err != nil {
		return nil, err
	}
	return rt.HostPool()
}
