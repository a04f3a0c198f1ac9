package backends_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

// The flow of docs/api.md's example on the dummy device: open a runtime,
// select and compile, move typed data in and out, launch with buffer and
// scalar args, and tear everything down with one Close.
func ExampleRuntime_CompileOn() {
	cfg, err := backends.ParseConfig([]byte(`{"dummy": {"enabled": true, "memory": 1048576}}`))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	rt, err := backends.Open(ctx, backends.Options{Config: cfg, Backends: []string{"dummy"}})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close()

	const n = 1000
	prog := &backends.Program{
		Name: "vadd",
		Params: []backends.Param{
			{Name: "x", Kind: backends.Global, DType: backends.F32},
			{Name: "z", Kind: backends.GlobalMut, DType: backends.F32},
			{Name: "n", Kind: backends.Variable, DType: backends.U32},
		},
		Variants: []backends.Variant{{Format: backends.FormatC, Code: &backends.SourceVariant{
			Entry:  "vadd",
			Source: "void vadd(const float *x, float *z, uint32_t n, uint64_t g, uint64_t g1, uint64_t g2) {}",
		}}},
	}
	if prog.Grid, err = prog.ParseGrid("ceil_div(n, 256)"); err != nil {
		log.Fatal(err)
	}
	dev, exe, err := rt.CompileOn(ctx, prog, "dummy")
	if err != nil {
		log.Fatal(err)
	}
	defer exe.Release()

	pool := dev.Pool()
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)
	}
	x, err := backends.AllocSlice(ctx, pool, xs)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Release(x)
	z, _ := pool.Alloc(ctx, 4*n)
	defer pool.Release(z)
	args := []backends.LaunchArg{backends.BufArg(x), backends.BufArg(z), backends.VarArg(backends.UintConst(backends.U32, n))}
	if err := exe.Launch(ctx, args); err != nil {
		log.Fatal(err)
	}
	back, err := backends.ReadSlice[float32](ctx, pool, x, 4*(n-2), 2)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Name(), "grid", exe.Driver().(*dummy.Executable).LastGrid(), "free", pool.FreeBytes(), "x tail", back)

	err = exe.Launch(ctx, args[:2])
	fmt.Println(err)
	// Output:
	// dummy grid [4] free 1040576 x tail [998 999]
	// dummy: launch: program "vadd": invalid argument: 2 args for 3 params
}
