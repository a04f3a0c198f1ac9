package bundle

import (
	"fmt"
	"math"
	"testing"

	"github.com/zyxtt/zyxtt/backends"
)

// FuzzReference drives the reference and compare path with arbitrary ops,
// sizes and operand bits: nothing panics; an output equal to the reference
// always verifies; an output that differs from a finite expected value by
// far more than the tolerance, or from a non-finite one at all, never does.
func FuzzReference(f *testing.F) {
	f.Add(uint8(0), uint8(0), uint8(4), uint8(4), uint8(4), []byte{0, 0, 128, 127, 0, 0, 0, 0})
	f.Add(uint8(5), uint8(1), uint8(2), uint8(3), uint8(0), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add(uint8(9), uint8(2), uint8(1), uint8(1), uint8(1), []byte{0xff, 0xff, 0xff, 0x7f})
	ops := []string{"add", "sub", "mul", "div", "max", "min", "unary:exp", "unary:log", "unary:recip", "matmul", "unary:neg", "unary:square"}
	dtypes := []backends.DType{backends.F32, backends.I64, backends.U8, backends.F16, backends.I32}
	f.Fuzz(func(t *testing.T, opSel, dtSel, m, n, k uint8, data []byte) {
		op := ops[int(opSel)%len(ops)]
		dt := dtypes[int(dtSel)%len(dtypes)]
		m, n, k = m%9, n%9, k%9
		var aN, bN, outN uint64 = 16, 16, 16
		extra := ""
		if op == "matmul" {
			aN, bN, outN = uint64(m)*uint64(k), uint64(k)*uint64(n), uint64(m)*uint64(n)
			extra = fmt.Sprintf(`, "m": "%d", "n": "%d", "k": "%d"`, m, n, k)
		}
		args := `["a", "b"]`
		if len(op) > 6 && op[:6] == "unary:" {
			args = `["a"]`
		}
		manifest := fmt.Sprintf(`{"name": "f", "params": [
			{"name": "a", "kind": "global", "dtype": "%[1]s", "shape": ["%[2]d"]},
			{"name": "b", "kind": "global", "dtype": "%[1]s", "shape": ["%[3]d"]},
			{"name": "c", "kind": "global_mut", "dtype": "%[1]s", "shape": ["%[4]d"]}],
			"grid": ["1"], "reference": {"op": "%[5]s", "args": %[6]s, "out": "c"%[7]s}}`, dt, aN, bN, outN, op, args, extra)
		b, err := ParseManifest([]byte(manifest), "f.json")
		if err != nil {
			return // sizes of 0 and the like
		}
		vals := b.Defaults()
		shapes, err := b.Shapes(vals)
		if err != nil {
			return
		}
		if err := b.Ref.Check(b, vals, shapes); err != nil {
			return
		}
		size := dt.Size()
		operand := func(i int, n uint64) []byte {
			out := make([]byte, int(n)*size)
			for j := range out {
				if len(data) > 0 {
					out[j] = data[(j*7+i*13)%len(data)]
				}
			}
			return out
		}
		mem := map[int][]byte{0: operand(0, aN), 1: operand(1, bN)}
		if isExact(dt) {
			want, ok, err := b.Ref.ComputeExact(dt, vals, decodeAll(t, dt, mem, ToInts))
			if err != nil || !ok {
				return
			}
			c, err := CompareExact(dt, want, want)
			if err != nil || !c.OK() {
				t.Fatalf("an output equal to the reference fails: %v %+v", err, c)
			}
			if len(want) > 0 {
				got := append([]int64(nil), want...)
				got[0] = wrapInt(dt, uint64(got[0])+1)
				if c, _ := CompareExact(dt, got, want); c.Mismatches != 1 {
					t.Fatalf("an off-by-one passes: %+v", c)
				}
			}
			return
		}
		want, err := b.Ref.Compute(vals, decodeAll(t, dt, mem, ToFloat64))
		if err != nil {
			return
		}
		tol := b.Ref.Tolerance(dt, vals)
		c, err := Compare(want, want, tol)
		if err != nil || !c.OK() {
			t.Fatalf("an output equal to the reference fails: %v %+v", err, c)
		}
		for i, w := range want {
			got := append([]float64(nil), want...)
			switch {
			case math.IsNaN(w) || math.IsInf(w, 0):
				got[i] = 12345
			case math.Abs(w) < 1e300:
				got[i] = w + 1e6*(1+math.Abs(w))*(1+tol.Atol+tol.Rtol)
			default:
				continue
			}
			if c, _ := Compare(got, want, tol); c.Mismatches != 1 {
				t.Fatalf("element %d: got %g for want %g passes (tolerance %+v): %+v", i, got[i], w, tol, c)
			}
			break
		}
	})
}

// decodeAll decodes every buffer of mem from dt with decode.
func decodeAll[T any](t *testing.T, dt backends.DType, mem map[int][]byte, decode func(backends.DType, []byte) ([]T, error)) map[int][]T {
	t.Helper()
	in := map[int][]T{}
	for i, m := range mem {
		v, err := decode(dt, m)
		if err != nil {
			t.Fatal(err)
		}
		in[i] = v
	}
	return in
}
