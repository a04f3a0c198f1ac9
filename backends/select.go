package backends

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zyxtt/zyxtt/internal/zlog"
)

// Skip records a device (or a whole backend) that selection passed over, and
// why, in words a user can act on.
type Skip struct {
	Device string
	Reason string
}

func (s Skip) String() string { return s.Device + ": " + s.Reason }

// NoDeviceError is the error of a selection that found no device: it wraps
// ErrNoDevice and lists why each device was passed over.
type NoDeviceError struct {
	Selector string
	Skips    []Skip
}

func (e *NoDeviceError) Error() string {
	return fmt.Sprintf("%s for %q: %s", ErrNoDevice, e.Selector, joinSkips(e.Skips))
}

func (e *NoDeviceError) Unwrap() error { return ErrNoDevice }

// Selection is what Select chose: the device, the program compiled on it,
// and the devices passed over before it, with the reasons.
type Selection struct {
	Device     Device
	Executable Executable
	Skips      []Skip
}

// Candidates lists, in preference order, the devices that selector allows
// and that have a variant for p, with the reason for each one left out.
// "auto" (or "") allows every device: Tenstorrent cards first, then by
// compute, most first, and emulators last. Any other selector is as in
// Lookup. When no device is left the error is a *NoDeviceError.
func (r *Runtime) Candidates(ctx context.Context, p *Program, selector string) ([]Device, []Skip, error) {
	var devs []Device
	var skips []Skip
	if selector == "" || selector == "auto" {
		for _, st := range r.Status(ctx) {
			if st.Err != nil {
				skips = append(skips, Skip{Device: st.Name, Reason: st.Err.Error()})
				continue
			}
			devs = append(devs, st.Devices...)
		}
		sort.SliceStable(devs, func(i, j int) bool {
			ii, ij := devs[i].Info(), devs[j].Info()
			ti, tj := ii.Tenstorrent && !ii.Emulated, ij.Tenstorrent && !ij.Emulated
			if ti != tj {
				return ti
			}
			if ii.Emulated != ij.Emulated {
				return ij.Emulated
			}
			return ii.Compute > ij.Compute
		})
	} else {
		d, err := r.Lookup(ctx, selector)
		if err != nil {
			return nil, nil, err
		}
		devs = []Device{d}
	}
	var out []Device
	for _, d := range devs {
		if p != nil && !p.Accepts(d.Info().Formats) {
			skips = append(skips, Skip{Device: d.Name(), Reason: noVariantReason(d)})
			continue
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, skips, &NoDeviceError{Selector: selector, Skips: skips}
	}
	return out, skips, nil
}

// Select compiles p on the first candidate that accepts it, falling back to
// the next on ErrNoVariant or a compile failure, and says why each earlier
// device was passed over. When no device compiles it the error is a
// *NoDeviceError.
func (r *Runtime) Select(ctx context.Context, p *Program, selector string) (*Selection, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	devs, skips, err := r.Candidates(ctx, p, selector)
	if err != nil {
		return nil, err
	}
	for _, d := range devs {
		exe, err := d.Compile(ctx, p)
		if err == nil {
			return &Selection{Device: d, Executable: exe, Skips: skips}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		skips = append(skips, Skip{Device: d.Name(), Reason: err.Error()})
		if !errors.Is(err, ErrNoVariant) {
			zlog.Debug(zlog.Sched, "compile failed, trying the next device", "device", d.Name(), "err", err)
		}
	}
	return nil, &NoDeviceError{Selector: selector, Skips: skips}
}

// CompileOn compiles p on the device selector picks (see Select).
func (r *Runtime) CompileOn(ctx context.Context, p *Program, selector string) (Device, Executable, error) {
	s, err := r.Select(ctx, p, selector)
	if err != nil {
		return nil, nil, err
	}
	return s.Device, s.Executable, nil
}

// Candidates is Runtime.Candidates on the default Runtime.
func Candidates(ctx context.Context, p *Program, selector string) ([]Device, []Skip, error) {
	rt, err := Default()
	if err != nil {
		return nil, nil, err
	}
	return rt.Candidates(ctx, p, selector)
}

// Select is Runtime.Select on the default Runtime.
func Select(ctx context.Context, p *Program, selector string) (*Selection, error) {
	rt, err := Default()
	if err != nil {
		return nil, err
	}
	return rt.Select(ctx, p, selector)
}

// CompileOn is Runtime.CompileOn on the default Runtime.
func CompileOn(ctx context.Context, p *Program, selector string) (Device, Executable, error) {
	rt, err := Default()
	if err != nil {
		return nil, nil, err
	}
	return rt.CompileOn(ctx, p, selector)
}

// noVariantReason says that a program has no variant a device prepares
// (DeviceInfo.Formats lists what it does).
func noVariantReason(d Device) string { return "no variant for " + d.Backend() }

func joinSkips(s []Skip) string {
	if len(s) == 0 {
		return "no devices"
	}
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = k.String()
	}
	return strings.Join(parts, "; ")
}
