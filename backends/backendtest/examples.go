package backendtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/bundle"
)

// LoadExample loads the bundle examples/<name>.
func LoadExample(t testing.TB, name string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Load(filepath.Join(ExamplesDir(t), name))
	require.NoError(t, err)
	return b
}

// ExampleProgram is the example's program for backend with the vars'
// defaults. Every var of vadd, unary and matmul is a Variable param, so the
// program serves any size.
func ExampleProgram(t testing.TB, backend, name string) *backends.Program {
	t.Helper()
	b := LoadExample(t, name)
	p, err := b.Program(backend, b.Defaults())
	require.NoError(t, err)
	return p
}

// Example is one run of an example bundle.
type Example struct {
	// Name is the bundle: a directory under examples/.
	Name string
	// Set overrides var defaults (var name → value text), as --set does.
	Set map[string]string
	// Edit, when set, changes the program before it is compiled: a test
	// drops one of two variants the backend could take, for example.
	Edit func(*backends.Program)
}

// RunExamples runs each example on dev as a subtest named after it.
func RunExamples(t *testing.T, dev backends.Device, examples ...Example) {
	t.Helper()
	for _, ex := range examples {
		t.Run(ex.Name, func(t *testing.T) { RunExample(t, dev, ex) })
	}
}

// RunExample loads the example's bundle, runs its variant for dev's backend
// on generated inputs and requires the output to match the bundle's
// float64 reference within its tolerance, as `zyx-tt run --verify` does.
// Every buffer param is filled (from the bundle's input spec, else random),
// so an output the program fails to write does not pass by chance. Host
// memory pools are filled and read in place, others through Write and
// Read. It returns the comparison for the caller to log.
func RunExample(t testing.TB, dev backends.Device, ex Example) bundle.Comparison {
	t.Helper()
	ctx := context.Background()
	b := LoadExample(t, ex.Name)
	require.NotNil(t, b.Ref, "example %s has a reference", ex.Name)
	vals, err := b.VarValues(ex.Set)
	require.NoError(t, err)
	p, err := b.Program(dev.Backend(), vals)
	require.NoError(t, err)
	if ex.Edit != nil {
		ex.Edit(p)
	}
	shapes, err := b.Shapes(vals)
	require.NoError(t, err)
	exe, err := dev.Compile(ctx, p)
	require.NoError(t, err)
	defer exe.Release()

	pool := dev.Pool()
	host, inPlace := pool.(backends.HostMemory)
	args := make([]backends.LaunchArg, len(b.Params))
	inputs := map[int][]float64{}
	for i, prm := range b.Params {
		if !prm.Kind.IsBuffer() {
			vi, ok := b.VarIndex(prm.Name)
			require.True(t, ok, "variable param %s has a var", prm.Name)
			args[i] = backends.VarArg(vals[vi])
			continue
		}
		size := bundle.Elems(shapes[i]) * int64(prm.DType.Size())
		id, err := pool.Alloc(ctx, size)
		require.NoError(t, err)
		defer pool.Release(id)
		args[i] = backends.BufArg(id)
		var mem []byte
		if inPlace {
			mem, err = host.Bytes(id)
			require.NoError(t, err)
		} else {
			mem = make([]byte, size)
		}
		spec := b.Inputs[i]
		if spec == "" {
			spec = "random"
		}
		gen, err := bundle.ParseGen(spec)
		require.NoError(t, err)
		require.NoError(t, bundle.Fill(mem, prm.DType, gen, uint64(i)))
		inputs[i], err = bundle.ToFloat64(prm.DType, mem)
		require.NoError(t, err)
		if !inPlace {
			require.NoError(t, pool.Write(ctx, id, 0, mem))
		}
	}
	require.NoError(t, exe.Launch(ctx, args))
	want, err := b.Ref.Compute(vals, inputs)
	require.NoError(t, err)
	out := b.Outputs[0]
	var mem []byte
	if inPlace {
		mem, err = host.Bytes(args[out].Buffer)
		require.NoError(t, err)
	} else {
		size, err := pool.Size(args[out].Buffer)
		require.NoError(t, err)
		mem = make([]byte, size)
		require.NoError(t, pool.Read(ctx, args[out].Buffer, 0, mem))
	}
	got, err := bundle.ToFloat64(b.Params[out].DType, mem)
	require.NoError(t, err)
	cmp, err := bundle.Compare(got, want, b.Ref.Tolerance(b.Params[out].DType, vals))
	require.NoError(t, err)
	require.True(t, cmp.OK(), "%s on %s: %d of %d elements outside tolerance (worst at %d: got %g, want %g)",
		ex.Name, dev.Name(), cmp.Mismatches, cmp.Elems, cmp.Worst, got[cmp.Worst], want[cmp.Worst])
	return cmp
}

// PartialGroupExamples are vadd, unary and matmul at sizes that leave work
// groups partly idle (and one large vadd), for backends that launch in
// groups of 256 or 16×16.
func PartialGroupExamples() []Example {
	var out []Example
	for _, n := range []string{"1", "255", "256", "1000", "1048576"} {
		out = append(out, Example{Name: "vadd", Set: map[string]string{"n": n}})
	}
	out = append(out, Example{Name: "unary", Set: map[string]string{"n": "100003"}})
	for _, s := range [][3]string{{"1", "1", "1"}, {"16", "16", "16"}, {"33", "47", "65"}, {"128", "96", "200"}} {
		out = append(out, Example{Name: "matmul", Set: map[string]string{"m": s[0], "n": s[1], "k": s[2]}})
	}
	return out
}
