package backendtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
)

// LoadExample loads the bundle examples/<name>.
func LoadExample(t testing.TB, name string) *bundle.Bundle {
	t.Helper()
	b, err := bundle.Load(filepath.Join(ExamplesDir(t), name))
	require.NoError(t, err)
	return b
}

// ExampleProgram is the example's program, every variant, with the vars'
// defaults. Every var of vadd, unary and matmul is a Variable param, so the
// program serves any size.
func ExampleProgram(t testing.TB, name string) *driver.Program {
	t.Helper()
	b := LoadExample(t, name)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	return p
}

// Vadd is the vadd example's program, every variant.
func Vadd(t testing.TB) *driver.Program { return ExampleProgram(t, "vadd") }

// Example is one run of an example bundle.
type Example struct {
	// Name is the bundle: a directory under examples/.
	Name string
	// Set overrides var defaults (var name → value text), as --set does.
	Set map[string]string
	// Edit, when set, changes the program before it is compiled: a test
	// drops one of two variants the backend could take, for example.
	Edit func(*driver.Program)
}

// RunExamples runs each example on dev as a subtest named after it.
func RunExamples(t *testing.T, dev driver.Device, examples ...Example) {
	t.Helper()
	for _, ex := range examples {
		t.Run(ex.Name, func(t *testing.T) { RunExample(t, dev, ex) })
	}
}

// RunExample runs the example's bundle on dev through the bundle pipeline
// (bundle.Run: inputs from the bundle's specs, else random; upload; launch;
// download) and requires every output to match the bundle's float64
// reference within its tolerance, as `zyx-tt run --verify` does. ex.Edit
// may change the program before it is compiled. It returns the first
// output's verdict for the caller to log.
func RunExample(t testing.TB, devDriver driver.Device, ex Example) bundle.OutputVerdict {
	dev := backends.DeviceOf(devDriver)
	t.Helper()
	ctx := context.Background()
	b := LoadExample(t, ex.Name)
	require.NotNil(t, b.Ref, "example %s has a reference", ex.Name)
	rt, err := backends.Open(ctx, backends.Options{Config: &backends.Config{}, Backends: []string{}})
	require.NoError(t, err)
	defer rt.Close()
	run, err := b.Prepare(ctx, rt, bundle.Options{Set: ex.Set})
	require.NoError(t, err)
	defer run.Close()
	// A variant that cannot be built at these values (a Tenstorrent
	// program whose kernels need whole tiles) is left out, as zyx-tt run
	// leaves it out; the other backends still run.
	p, _, err := b.PartialProgram(run.Vals)
	require.NoError(t, err)
	if ex.Edit != nil {
		ex.Edit(p)
	}
	exe, err := dev.Compile(ctx, p)
	require.NoError(t, err)
	defer exe.Release()
	res, err := run.Execute(ctx, dev, exe, p, 0, false)
	require.NoError(t, err)
	v, err := run.Verify(ctx, "", res)
	require.NoError(t, err)
	require.NotEmpty(t, v.Outputs)
	for _, o := range v.Outputs {
		require.True(t, o.OK, "%s on %s: output %s: %d of %d elements outside tolerance (worst at %d: got %g, want %g)",
			ex.Name, dev.Name(), o.Name, o.Mismatches, o.Elems, o.Worst, o.Got, o.Want)
	}
	return v.Outputs[0]
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
