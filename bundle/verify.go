package bundle

import (
	"context"
	"fmt"
	"sort"

	"github.com/zyxtt/zyxtt/backends"
)

// Verify checks res's outputs against the bundle's float64 host reference
// (target "" with a reference in the bundle) or against a run on a
// reference device (target names it; "" without a reference means c), and
// records the verdict in the Report. A mismatch is a verdict (OK false), not
// an error.
func (r *Run) Verify(ctx context.Context, target string, res *Execution) (*VerifyReport, error) {
	b := r.B
	rep := &VerifyReport{OK: true}
	want := map[int][]float64{}
	if target == "" && b.Ref != nil {
		rep.Against = "host"
		in := map[int][]float64{}
		for _, a := range b.Ref.Args {
			mem, err := r.host.Bytes(r.inputs[a])
			if err != nil {
				return nil, err
			}
			if in[a], err = ToFloat64(b.Params[a].DType, mem); err != nil {
				return nil, err
			}
		}
		w, err := b.Ref.Compute(r.Vals, in)
		if err != nil {
			return nil, fmt.Errorf("host reference: %w", err)
		}
		want[b.Ref.Out] = w
	} else {
		if target == "" {
			target = "c"
		}
		p, err := b.Program(r.Vals)
		if err != nil {
			return nil, err
		}
		bar := r.spinner("verify")
		sel, err := r.rt.Select(ctx, p, target)
		bar.Done()
		if err != nil {
			return nil, fmt.Errorf("reference device %s: %w", target, err)
		}
		defer sel.Executable.Release()
		rep.Skipped = skipReports(sel.Skips)
		rep.Against = sel.Device.Name()
		ref, err := r.Execute(ctx, sel.Device, sel.Executable, p, 0, false)
		if err != nil {
			return nil, fmt.Errorf("reference run on %s: %w", sel.Device.Name(), err)
		}
		for _, i := range b.Outputs {
			mem, err := r.host.Bytes(ref.Outputs[i])
			if err != nil {
				return nil, err
			}
			if want[i], err = ToFloat64(b.Params[i].DType, mem); err != nil {
				return nil, err
			}
		}
	}
	ids := make([]int, 0, len(want))
	for i := range want {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	for _, i := range ids {
		prm := b.Params[i]
		mem, err := r.host.Bytes(res.Outputs[i])
		if err != nil {
			return nil, err
		}
		got, err := ToFloat64(prm.DType, mem)
		if err != nil {
			return nil, err
		}
		tol := b.Ref.Tolerance(prm.DType, r.Vals)
		c, err := Compare(got, want[i], tol)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", prm.Name, err)
		}
		v := OutputVerdict{Name: prm.Name, Elems: c.Elems, MaxAbs: c.MaxAbs, MaxRel: c.MaxRel, Atol: tol.Atol, Rtol: tol.Rtol,
			Mismatches: c.Mismatches, Worst: c.Worst, OK: c.OK()}
		if c.Elems > 0 {
			v.Got, v.Want = got[c.Worst], want[i][c.Worst]
		}
		rep.OK = rep.OK && v.OK
		rep.Outputs = append(rep.Outputs, v)
	}
	r.Report.Verify = rep
	return rep, nil
}

// RunOnce is the whole pipeline of `zyx-tt run` for a Go program: prepare
// the inputs, compile on the device opts.Device picks, execute (with
// opts.Repeat timed launches), and verify when opts.Verify is set. The
// caller reads the Report and the outputs (Run.Output) and must Close the
// Run, which is returned whenever it was made, also with an error.
func (b *Bundle) RunOnce(ctx context.Context, rt *backends.Runtime, opts Options) (*Run, *Execution, error) {
	r, err := b.Prepare(ctx, rt, opts)
	if err != nil {
		return nil, nil, err
	}
	sel, p, err := r.Compile(ctx, opts.Device)
	if err != nil {
		return r, nil, err
	}
	defer sel.Executable.Release()
	res, err := r.Execute(ctx, sel.Device, sel.Executable, p, opts.Repeat, true)
	if err != nil {
		return r, nil, fmt.Errorf("%s on %s: %w", b.Name, sel.Device.Name(), err)
	}
	r.Record(res)
	if opts.Verify {
		if _, err := r.Verify(ctx, opts.VerifyOn, res); err != nil {
			return r, res, err
		}
	}
	return r, res, nil
}
