//go:build darwin || freebsd || linux || netbsd

package cblas_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/bundle"
	"github.com/zyxtt/zyxtt/backends/cblas"
)

// runBundle loads an example bundle, runs its variant for dev's backend on
// generated inputs and checks the outputs against the bundle's float64
// reference. This is what `zyx-tt run --verify` does.
func runBundle(t *testing.T, dev backends.Device, name string, set map[string]string) {
	t.Helper()
	ctx := context.Background()
	b, err := bundle.Load(filepath.Join("..", "..", "examples", name))
	require.NoError(t, err)
	vals, err := b.VarValues(set)
	require.NoError(t, err)
	p, err := b.Program(dev.Backend(), vals)
	require.NoError(t, err)
	shapes, err := b.Shapes(vals)
	require.NoError(t, err)
	exe, err := dev.Compile(ctx, p)
	require.NoError(t, err)
	defer exe.Release()

	pool := dev.Pool()
	host, ok := pool.(backends.HostMemory)
	require.True(t, ok, "the %s device computes on host memory", dev.Name())
	args := make([]backends.LaunchArg, len(b.Params))
	inputs := map[int][]float64{}
	for i, prm := range b.Params {
		if !prm.Kind.IsBuffer() {
			vi, ok := b.VarIndex(prm.Name)
			require.True(t, ok)
			args[i] = backends.VarArg(vals[vi])
			continue
		}
		id, err := pool.Alloc(ctx, bundle.Elems(shapes[i])*int64(prm.DType.Size()))
		require.NoError(t, err)
		defer pool.Release(id)
		args[i] = backends.BufArg(id)
		mem, err := host.Bytes(id)
		require.NoError(t, err)
		spec := b.Inputs[i]
		if spec == "" {
			spec = "random"
		}
		gen, err := bundle.ParseGen(spec)
		require.NoError(t, err)
		require.NoError(t, bundle.Fill(mem, prm.DType, gen, uint64(i)))
		inputs[i], err = bundle.ToFloat64(prm.DType, mem)
		require.NoError(t, err)
	}
	require.NoError(t, exe.Launch(ctx, args))
	want, err := b.Ref.Compute(vals, inputs)
	require.NoError(t, err)
	out := b.Outputs[0]
	mem, err := host.Bytes(args[out].Buffer)
	require.NoError(t, err)
	got, err := bundle.ToFloat64(b.Params[out].DType, mem)
	require.NoError(t, err)
	cmp, err := bundle.Compare(got, want, b.Ref.Tolerance(b.Params[out].DType, vals))
	require.NoError(t, err)
	require.True(t, cmp.OK(), "%s on %s: %d of %d elements outside tolerance (worst at %d: got %g, want %g)",
		name, dev.Name(), cmp.Mismatches, cmp.Elems, cmp.Worst, got[cmp.Worst], want[cmp.Worst])
}

// TestExampleBundles runs the matmul example's GEMM variant from its bundle
// files.
func TestExampleBundles(t *testing.T) {
	dev, err := cblas.Open(context.Background(), cblas.Config{})
	if err != nil {
		t.Skipf("no CBLAS library: %v", err)
	}
	for _, set := range []map[string]string{{"m": "37", "n": "41", "k": "29"}, nil} {
		t.Run("matmul", func(t *testing.T) { runBundle(t, dev, "matmul", set) })
	}
}
