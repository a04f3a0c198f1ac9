// Package onedevice is the driver of a backend that has exactly one device
// (the C compiler, a CBLAS library): it reads the backend's config section,
// honours device_ids, and opens the device.
package onedevice

import (
	"context"
	"fmt"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
)

// Open decodes the config section name into a C, refuses when the section's
// device_ids leave out device 0, and otherwise returns the one device that
// open makes from the section and the runtime's host pool.
func Open[C any, D driver.Device](ctx context.Context, env *driver.Env, name string, open func(context.Context, C, *hostpool.Pool) (D, error)) ([]driver.Device, error) {
	var c C
	if err := driver.Section(env, name, &c); err != nil {
		return nil, err
	}
	if !driver.Common(env, name).Allows(0) {
		return nil, fmt.Errorf("%w: device_ids in the config excludes the %s device", driver.ErrNoDevice, name)
	}
	d, err := open(ctx, c, env.HostPool)
	if err != nil {
		return nil, err
	}
	return []driver.Device{d}, nil
}

// Driver is the driver of the one-device backend name: each Open is Open
// with open. Such a backend registers it in init and its tests call it.
func Driver[C any, D driver.Device](name string, open func(context.Context, C, *hostpool.Pool) (D, error)) driver.DriverFunc {
	return func(ctx context.Context, env *driver.Env) ([]driver.Device, error) {
		return Open(ctx, env, name, open)
	}
}

// Register registers the driver of the one-device backend name (Driver
// with open) and C as its config section, and returns the driver for the
// backend's tests. A backend calls it once, when its package initializes.
func Register[C any, D driver.Device](name string, open func(context.Context, C, *hostpool.Pool) (D, error)) driver.DriverFunc {
	d := Driver(name, open)
	driver.Register(name, d)
	var defaults C
	driver.RegisterSection(name, defaults)
	return d
}
