package bundle

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
)

// implicitReferences are the devices a bundle without a host reference is
// checked against when --verify names none, in order: the C backend, and
// for a run on c the Tenstorrent emulator, an implementation of the
// program's other variant. A run is never checked against itself.
var implicitReferences = []string{"c", "tt-emu"}

// Verify checks res's outputs against the bundle's host reference (target ""
// with a reference in the bundle) or against a run on a reference device
// (target names it; "" without a reference means the first of
// implicitReferences that can run the program and is not the run's own
// device, and an error when there is none), and records the verdict in the
// Report.
// Integer outputs are compared exactly, in their own arithmetic; floats
// within the tolerance, a non-finite expected value matching only itself. A
// mismatch is a verdict (OK false), not an error.
func (r *Run) Verify(ctx context.Context, target string, res *Execution) (*VerifyReport, error) {
	b := r.B
	if len(b.Outputs) == 0 {
		return nil, fmt.Errorf("%w: bundle %s has no outputs to verify (\"outputs\": [])", backends.ErrInvalidArgument, b.Name)
	}
	rep := &VerifyReport{OK: true}
	want := map[int]expected{}
	ttMath := tenstorrentMath(res.Device) // the run or its reference computed as the card does
	if target == "" && b.Ref != nil {
		rep.Against = "host"
		w, err := r.hostReference()
		if err != nil {
			return nil, err
		}
		want[b.Ref.Out] = w
	} else {
		p, _, err := b.PartialProgram(r.Vals)
		if err != nil {
			return nil, err
		}
		bar := r.spinner("verify")
		sel, err := r.referenceDevice(ctx, p, target, res.Device)
		bar.Done()
		if err != nil {
			return nil, err
		}
		defer sel.Executable.Release()
		rep.Skipped = skipReports(sel.Skips)
		rep.Against = sel.Device.Name()
		ttMath = ttMath || tenstorrentMath(sel.Device)
		ref, err := r.Execute(ctx, sel.Device, sel.Executable, p, 0, false)
		if err != nil {
			return nil, fmt.Errorf("reference run on %s: %w", sel.Device.Name(), err)
		}
		for _, i := range b.Outputs {
			mem, err := r.host.Bytes(ref.Outputs[i])
			if err != nil {
				return nil, err
			}
			if want[i], err = decodeExpected(b.Params[i].DType, mem); err != nil {
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
		got, err := decodeExpected(prm.DType, mem)
		if err != nil {
			return nil, err
		}
		w := want[i]
		tol := b.Ref.Tolerance(prm.DType, r.Vals)
		if prm.DType == backends.F32 && ttMath && (b.Ref == nil || (b.Ref.Atol == nil && b.Ref.Rtol == nil)) {
			// The card's FPU sees Float32 operands as TF32 (10-bit mantissa)
			// and multiplies by fidelity phases: f32 results of a run on a
			// Tenstorrent device, or checked against one, are judged as
			// Tenstorrent math is (the bf16 tolerance), as on the emulator.
			tol = b.Ref.Tolerance(backends.BF16, r.Vals)
		}
		var c Comparison
		var pcc *PCCResult
		if w.exact && got.exact {
			tol = Tolerance{}
			c, err = CompareExact(prm.DType, got.ints, w.ints)
		} else {
			gf, wf := got.floats(prm.DType), w.floats(prm.DType)
			if c, err = Compare(gf, wf, tol); err == nil && b.Ref != nil && b.Ref.PCC != nil {
				var p PCCResult
				p, err = PCC(gf, wf, tol)
				pcc = &p
			}
		}
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", prm.Name, err)
		}
		ok := c.OK()
		if pcc != nil {
			// Judged by the correlation; by the tolerance too only when
			// the reference sets one.
			if b.Ref.Atol == nil && b.Ref.Rtol == nil {
				c.Mismatches, tol = pcc.NonFinite, Tolerance{}
			}
			ok = c.Mismatches == 0 && pcc.NonFinite == 0 && pcc.PCC >= *b.Ref.PCC
		}
		v := OutputVerdict{Name: prm.Name, Elems: c.Elems, MaxAbs: Number(c.MaxAbs), MaxRel: Number(c.MaxRel),
			Atol: Number(tol.Atol), Rtol: Number(tol.Rtol), Mismatches: c.Mismatches, Worst: c.Worst, OK: ok}
		if pcc != nil {
			pv, least := Number(pcc.PCC), Number(*b.Ref.PCC)
			v.PCC, v.MinPCC = &pv, &least
		}
		if c.Elems > 0 {
			v.Got, v.Want = Number(got.at(prm.DType, c.Worst)), Number(w.at(prm.DType, c.Worst))
		}
		rep.OK = rep.OK && v.OK
		rep.Outputs = append(rep.Outputs, v)
	}
	r.Report.Verify = rep
	return rep, nil
}

// expected is one output's values: exact integers for integer dtypes, else
// float64.
type expected struct {
	exact bool
	ints  []int64
	flt   []float64
}

func decodeExpected(dt backends.DType, mem []byte) (expected, error) {
	if isExact(dt) {
		v, err := ToInts(dt, mem)
		return expected{exact: true, ints: v}, err
	}
	v, err := ToFloat64(dt, mem)
	return expected{flt: v}, err
}

func (e expected) floats(dt backends.DType) []float64 {
	if !e.exact {
		return e.flt
	}
	out := make([]float64, len(e.ints))
	for i := range e.ints {
		out[i] = e.at(dt, i)
	}
	return out
}

func (e expected) at(dt backends.DType, i int) float64 {
	if !e.exact {
		return e.flt[i]
	}
	if dt.IsSigned() {
		return float64(e.ints[i])
	}
	return float64(uint64(e.ints[i]))
}

// hostReference computes the bundle's reference on the run's inputs: in the
// integer dtype's own arithmetic when the output and every operand are
// integers and the op has an integer form, else in float64.
func (r *Run) hostReference() (expected, error) {
	b := r.B
	outDT := b.Params[b.Ref.Out].DType
	if b.Ref.Op == "file" {
		n := Elems(r.Shapes[b.Ref.Out]) * int64(outDT.Size())
		mem := make([]byte, n)
		if err := ReadInput(b.Ref.Path, outDT, r.Shapes[b.Ref.Out], mem); err != nil {
			return expected{}, fmt.Errorf("reference file: %w", err)
		}
		return decodeExpected(outDT, mem)
	}
	exact := isExact(outDT)
	for _, a := range b.Ref.Args {
		exact = exact && isExact(b.Params[a].DType)
	}
	if exact {
		in, err := refOperands(r, ToInts)
		if err != nil {
			return expected{}, err
		}
		w, ok, err := b.Ref.ComputeExact(outDT, r.Vals, in)
		if err != nil {
			return expected{}, fmt.Errorf("host reference: %w", err)
		}
		if ok {
			return expected{exact: true, ints: w}, nil
		}
	}
	in, err := refOperands(r, ToFloat64)
	if err != nil {
		return expected{}, err
	}
	w, err := b.Ref.Compute(r.Vals, in)
	if err != nil {
		return expected{}, fmt.Errorf("host reference: %w", err)
	}
	return expected{flt: w}, nil
}

// refOperands are the reference's operands, the run's inputs decoded from
// their dtypes by decode, by param ordinal.
func refOperands[T any](r *Run, decode func(backends.DType, []byte) ([]T, error)) (map[int][]T, error) {
	in := map[int][]T{}
	for _, a := range r.B.Ref.Args {
		mem, err := r.host.Bytes(r.inputs[a])
		if err != nil {
			return nil, err
		}
		if in[a], err = decode(r.B.Params[a].DType, mem); err != nil {
			return nil, err
		}
	}
	return in, nil
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
	sel, p, err := r.Compile(ctx, opts.Device, append([]backends.SelectOption{backends.WithRepeat(opts.Repeat + 1)}, opts.Select...)...)
	if err != nil {
		return r, nil, err
	}
	defer sel.Executable.Release()
	r.Queue = opts.Queue
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

// referenceDevice compiles p on the device a run on ran is verified
// against: target, or with target "" the first of implicitReferences that
// can run p other than ran. Checking a run against itself proves nothing;
// asked for explicitly (--verify=DEV) it is allowed, as a determinism
// check.
func (r *Run) referenceDevice(ctx context.Context, p *backends.Program, target string, ran *backends.Device) (*backends.Selection, error) {
	if target != "" {
		sel, err := r.rt.Select(ctx, p, target)
		if err != nil {
			return nil, fmt.Errorf("reference device %s: %w", target, err)
		}
		return sel, nil
	}
	var why []string
	for _, name := range implicitReferences {
		sel, err := r.rt.Select(ctx, p, name)
		if err != nil {
			why = append(why, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if sel.Device == ran {
			_ = sel.Executable.Release()
			why = append(why, name+" is the device the run used")
			continue
		}
		return sel, nil
	}
	return nil, fmt.Errorf("%w: bundle %s has no reference, and no reference device can check the run on %s (%s): name another one with --verify=DEV",
		backends.ErrInvalidArgument, r.B.Name, ran.Name(), strings.Join(why, "; "))
}

// tenstorrentMath reports whether a run's device computes with the Tensix
// FPU's numerics: a Tenstorrent card or tt-emu (whose default numerics are
// the card's).
func tenstorrentMath(d *backends.Device) bool {
	return d != nil && d.Backend() == "tt"
}
