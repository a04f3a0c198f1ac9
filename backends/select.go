package backends

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Skip records a device (or a whole backend) that selection passed over, and
// why, in words a user can act on.
type Skip struct {
	Device string
	Reason string
}

func (s Skip) String() string { return s.Device + ": " + s.Reason }

// Candidates lists, in preference order, the devices that selector allows
// and that have a variant for p, with the reason for each one left out.
// "auto" (or "") allows every device: Tenstorrent cards first, then by
// compute, most first, and emulators last. Any other selector is as in Lookup, or a name prefix
// ("tt-emu" matches "tt-emu:0").
func Candidates(ctx context.Context, p *Program, selector string) ([]Device, []Skip, error) {
	var devs []Device
	var skips []Skip
	if selector == "" || selector == "auto" {
		for _, st := range Status(ctx) {
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
		d, err := Lookup(ctx, selector)
		if err != nil {
			return nil, nil, err
		}
		devs = []Device{d}
	}
	var out []Device
	for _, d := range devs {
		if p != nil && !p.HasVariant(d.Backend()) {
			skips = append(skips, Skip{Device: d.Name(), Reason: "no variant for " + d.Backend()})
			continue
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, skips, fmt.Errorf("%w for %q: %s", ErrNoDevice, selector, joinSkips(skips))
	}
	return out, skips, nil
}

// CompileOn compiles p on the first candidate that accepts it, falling back
// to the next on ErrNoVariant or a compile failure. The skips say why each
// earlier device was passed over.
func CompileOn(ctx context.Context, p *Program, selector string) (Device, Executable, []Skip, error) {
	if err := p.Validate(); err != nil {
		return nil, nil, nil, err
	}
	devs, skips, err := Candidates(ctx, p, selector)
	if err != nil {
		return nil, nil, skips, err
	}
	for _, d := range devs {
		exe, err := d.Compile(ctx, p)
		if err == nil {
			return d, exe, skips, nil
		}
		if ctx.Err() != nil {
			return nil, nil, skips, ctx.Err()
		}
		skips = append(skips, Skip{Device: d.Name(), Reason: err.Error()})
		if !errors.Is(err, ErrNoVariant) {
			Debug(DebugSched, "compile failed, trying the next device", "device", d.Name(), "err", err)
		}
	}
	return nil, nil, skips, fmt.Errorf("%w for %q: %s", ErrNoDevice, selector, joinSkips(skips))
}

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
