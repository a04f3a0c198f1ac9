package bundle

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/zyxtt/zyxtt/tt"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

func TestPCC(t *testing.T) {
	tol := Tolerance{1e-5, 1e-5}
	for _, tc := range []struct {
		name      string
		got, want []float64
		pcc       float64
		nonFinite int64
	}{
		{"equal", []float64{1, 2, 3}, []float64{1, 2, 3}, 1, 0},
		{"linear", []float64{3, 5, 7}, []float64{1, 2, 3}, 1, 0},
		{"reversed", []float64{3, 2, 1}, []float64{1, 2, 3}, -1, 0},
		// means 2.5; deviations (-1.5, -0.5, 0.5, 1.5) and (-1.5, 0.5,
		// -0.5, 1.5): covariance 4, variances 5 and 5.
		{"swap", []float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8, 0},
		// The NaN pair is left out: (2, 3, 4) against (3, 2, 4) has
		// deviations (-1, 0, 1) and (0, -1, 1): covariance 1, variances 2.
		{"expected NaN matched", []float64{math.NaN(), 2, 3, 4}, []float64{math.NaN(), 3, 2, 4}, 0.5, 0},
		{"NaN where finite", []float64{math.NaN(), 2, 3}, []float64{1, 2, 3}, 1, 1},
		{"Inf not matched", []float64{1, 2, 3}, []float64{math.Inf(1), 2, 3}, 1, 1},
		{"constant, within tolerance", []float64{5, 5, 5}, []float64{5, 5, 5.00001}, 1, 0},
		{"constant, off", []float64{5, 5, 5}, []float64{3, 3, 3}, 0, 0},
		{"one side constant", []float64{5, 5, 5}, []float64{1, 2, 3}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := PCC(tc.got, tc.want, tol)
			require.NoError(t, err)
			require.InDelta(t, tc.pcc, r.PCC, 1e-12)
			require.Equal(t, tc.nonFinite, r.NonFinite)
		})
	}
	_, err := PCC([]float64{1}, []float64{1, 2}, tol)
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
}

// verifyRun prepares a run of a bundle with a C variant (never compiled)
// and returns a function that verifies an output y of the given values.
func verifyRun(t *testing.T, reference string) (*Run, func(y []float32) *VerifyReport) {
	t.Helper()
	manifest := `{"name": "v", "params": [
	  {"name": "x", "kind": "global", "dtype": "f32", "shape": [8]},
	  {"name": "y", "kind": "global_mut", "dtype": "f32", "shape": [8]}],
	 "inputs": {"x": "iota"}, "reference": ` + reference + `}`
	_, r := loadBare(t, manifest, nil)
	ctx := context.Background()
	return r, func(y []float32) *VerifyReport {
		id, err := r.alloc(ctx, r.host, 32)
		require.NoError(t, err)
		mem, err := r.host.Bytes(id)
		require.NoError(t, err)
		for i, v := range y {
			binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(v))
		}
		rep, err := r.Verify(ctx, "", &Execution{Outputs: map[int]backends.BufferID{1: id}})
		require.NoError(t, err)
		return rep
	}
}

func TestVerifyIdentity(t *testing.T) {
	_, verify := verifyRun(t, `{"op": "identity", "args": ["x"], "out": "y"}`)
	rep := verify([]float32{0, 1, 2, 3, 4, 5, 6, 7})
	require.True(t, rep.OK)
	require.Equal(t, Number(0), rep.Outputs[0].Atol) // a copy is exact
	require.Nil(t, rep.Outputs[0].PCC)
	rep = verify([]float32{0, 1, 2, 3, 4, 5, 6, math.Nextafter32(7, 8)})
	require.False(t, rep.OK)
	require.Equal(t, int64(1), rep.Outputs[0].Mismatches)
	require.Equal(t, 7, rep.Outputs[0].Worst)
}

func TestVerifyPCC(t *testing.T) {
	_, verify := verifyRun(t, `{"op": "identity", "args": ["x"], "out": "y", "pcc": 0.99}`)
	// 2x + 1 correlates perfectly with x: accepted although no element
	// is within any tolerance.
	rep := verify([]float32{1, 3, 5, 7, 9, 11, 13, 15})
	o := rep.Outputs[0]
	require.True(t, rep.OK)
	require.InDelta(t, 1, float64(*o.PCC), 1e-12)
	require.Equal(t, Number(0.99), *o.MinPCC)
	require.Equal(t, int64(0), o.Mismatches)
	// Reversed: PCC -1.
	rep = verify([]float32{7, 6, 5, 4, 3, 2, 1, 0})
	require.False(t, rep.OK)
	require.InDelta(t, -1, float64(*rep.Outputs[0].PCC), 1e-12)
	// A NaN where the reference is finite fails whatever the correlation.
	rep = verify([]float32{0, 1, 2, 3, 4, 5, 6, float32(math.NaN())})
	require.False(t, rep.OK)
	require.Equal(t, int64(1), rep.Outputs[0].Mismatches)

	// With atol set as well, both must hold.
	_, verify = verifyRun(t, `{"op": "identity", "args": ["x"], "out": "y", "pcc": 0.99, "atol": 0.5, "rtol": 0}`)
	require.True(t, verify([]float32{0.25, 1, 2, 3, 4, 5, 6, 7.25}).OK)
	rep = verify([]float32{1, 3, 5, 7, 9, 11, 13, 15})
	require.False(t, rep.OK)
	require.Equal(t, int64(8), rep.Outputs[0].Mismatches)
}

func TestReferencePCCErrors(t *testing.T) {
	for _, tc := range []struct{ ref, substr string }{
		{`{"op": "identity", "args": ["x"], "out": "y", "pcc": 1.5}`, "reference.pcc: 1.5: want a correlation above 0 and at most 1"},
		{`{"op": "identity", "args": ["x"], "out": "y", "pcc": 0}`, "reference.pcc: 0:"},
		{`{"op": "identity", "args": ["x", "x"], "out": "y"}`, "reference.args: op identity takes 1 args, got 2"},
	} {
		manifest := `{"name": "v", "params": [{"name": "x", "kind": "global", "dtype": "f32", "shape": [8]},
		  {"name": "y", "kind": "global_mut", "dtype": "f32", "shape": [8]}], "reference": ` + tc.ref + `}`
		_, err := ParseManifest([]byte(manifest), "m.json")
		require.ErrorContains(t, err, tc.substr)
	}
}

func TestIdentityExactIntegers(t *testing.T) {
	r := &Reference{Op: "identity", Args: []int{0}}
	out, ok, err := r.ComputeExact(backends.U8, nil, map[int][]int64{0: {1, 255, 256, -1}})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []int64{1, 255, 0, 255}, out) // wrapped to the output's width
}

// allocExe is a dummy executable that allocates its params itself, as a
// Tenstorrent executable does (driver.ParamAllocator).
type allocExe struct {
	driver.Executable
	pool driver.Pool
	mu   sync.Mutex
	got  map[int]int64
}

// allocDevice is the dummy device with executables that allocate their
// params (allocExe).
type allocDevice struct {
	*dummy.Device
	exe *allocExe
}

func (d *allocDevice) Compile(ctx context.Context, p *backends.Program) (driver.Executable, error) {
	inner, err := d.Device.Compile(ctx, p)
	if err != nil {
		return nil, err
	}
	d.exe = &allocExe{Executable: inner, pool: d.Device.Pool(), got: map[int]int64{}}
	return d.exe, nil
}

func (e *allocExe) AllocParam(ctx context.Context, param int, hostBytes int64) (backends.BufferID, error) {
	e.mu.Lock()
	e.got[param] = hostBytes
	e.mu.Unlock()
	return e.pool.Alloc(ctx, hostBytes)
}

func TestExecuteAllocParam(t *testing.T) {
	ctx := context.Background()
	manifest := `{"name": "v", "vars": [{"name": "n", "dtype": "u32", "default": 8}], "params": [
	  {"name": "x", "kind": "global", "dtype": "f32", "shape": ["n"]},
	  {"name": "y", "kind": "global_mut", "dtype": "bf16", "shape": ["n", 2]},
	  {"name": "n", "kind": "variable"}], "grid": [1]}`
	b, r := loadBare(t, manifest, nil)
	dd, err := dummy.New(dummy.Config{Memory: 1 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { dd.Close() })
	ad := &allocDevice{Device: dd}
	dev := backends.DeviceOf(ad)
	res := compileExecute(t, ctx, dev, b, r)
	require.Equal(t, map[int]int64{0: 32, 1: 32}, ad.exe.got) // 8 f32, 16 bf16
	// The upload went to the buffer AllocParam made.
	in, err := r.Input(0)
	require.NoError(t, err)
	dm := make([]byte, 32)
	require.NoError(t, dev.Pool().Read(ctx, firstDummyBuffer(t, r, dev), 0, dm))
	require.Equal(t, in, dm)
	require.Contains(t, res.Outputs, 1)
	require.Equal(t, 2, dd.Memory().Live())
}

// firstDummyBuffer is the first buffer the run owns in the device's pool.
func firstDummyBuffer(t *testing.T, r *Run, dev *backends.Device) backends.BufferID {
	for _, o := range r.owned {
		if o.pool == dev.Pool() {
			return o.id
		}
	}
	t.Fatal("the run owns no buffer of the device")
	return 0
}

func TestVerifyFileReference(t *testing.T) {
	ctx := context.Background()
	want := make([]byte, 16)
	for i, v := range []float32{1, 2, 3, 4} {
		binary.LittleEndian.PutUint32(want[4*i:], math.Float32bits(v))
	}
	manifest := `{"name": "v", "params": [{"name": "y", "kind": "global_mut", "dtype": "f32", "shape": [4]}],
	 "reference": {"op": "file", "path": "golden/want.bin", "out": "y", "atol": 0, "rtol": 0}}`
	_, r := loadBare(t, manifest, map[string]string{"golden/want.bin": string(want)})
	for _, tc := range []struct {
		got        []float32
		mismatches int64
	}{{[]float32{1, 2, 3, 4}, 0}, {[]float32{1, 2, 3, 5}, 1}} {
		id, err := r.alloc(ctx, r.host, 16)
		require.NoError(t, err)
		mem, err := r.host.Bytes(id)
		require.NoError(t, err)
		for i, v := range tc.got {
			binary.LittleEndian.PutUint32(mem[4*i:], math.Float32bits(v))
		}
		rep, err := r.Verify(ctx, "", &Execution{Outputs: map[int]backends.BufferID{0: id}})
		require.NoError(t, err)
		require.Equal(t, tc.mismatches == 0, rep.OK)
		require.Equal(t, tc.mismatches, rep.Outputs[0].Mismatches)
	}

	// The file must be there, and of the output's size when read.
	_, err := Load(cBundle(t, manifest, nil))
	require.ErrorContains(t, err, "reference.path:")
	_, err = ParseManifest([]byte(strings.Replace(manifest, `"path": "golden/want.bin", `, ``, 1)), "m.json")
	require.ErrorContains(t, err, "reference.path: missing")
}

func TestNoOutputs(t *testing.T) {
	ctx := context.Background()
	dir := writeBundle(t, map[string]string{"manifest.json": `{"name": "hello", "params": [], "outputs": []}`,
		"tt.json": `{"kernels": [{"processor": "riscv_0", "cores": [0, 0], "source": "k.cpp"}]}`, "k.cpp": "// prints"})
	b, err := Load(dir)
	require.NoError(t, err)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	require.Empty(t, p.Params)
	require.Len(t, tt.ProgramOf(p).Kernels, 1)
	r := prepareBare(t, b)
	_, err = r.Verify(ctx, "", &Execution{})
	require.ErrorContains(t, err, "has no outputs to verify")
	// Without "outputs": [] a program still needs params and outputs.
	_, err = ParseManifest([]byte(`{"name": "hello", "params": []}`), "m.json")
	require.ErrorContains(t, err, "params: missing")
}

func TestSoftplus(t *testing.T) {
	r := &Reference{Op: "unary:softplus", Args: []int{0}}
	out, err := r.Compute(nil, map[int][]float64{0: {0, 1, -30}})
	require.NoError(t, err)
	require.InDelta(t, math.Ln2, out[0], 1e-15)
	require.InDelta(t, 1.3132616875182228, out[1], 1e-15)
	require.InDelta(t, 9.357622968840175e-14, out[2], 1e-25)
}

// unitPool is a dummy pool whose transfers must be whole units, as a
// Tenstorrent tile-layout buffer's are (tt.Pool.TransferUnit).
type unitPool struct {
	*dummy.Pool
	unit  int64
	moved []int64 // every transfer's length
	mu    sync.Mutex
}

func (p *unitPool) TransferUnit(backends.BufferID) (int64, error) { return p.unit, nil }

func (p *unitPool) check(id backends.BufferID, off int64, n int) error {
	size, err := p.Size(id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.moved = append(p.moved, int64(n))
	p.mu.Unlock()
	if off%p.unit != 0 || (int64(n)%p.unit != 0 && off+int64(n) != size) {
		return fmt.Errorf("%w: [%d,+%d) is not whole units of %d", backends.ErrInvalidArgument, off, n, p.unit)
	}
	return nil
}

func (p *unitPool) Write(ctx context.Context, id backends.BufferID, off int64, src []byte) error {
	if err := p.check(id, off, len(src)); err != nil {
		return err
	}
	return p.Pool.Write(ctx, id, off, src)
}

func (p *unitPool) Read(ctx context.Context, id backends.BufferID, off int64, dst []byte) error {
	if err := p.check(id, off, len(dst)); err != nil {
		return err
	}
	return p.Pool.Read(ctx, id, off, dst)
}

type unitDevice struct {
	*dummy.Device
	pool *unitPool
}

func (d *unitDevice) Pool() driver.Pool { return d.pool }

// TestExecuteTransferUnits: copies to and from a pool that moves data in
// units (tile rows) are chunked in whole units, also past one staging chunk.
func TestExecuteTransferUnits(t *testing.T) {
	ctx := context.Background()
	// 96 units of 196608 bytes (32 rows of 3072 bf16) is 18 MiB: more than a
	// 16 MiB staging chunk, which is not a whole number of units.
	manifest := `{"name": "v", "params": [{"name": "x", "kind": "global", "dtype": "bf16", "shape": [3072, 3072]},
	  {"name": "y", "kind": "global_mut", "dtype": "bf16", "shape": [3072, 3072]}], "grid": [1]}`
	b, r := loadBare(t, manifest, nil)
	dd, err := dummy.New(dummy.Config{Memory: 64 << 20})
	require.NoError(t, err)
	t.Cleanup(func() { dd.Close() })
	ud := &unitDevice{dd, &unitPool{Pool: dd.Memory(), unit: 196608}}
	dev := backends.DeviceOf(ud)
	res := compileExecute(t, ctx, dev, b, r)
	require.NotEmpty(t, ud.pool.moved)
	for _, n := range ud.pool.moved {
		require.Zero(t, n%196608, "a transfer of %d bytes", n)
	}
	// The data made the round trip: y was uploaded (zeros) and read back.
	out, err := r.Output(res, 1)
	require.NoError(t, err)
	require.Len(t, out, 3072*3072*2)
}

// cBundle writes a bundle of manifest with an empty C kernel and the extra
// files, and gives its directory.
func cBundle(t testing.TB, manifest string, extra map[string]string) string {
	files := map[string]string{"manifest.json": manifest, "c.json": `{"source": "k.c", "entry": "k"}`, "k.c": ""}
	maps.Copy(files, extra)
	return writeBundle(t, files)
}

// loadBare loads cBundle(manifest, extra) and prepares it with prepareBare.
// compileExecute compiles b's program for r's values on dev and executes r
// once; the executable is released when the test ends, before cleanups the
// test registered earlier (its device's Close).
func compileExecute(t *testing.T, ctx context.Context, dev *backends.Device, b *Bundle, r *Run) *Execution {
	t.Helper()
	p, err := b.Program(r.Vals)
	require.NoError(t, err)
	exe, err := dev.Compile(ctx, p)
	require.NoError(t, err)
	t.Cleanup(func() { exe.Release() })
	res, err := r.Execute(ctx, dev, exe, p, 0, false)
	require.NoError(t, err)
	return res
}

func loadBare(t testing.TB, manifest string, extra map[string]string) (*Bundle, *Run) {
	t.Helper()
	b, err := Load(cBundle(t, manifest, extra))
	require.NoError(t, err)
	return b, prepareBare(t, b)
}

// prepareBare prepares b on a runtime with no backends (host-side work
// only); the run and the runtime are closed when the test ends.
func prepareBare(t testing.TB, b *Bundle) *Run {
	t.Helper()
	ctx := context.Background()
	rt, err := backends.Open(ctx, backends.Options{Config: &backends.Config{}, Backends: []string{}})
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close() })
	r, err := b.Prepare(ctx, rt, Options{})
	require.NoError(t, err)
	t.Cleanup(r.Close)
	return r
}

// A matmul reference, float and exact, transposed or not, against products
// worked by hand: [1 2 3; 4 5 6]·[7 8; 9 10; 11 12] = [58 64; 139 154],
// batched twice (the second batch doubles a), and wrapped to i8 exactly.
func TestMatmulReferenceByHand(t *testing.T) {
	dim := func(v uint64) *backends.GwsDim { d := backends.ConstDim(v); return &d }
	a := []float64{1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}
	aT := []float64{1, 4, 2, 5, 3, 6, 2, 8, 4, 10, 6, 12}
	b := []float64{7, 8, 9, 10, 11, 12, 7, 8, 9, 10, 11, 12}
	bT := []float64{7, 9, 11, 8, 10, 12, 7, 9, 11, 8, 10, 12}
	want := []float64{58, 64, 139, 154, 116, 128, 278, 308}
	ints := func(v []float64) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x)
		}
		return out
	}
	for _, tc := range []struct {
		name           string
		transA, transB bool
		a, b           []float64
	}{{"plain", false, false, a, b}, {"trans_a", true, false, aT, b}, {"trans_b", false, true, a, bT}, {"both", true, true, aT, bT}} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reference{Op: "matmul", Args: []int{0, 1}, Out: 2, M: dim(2), N: dim(2), K: dim(3), Batch: dim(2), TransA: tc.transA, TransB: tc.transB}
			got, err := r.Compute(nil, map[int][]float64{0: tc.a, 1: tc.b})
			require.NoError(t, err)
			require.Equal(t, want, got)
			exact, ok, err := r.ComputeExact(backends.I8, nil, map[int][]int64{0: ints(tc.a), 1: ints(tc.b)})
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, []int64{58, 64, 139 - 256, 154 - 256, 116, 128 - 256, 278 - 256, 308 - 256}, exact)
		})
	}
}
