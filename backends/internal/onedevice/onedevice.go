// Package onedevice is the driver of a backend that has exactly one device
// (the C compiler, a CBLAS library): it reads the backend's config section,
// honours device_ids, and opens the device.
package onedevice

import (
	"context"
	"fmt"

	"github.com/zyxtt/zyxtt/backends"
)

// Open decodes the config section name into a C, refuses when the section's
// device_ids leave out device 0, and otherwise returns the one device that
// open makes from the section.
func Open[C any, D backends.Device](ctx context.Context, cfg *backends.Config, name string, open func(context.Context, C) (D, error)) ([]backends.Device, error) {
	var c C
	if err := cfg.Section(name, &c); err != nil {
		return nil, err
	}
	if !cfg.Common(name).Allows(0) {
		return nil, fmt.Errorf("%w: device_ids in the config excludes the %s device", backends.ErrNoDevice, name)
	}
	d, err := open(ctx, c)
	if err != nil {
		return nil, err
	}
	return []backends.Device{d}, nil
}
