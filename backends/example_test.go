package backends_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

// The flow of docs/api.md's example on the dummy device: select and compile,
// stage inputs from the host pool, launch with buffer and scalar args.
func ExampleCompileOn() {
	cfg, err := backends.ParseConfig([]byte(`{"dummy": {"enabled": true, "memory": 1048576}}`))
	if err != nil {
		log.Fatal(err)
	}
	backends.SetConfig(cfg)
	defer backends.SetConfig(nil)

	ctx := context.Background()
	const n = 1000
	prog := &backends.Program{
		Name: "vadd",
		Params: []backends.Param{
			{Name: "x", Kind: backends.Global, DType: backends.F32},
			{Name: "z", Kind: backends.GlobalMut, DType: backends.F32},
			{Name: "n", Kind: backends.Variable, DType: backends.U32},
		},
		Grid: []backends.GwsDim{backends.BinaryDim(backends.GwsCeilDiv, backends.ParamDim(2), backends.ConstDim(256))},
	}
	dev, exe, _, err := backends.CompileOn(ctx, prog, "dummy")
	if err != nil {
		log.Fatal(err)
	}
	defer exe.Release()

	host, err := backends.HostPool()
	if err != nil {
		log.Fatal(err)
	}
	staging, err := host.Alloc(ctx, 4*n)
	if err != nil {
		log.Fatal(err)
	}
	defer host.Release(staging)
	pool := dev.Pool()
	x, _ := pool.Alloc(ctx, 4*n)
	z, _ := pool.Alloc(ctx, 4*n)
	defer pool.Release(x)
	defer pool.Release(z)
	if err := backends.Copy(ctx, pool, x, 0, host, staging, 0, 4*n); err != nil {
		log.Fatal(err)
	}
	args := []backends.LaunchArg{backends.BufArg(x), backends.BufArg(z), backends.VarArg(backends.UintConst(backends.U32, n))}
	if err := exe.Launch(ctx, args); err != nil {
		log.Fatal(err)
	}
	fmt.Println(dev.Name(), "grid", exe.(*dummy.Executable).LastGrid(), "free", pool.FreeBytes())

	err = exe.Launch(ctx, args[:2])
	fmt.Println(err)
	// Output:
	// dummy grid [4] free 1040576
	// dummy: launch vadd: invalid argument: 2 args for 3 params
}
