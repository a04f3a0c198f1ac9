package tt_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/leakcheck"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// TestMain checks that the tests leave no goroutine and no shm segment. The
// emulator the tests start computes in exact mode (ZYX_EMU_NUMERICS=exact):
// they check the device layer's results against f32 references; the card's
// numerics are checked word for word by the emulator's own tests
// (emu_numerics_hw).
func TestMain(m *testing.M) {
	if os.Getenv("ZYX_EMU_NUMERICS") == "" {
		os.Setenv("ZYX_EMU_NUMERICS", "exact")
	}
	os.Exit(leakcheck.Run(m, func() { _ = backends.CloseAll() }))
}

// openWith opens the tt backend over a sysfs fixture with the runtime in
// mock mode (faults: spec, docs/runtime.md) and extra config keys.
func openWith(t testing.TB, fixtureName, spec, extra string) ([]*backends.Device, error) {
	return openTimed(t, fixtureName, spec, 120, extra)
}

// openTimed is openWith with the call timeout (config timeout_s) given.
func openTimed(t testing.TB, fixtureName, spec string, timeoutS float64, extra string) ([]*backends.Device, error) {
	bin := mockEnv(t, fixtureName, spec)
	cfg, err := backends.ParseConfig([]byte(fmt.Sprintf(`{"tenstorrent": {"runtime": %q, "timeout_s": %g %s}}`, bin, timeoutS, extra)))
	require.NoError(t, err)
	return openRuntime(t, cfg)
}

// mockEnv makes the runtimes the test starts run in mock mode with the
// faults of spec ("" for none) over a sysfs fixture (a card there is served
// by the emulator and reports itself as metal), with private chip lock files
// and kernel cache, and the emulator setting unset. It returns the runtime
// (bin/zyx-tt-runtime; the test skips when it is not built).
func mockEnv(t testing.TB, fixtureName, spec string) string {
	bin := rtbin.Require(t)
	if spec == "" {
		spec = "on"
	}
	t.Setenv(ttruntime.EnvMock, spec)
	t.Setenv(tt.EnvSysfsRoot, fixture(fixtureName))
	t.Setenv(ttruntime.EnvLockDir, filepath.Join(t.TempDir(), "locks")) // chip lock files
	t.Setenv("XDG_CACHE_HOME", t.TempDir())                             // the kernels the emulator builds
	t.Setenv(tt.EnvEmulator, "")
	return bin
}

// openPrinting opens the mock's device with every core of every kernel
// printing "tick" at every run and the lines going to out
// (Options.KernelOutput).
func openPrinting(t testing.TB, out io.Writer) *tt.Device {
	t.Helper()
	bin := mockEnv(t, "none", "dprint=tick")
	cfg, err := backends.ParseConfig(fmt.Appendf(nil, `{"tenstorrent": {"runtime": %q}}`, bin))
	require.NoError(t, err)
	devs, err := openRuntimeOpts(t, backends.Options{Config: cfg, Backends: []string{"tt"}, KernelOutput: out})
	require.NoError(t, err)
	return devs[0].Driver().(*tt.Device)
}

// openRuntime opens the tt backend of a private runtime over cfg; the test's
// end closes the runtime and with it every device.
func openRuntime(t testing.TB, cfg *backends.Config) ([]*backends.Device, error) {
	t.Helper()
	return openRuntimeOpts(t, backends.Options{Config: cfg, Backends: []string{"tt"}})
}

// openRuntimeOpts is openRuntime with options.
func openRuntimeOpts(t testing.TB, opts backends.Options) ([]*backends.Device, error) {
	t.Helper()
	rt, err := backends.Open(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close()) })
	st, err := rt.Backend(context.Background(), "tt")
	require.NoError(t, err)
	return st.Devices, st.Err
}

func open1(t testing.TB, spec string) *tt.Device {
	devs, err := openWith(t, "none", spec, "")
	require.NoError(t, err)
	require.Len(t, devs, 1)
	return devs[0].Driver().(*tt.Device)
}

func TestEmulatorWhenNoCard(t *testing.T) {
	devs, err := openWith(t, "none", "", "")
	require.NoError(t, err)
	require.Len(t, devs, 1)
	d := devs[0]
	require.Equal(t, "tt-emu:0", d.Name())
	require.Equal(t, "tt", d.Backend())
	info := d.Info()
	require.True(t, info.Emulated)
	require.Equal(t, driver.KindCPU, info.Kind)
	require.Equal(t, []uint64{8, 8}, info.MaxGlobalWorkDims)
	require.Equal(t, [2]uint64{32, 32}, info.Tile)
	require.EqualValues(t, 32, info.NumCircularBuffers)
	require.EqualValues(t, 12<<30, info.Memory)
	require.EqualValues(t, 12<<30, d.Pool().FreeBytes())
	require.NotZero(t, info.Supports(driver.BF16))
	require.Zero(t, info.Supports(driver.F64))
}

func TestEmulatorBoardAndDeviceIDs(t *testing.T) {
	devs, err := openWith(t, "none", "", `, "emu_board": "n300"`)
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, "tt-emu:1", devs[1].Name())
	require.Equal(t, 1, devs[1].Driver().(*tt.Device).Runtime().Chip)

	devs2, err := openWith(t, "none", "", `, "emu_board": "p300c", "device_ids": [1]`)
	require.NoError(t, err)
	require.Len(t, devs2, 1)
	require.Equal(t, "tt-emu:1", devs2[0].Name())
	require.Equal(t, []uint64{10, 11}, devs2[0].Info().MaxGlobalWorkDims)

	_, err = openWith(t, "none", "", `, "emu_board": "e150"`)
	require.ErrorContains(t, err, `tenstorrent.emu_board: unknown board "e150"; did you mean "n150"?`)
	_, err = openWith(t, "none", "", `, "emu_board": ""`)
	require.ErrorContains(t, err, `tenstorrent.emu_board: unknown board "" (boards: n150, n300, p100a, p150a, p300c)`, "the emulator's boards, no other")
}

func TestEmulatorCanBeSwitchedOff(t *testing.T) {
	_, err := openWith(t, "none", "", `, "emulator": false`)
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.ErrorContains(t, err, "emulator is disabled")

	bin := mockEnv(t, "none", "")
	t.Setenv(tt.EnvEmulator, "0")
	cfg, err := backends.ParseConfig([]byte(fmt.Sprintf(`{"tenstorrent": {"runtime": %q}}`, bin)))
	require.NoError(t, err)
	_, err = tt.Driver{}.Open(context.Background(), backendtest.DriverEnv(t, cfg))
	require.ErrorContains(t, err, "ZYX_TT_EMU=0")
}

func TestRuntimeNotFound(t *testing.T) {
	mockEnv(t, "none", "")
	cfg, err := backends.ParseConfig([]byte(`{"tenstorrent": {"runtime": "/nonexistent/zyx-tt-runtime", "timeout_s": 5}}`))
	require.NoError(t, err)
	_, err = openRuntime(t, cfg)
	require.ErrorIs(t, err, driver.ErrNoDevice)
	require.ErrorIs(t, err, ttruntime.ErrRuntimeNotFound)
}

func TestCardsBecomeChips(t *testing.T) {
	// the second chip of an n300 (the emulator's: 7 x 8) and the harvested
	// grid the runtime reports
	devs, err := openWith(t, "n300", "harvest-rows=2", "")
	require.NoError(t, err)
	require.Len(t, devs, 2)
	require.Equal(t, "tt:0", devs[0].Name())
	require.Equal(t, "tt:1", devs[1].Name())
	require.Equal(t, "metal", devs[1].Driver().(*tt.Device).Runtime().Runtime, "a card's runtime says metal")
	info := devs[1].Info()
	require.False(t, info.Emulated)
	require.Equal(t, backends.KindAccelerator, info.Kind)
	require.Equal(t, []uint64{6, 8}, info.MaxGlobalWorkDims, "harvesting shrinks the grid")
	require.Equal(t, "0000:02:00.0", info.Extra["pci"])

	// a second process (here: a second open) finds the chips busy
	cfg, err := backends.ParseConfig([]byte(fmt.Sprintf(`{"tenstorrent": {"runtime": %q}}`, rtbin.Require(t))))
	require.NoError(t, err)
	_, err = tt.Driver{}.Open(context.Background(), backendtest.DriverEnv(t, cfg))
	require.ErrorIs(t, err, ttruntime.ErrChipBusy)
	require.ErrorContains(t, err, fmt.Sprintf("pid %d", os.Getpid()))
}

func TestCardChipsHonourDeviceIDs(t *testing.T) {
	devs, err := openWith(t, "p300c", "", `, "device_ids": [1]`)
	require.NoError(t, err)
	require.Len(t, devs, 1)
	require.Equal(t, "tt:1", devs[0].Name())
	require.Equal(t, "0000:05:00.0,0000:06:00.0", devs[0].Info().Extra["pci"])
}

func TestInventoryFromEnv(t *testing.T) {
	t.Setenv(tt.EnvSysfsRoot, fixture("p300c"))
	hw := tt.Driver{}.Inventory(context.Background())
	require.Len(t, hw, 1)
	require.Contains(t, hw[0].Name, "p300c")
	rt, err := backends.Open(context.Background(), backends.Options{Config: &backends.Config{}, Backends: []string{"tt"}})
	require.NoError(t, err)
	defer rt.Close()
	viaRuntime, err := rt.Inventory(context.Background(), "tt")
	require.NoError(t, err)
	require.Equal(t, hw, viaRuntime, "the registered driver offers Inventory")
}

func TestPoolAccountingAndRefcounts(t *testing.T) {
	p := open1(t, "banks=2,bank-size=65536").Pool()
	ctx := context.Background()
	require.EqualValues(t, 131072, p.FreeBytes())

	a, err := p.Alloc(ctx, 1000) // charged one 2 KiB page
	require.NoError(t, err)
	require.EqualValues(t, 131072-2048, p.FreeBytes())
	n, err := p.Size(a)
	require.NoError(t, err)
	require.EqualValues(t, 1000, n)

	_, err = p.Alloc(ctx, 131072)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	_, err = p.Alloc(ctx, 0)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	_, err = p.Alloc(ctx, -5)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	_, err = p.Alloc(ctx, 1<<62)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)

	require.NoError(t, p.Retain(a))
	require.NoError(t, p.Release(a))
	require.EqualValues(t, 131072-2048, p.FreeBytes(), "one reference is left")
	require.NoError(t, p.Release(a))
	require.EqualValues(t, 131072, p.FreeBytes())
	require.ErrorIs(t, p.Release(a), driver.ErrUnknownBuffer)
	require.ErrorIs(t, p.Retain(a), driver.ErrUnknownBuffer)
	_, err = p.Size(12345)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
}

func TestTransfers(t *testing.T) {
	p := open1(t, "").Pool()
	ctx := context.Background()
	const n = tt.StagingBytes*2 + 12345 // crosses staging chunks
	buf, err := p.Alloc(ctx, n)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Release(buf)) }()

	// from an ordinary Go slice: staged
	src := stagedRoundTrip(t, backends.PoolOf(p), buf, 0, n, func(i int) byte { return byte(i*31 + i>>12) })

	// from and into host-pool memory: zero copy
	mem := hostRoundTrip(t, backends.PoolOf(p), buf, 100, 4096, func(int) byte { return 0xA5 })
	require.NoError(t, p.Read(ctx, buf, 99, mem[:2]))
	require.Equal(t, []byte{src[99], 0xA5}, mem[:2])

	// bad ranges and ids lose nothing
	require.ErrorIs(t, p.Write(ctx, buf, n-1, []byte{1, 2}), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Write(ctx, buf, -1, []byte{1}), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Read(ctx, buf, 1<<62, []byte{1}), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Write(ctx, 999, 0, []byte{1}), driver.ErrUnknownBuffer)
	back := make([]byte, 16)
	require.NoError(t, p.Read(ctx, buf, 0, back))
	require.Equal(t, src[:16], back)
}

// stagedRoundTrip writes n bytes fill(0), fill(1), … from Go memory (so
// through staging) into buf at off, reads them back and checks them; it
// returns what it wrote.
func stagedRoundTrip(t *testing.T, p *backends.Pool, buf driver.BufferID, off int64, n int, fill func(int) byte) []byte {
	t.Helper()
	ctx := context.Background()
	src := make([]byte, n)
	for i := range src {
		src[i] = fill(i)
	}
	require.NoError(t, p.Write(ctx, buf, off, src))
	back := make([]byte, n)
	require.NoError(t, p.Read(ctx, buf, off, back))
	require.Equal(t, src, back, "staged round trip")
	return src
}

// hostRoundTrip is stagedRoundTrip from and into n bytes of the tt pool's
// host-pool memory (zero copy); it returns that memory, released at the
// test's end.
func hostRoundTrip(t *testing.T, p *backends.Pool, buf driver.BufferID, off int64, n int, fill func(int) byte) []byte {
	t.Helper()
	ctx := context.Background()
	hp := p.Driver().(*tt.Pool).Host()
	hb, err := hp.Alloc(ctx, int64(n))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, hp.Release(hb)) })
	mem, err := hp.Bytes(hb)
	require.NoError(t, err)
	want := make([]byte, len(mem))
	for i := range mem {
		want[i] = fill(i)
		mem[i] = want[i]
	}
	require.NoError(t, p.Write(ctx, buf, off, mem))
	clear(mem)
	require.NoError(t, p.Read(ctx, buf, off, mem))
	require.Equal(t, want, mem, "zero-copy round trip")
	return mem
}

func vaddProgram() *driver.Program {
	reader := tt.Kernel{Source: "void kernel_main() {}", RuntimeArgs: []tt.Arg{
		{Kind: tt.ArgBufferAddr, Param: 1}, {Kind: tt.ArgBufferAddr, Param: 2},
		{Kind: tt.ArgParam, Param: 0}, {Kind: tt.ArgCoreRow}, {Kind: tt.ArgCoreCol},
	}}
	compute := tt.Kernel{Source: "namespace NAMESPACE { void MAIN {} }", CompileArgs: []tt.Arg{tt.Const(4), tt.Const(0)}, MathFidelity: "HiFi4"}
	writer := tt.Kernel{Source: "void kernel_main() {}",
		CompileArgs: []tt.Arg{{Kind: tt.ArgAccessor, Param: 3}},
		RuntimeArgs: []tt.Arg{{Kind: tt.ArgBufferAddr, Param: 3}, {Kind: tt.ArgNumCores}},
	}
	p := &driver.Program{
		Name: "vadd",
		Params: []driver.Param{
			{Name: "n_tiles", Kind: driver.Variable, DType: driver.U32}, // a Variable before the buffers
			{Name: "a", Kind: driver.Global, DType: driver.BF16},
			{Name: "b", Kind: driver.Global, DType: driver.BF16},
			{Name: "c", Kind: driver.GlobalMut, DType: driver.BF16},
		},
		Grid: []driver.GwsDim{driver.ConstDim(1), driver.ParamDim(0)},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: tt.OneGroup(reader, compute, writer,
			tt.CB(0, "Float16_b", 2048, 2), tt.CB(1, "Float16_b", 2048, 2), tt.CB(16, "Float16_b", 2048, 2))}},
	}
	return p
}

func TestCompileAndLaunch(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram())
	require.NoError(t, err)
	args := vaddArgs(t, d)
	require.NoError(t, exe.Launch(ctx, args))
	el, err := exe.LaunchTimed(ctx, args)
	require.NoError(t, err)
	require.Positive(t, el, "a timed launch reports the device time")

	bad := []struct {
		name string
		args []driver.LaunchArg
		is   error
	}{
		{"grid wider than the chip", []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, 9)), args[1], args[2], args[3]}, driver.ErrInvalidArgument},
		{"zero grid", []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, 0)), args[1], args[2], args[3]}, driver.ErrInvalidArgument},
		{"wrong arg count", args[:3], driver.ErrInvalidArgument},
		{"wrong dtype", []driver.LaunchArg{driver.VarArg(driver.IntConst(driver.I64, 1)), args[1], args[2], args[3]}, driver.ErrInvalidArgument},
		{"buffer for a variable", []driver.LaunchArg{args[1], args[1], args[2], args[3]}, driver.ErrInvalidArgument},
		{"unknown buffer", []driver.LaunchArg{args[0], driver.BufArg(777), args[2], args[3]}, driver.ErrUnknownBuffer},
	}
	for _, b := range bad {
		require.ErrorIs(t, exe.Launch(ctx, b.args), b.is, b.name)
	}
	require.NoError(t, exe.Release())
	require.NoError(t, exe.Release(), "Release is idempotent")
	require.ErrorIs(t, exe.Launch(ctx, args), driver.ErrClosed)
	for _, a := range args[1:] {
		require.NoError(t, d.Pool().Release(a.Buffer))
	}
}

func TestCompileValidation(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	k := func(p *driver.Program, i int) *tt.Kernel { return &tt.ProgramOf(p).Kernels[i] }
	cases := []struct {
		name   string
		mutate func(p *driver.Program)
		is     error
		says   string
	}{
		{"no variant", func(p *driver.Program) { p.RemoveVariant(tt.VariantFormat) }, driver.ErrNoVariant, "has no variant in a format"},
		{"no kernels", func(p *driver.Program) { tt.ProgramOf(p).Kernels = nil }, driver.ErrInvalidArgument, "no kernel has a core to run on"},
		{"processor", func(p *driver.Program) { k(p, 0).Processor = "riscv_2" }, driver.ErrInvalidArgument, "compile.kernels[0].processor"},
		{"noc on compute", func(p *driver.Program) { n := 0; k(p, 1).NOC = &n }, driver.ErrInvalidArgument, "compile.kernels[1].noc"},
		{"noc 2", func(p *driver.Program) { n := 2; k(p, 0).NOC = &n }, driver.ErrInvalidArgument, "compile.kernels[0].noc"},
		{"fidelity on data movement", func(p *driver.Program) { k(p, 0).MathFidelity = "HiFi2" }, driver.ErrInvalidArgument, "for compute kernels"},
		{"empty core set", func(p *driver.Program) { k(p, 0).Cores = &tt.CoreSet{} }, driver.ErrInvalidArgument, "is empty"},
		{"duplicate CB", func(p *driver.Program) { tt.ProgramOf(p).CBs[1].Indices[0].Index = 0 }, driver.ErrInvalidArgument, "CB 0 on core (0, 0) is already configured"},
		{"CB index twice in a config", func(p *driver.Program) {
			tt.ProgramOf(p).CBs[0].Indices = append(tt.ProgramOf(p).CBs[0].Indices, tt.ProgramOf(p).CBs[0].Indices[0])
		}, driver.ErrInvalidArgument, "is given twice in this config"},
		{"CB index 32", func(p *driver.Program) { tt.ProgramOf(p).CBs[1].Indices[0].Index = 32 }, driver.ErrInvalidArgument, "CB indices are 0-31"},
		{"unknown format", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].Indices[0].Format = "Bfp2_b" }, driver.ErrInvalidArgument, "compile.cbs[0].indices[0].format"},
		{"page not dividing", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].Indices[0].PageBytes = tt.N(3000) }, driver.ErrInvalidArgument, "does not divide total_bytes"},
		{"tiny tile", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].Indices[0].TileRows = 3 }, driver.ErrInvalidArgument, "[3, 32] is not a tile shape"},
		{"empty CB", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].TotalBytes = tt.N(0) }, driver.ErrInvalidArgument, "compile.cbs[0].total_bytes"},
		{"over the L1 budget", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].TotalBytes = tt.N(2048 * 1000) }, driver.ErrInvalidArgument, "bytes of L1"},
		{"fidelity", func(p *driver.Program) { k(p, 1).MathFidelity = "HiFi5" }, driver.ErrInvalidArgument, "compile.kernels[1].compute_config.math_fidelity"},
		{"param layout on a buffer", func(p *driver.Program) { k(p, 0).RuntimeArgs[2].Param = 1 }, driver.ErrInvalidArgument, "needs a variable param"},
		{"address of a variable", func(p *driver.Program) { k(p, 0).RuntimeArgs[0].Param = 0 }, driver.ErrInvalidArgument, "needs a buffer (global or global_mut) param"},
		{"param out of range", func(p *driver.Program) { k(p, 2).RuntimeArgs[0].Param = 9 }, driver.ErrInvalidArgument, "names param 9"},
		{"core_row in compile args", func(p *driver.Program) {
			k(p, 1).CompileArgs = append(k(p, 1).CompileArgs, tt.Arg{Kind: tt.ArgCoreRow})
		}, driver.ErrInvalidArgument, "belongs in runtime args"},
		{"split_start in common args", func(p *driver.Program) {
			k(p, 1).CommonArgs = []tt.Arg{{Kind: tt.ArgConst, Value: driver.SplitDim(driver.GwsSplitStart, driver.ConstDim(10), driver.ConstDim(1), driver.ConstDim(4))}}
		}, driver.ErrInvalidArgument, "per-core term"},
		{"accessor in runtime args", func(p *driver.Program) {
			k(p, 2).RuntimeArgs = append(k(p, 2).RuntimeArgs, tt.Arg{Kind: tt.ArgAccessor, Param: 3})
		}, driver.ErrInvalidArgument, "they belong in compile_args or named_compile_args"},
		{"named arg twice", func(p *driver.Program) {
			k(p, 0).NamedCompileArgs = []tt.NamedArg{{Name: "n", Arg: tt.Const(1)}, {Name: "n", Arg: tt.Const(2)}}
		}, driver.ErrInvalidArgument, "given twice"},
		{"semaphore out of range", func(p *driver.Program) {
			k(p, 0).RuntimeArgs = append(k(p, 0).RuntimeArgs, tt.Arg{Kind: tt.ArgSemaphore, Semaphore: 1})
		}, driver.ErrInvalidArgument, "semaphore 1; the program has 0"},
		{"unknown layout kind", func(p *driver.Program) { k(p, 0).RuntimeArgs[3].Kind = "core_z" }, driver.ErrInvalidArgument, "unknown arg kind \"core_z\""},
		{"three grid axes", func(p *driver.Program) { p.Grid = append(p.Grid, driver.ConstDim(1)) }, driver.ErrInvalidArgument, "axes"},
		{"constant grid too large", func(p *driver.Program) { p.Grid = []driver.GwsDim{driver.ConstDim(100)} }, driver.ErrInvalidArgument, "worker grid has 8 rows"},
		{"constant zero grid", func(p *driver.Program) { p.Grid = []driver.GwsDim{driver.ConstDim(0)} }, driver.ErrInvalidArgument, "is 0"},
		{"64-bit param in a layout", func(p *driver.Program) { p.Params[0].DType = driver.U64 }, driver.ErrInvalidArgument, "an arg word is 32 bits"},
		{"buffer decl of a variable", func(p *driver.Program) { tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 0}} }, driver.ErrInvalidArgument, "not a buffer param"},
		{"sharded without a shard", func(p *driver.Program) {
			tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 1, Placement: "l1", Layout: "height_sharded"}}
		}, driver.ErrInvalidArgument, "needs a shard spec"},
		{"tile of odd shape", func(p *driver.Program) {
			tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 1, Tile: true, Rows: 30, Cols: 32}}
		}, driver.ErrInvalidArgument, "multiples of 32"},
		{"block float of an integer", func(p *driver.Program) {
			p.Params[1].DType = driver.I32
			tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 1, Tile: true, Rows: 32, Cols: 32, Format: "Bfp8_b"}}
		}, driver.ErrInvalidArgument, "holds f32 or bf16"},
		{"block float without tiles", func(p *driver.Program) { tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 1, Format: "Bfp8_b"}} }, driver.ErrInvalidArgument, "needs the tile layout"},
		{"CB on a DRAM buffer", func(p *driver.Program) { b := 1; tt.ProgramOf(p).CBs[0].Buffer = &b }, driver.ErrInvalidArgument, "a CB sits on an l1 buffer"},
		{"include twice", func(p *driver.Program) {
			tt.ProgramOf(p).Includes = []tt.Include{{Path: "a.h"}, {Path: "a.h"}}
		}, driver.ErrInvalidArgument, "given twice"},
		{"include path with ..", func(p *driver.Program) { tt.ProgramOf(p).Includes = []tt.Include{{Path: "../a.h"}} }, driver.ErrInvalidArgument, "compile.include_files[0].path"},
		{"compiler error", func(p *driver.Program) { k(p, 1).Source = "#error no tiles today" }, driver.ErrCompile, "no tiles today"},
		// Metal 2.0 names and bindings
		{"dfb binding to no CB", func(p *driver.Program) { k(p, 0).DFBs = map[string]string{"in0": "a_tiles"} },
			driver.ErrInvalidArgument, `compile.kernels[0].dfbs.in0: binds dataflow buffer "a_tiles", but no CB index of cbs has that name`},
		{"dfb accessor not an identifier", func(p *driver.Program) {
			tt.ProgramOf(p).CBs[0].Indices[0].Name = "a_tiles"
			k(p, 0).DFBs = map[string]string{"in 0": "a_tiles"}
		}, driver.ErrInvalidArgument, `accessor name "in 0" is not a C identifier`},
		{"CB name for two indices", func(p *driver.Program) {
			tt.ProgramOf(p).CBs[0].Indices[0].Name = "tiles"
			tt.ProgramOf(p).CBs[1].Indices[0].Name = "tiles"
		}, driver.ErrInvalidArgument, "one name names one dataflow buffer"},
		{"CB name not an identifier", func(p *driver.Program) { tt.ProgramOf(p).CBs[0].Indices[0].Name = "a-tiles" },
			driver.ErrInvalidArgument, `compile.cbs[0].indices[0].name: "a-tiles" is not a C identifier`},
		{"semaphore binding to no semaphore", func(p *driver.Program) { k(p, 0).SemaphoreBindings = map[string]string{"go": "go"} },
			driver.ErrInvalidArgument, `binds semaphore "go", but no semaphore has that name`},
		{"tensor binding to no param", func(p *driver.Program) { k(p, 0).Tensors = map[string]string{"src": "z"} },
			driver.ErrInvalidArgument, `compile.kernels[0].tensors.src: binds buffer "z", but the program has no param of that name`},
		{"tensor binding to a variable", func(p *driver.Program) { k(p, 0).Tensors = map[string]string{"src": "n_tiles"} },
			driver.ErrInvalidArgument, "a variable; a tensor accessor binds a buffer param"},
		{"named runtime arg not an identifier", func(p *driver.Program) {
			k(p, 0).NamedRuntimeArgs = []tt.NamedArg{{Name: "num tiles", Arg: tt.Const(1)}}
		}, driver.ErrInvalidArgument, `compile.kernels[0].named_runtime_args[0]: "num tiles" is not a C identifier`},
		{"named arg in two lists", func(p *driver.Program) {
			k(p, 0).NamedRuntimeArgs = []tt.NamedArg{{Name: "n", Arg: tt.Const(1)}}
			k(p, 0).NamedCommonArgs = []tt.NamedArg{{Name: "n", Arg: tt.Const(1)}}
		}, driver.ErrInvalidArgument, "given twice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := vaddProgram()
			p.Grid = []driver.GwsDim{driver.ConstDim(1), driver.ConstDim(4)} // built at Compile
			tc.mutate(p)
			_, err := backends.DeviceOf(d).Compile(ctx, p)
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.says)
		})
	}
	// A grid read from a variable is built at the first launch: so are
	// its errors.
	p := vaddProgram()
	tt.ProgramOf(p).Kernels[1].Source = "#error built late"
	exe, err := backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	args := launchArgs(t, d, 4096, 4)
	require.ErrorIs(t, exe.Launch(ctx, args), driver.ErrCompile)
	require.NoError(t, exe.Release())
	// a kernel source that is not UTF-8 still compiles (it travels as base64)
	p = vaddProgram()
	tt.ProgramOf(p).Kernels[0].Source = "// \xff\xfe\nvoid kernel_main() {}"
	exe, err = backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	require.NoError(t, exe.Launch(ctx, args))
	require.NoError(t, exe.Release())
}

// launchArgs allocates vadd's three buffers of n bytes and puts the tile
// count variable first.
func launchArgs(t *testing.T, d *tt.Device, n int64, tiles uint64) []driver.LaunchArg {
	args := []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, tiles))}
	for range 3 {
		b, err := d.Pool().Alloc(context.Background(), n)
		require.NoError(t, err)
		t.Cleanup(func() { _ = d.Pool().Release(b) })
		args = append(args, driver.BufArg(b))
	}
	return args
}

func TestOneAxisGridIsRows(t *testing.T) {
	info := ttruntime.Grid{Rows: 8, Cols: 4}
	p := &driver.Program{Grid: []driver.GwsDim{driver.ConstDim(8)}}
	g, err := tt.LaunchGrid(p, nil, info)
	require.NoError(t, err)
	require.Equal(t, [2]uint32{8, 1}, g)
	g, err = tt.LaunchGrid(&driver.Program{}, nil, info)
	require.NoError(t, err)
	require.Equal(t, [2]uint32{1, 1}, g, "no grid is one core")
	_, err = tt.LaunchGrid(&driver.Program{Grid: []driver.GwsDim{driver.ConstDim(1), driver.ConstDim(5)}}, nil, info)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
}

func TestRuntimeCrashLosesTheDevice(t *testing.T) {
	// init is request 1, the alloc 2, the write 3: it crashes
	d := open1(t, "crash-at=3")
	p := d.Pool()
	ctx := context.Background()
	b, err := p.Alloc(ctx, 64)
	require.NoError(t, err)
	err = p.Write(ctx, b, 0, make([]byte, 64))
	require.ErrorIs(t, err, driver.ErrDeviceLost)
	require.ErrorContains(t, err, "exit status 3")
	_, err = p.Alloc(ctx, 64)
	require.ErrorIs(t, err, driver.ErrDeviceLost)
	_, err = backends.DeviceOf(d).Compile(ctx, vaddProgram())
	require.ErrorIs(t, err, driver.ErrDeviceLost)
}

func TestErrorReplyKeepsTheDevice(t *testing.T) {
	p := open1(t, "error-at=2,error-code=out_of_memory").Pool()
	ctx := context.Background()
	_, err := p.Alloc(ctx, 64)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	require.EqualValues(t, 12<<30, p.FreeBytes(), "a failed alloc charges nothing")
	b, err := p.Alloc(ctx, 64)
	require.NoError(t, err)
	require.NoError(t, p.Release(b))
}

func TestClosedDevice(t *testing.T) {
	d := open1(t, "")
	require.NoError(t, d.Close())
	require.NoError(t, d.Close())
	_, err := d.Pool().Alloc(context.Background(), 64)
	require.ErrorIs(t, err, driver.ErrClosed)
	_, err = backends.DeviceOf(d).Compile(context.Background(), vaddProgram())
	require.ErrorIs(t, err, driver.ErrDeviceLost)
}

// BenchmarkTransfer64MiB measures, in one run, 64 MiB uploads and
// downloads between host-pool memory and a pool (through the shm arena,
// the runtime copying) against a single-threaded memcpy of the same size,
// through the C++ runtime's emulator layer (bin/zyx-tt-runtime). The ratio
// metrics are transfer bandwidth over memcpy bandwidth.
func BenchmarkTransfer64MiB(b *testing.B) {
	benchTransfer64MiB(b, openEmu(b, "n150")[0].Driver().(*tt.Device))
}

func benchTransfer64MiB(b *testing.B, d *tt.Device) {
	const n = 64 << 20
	ctx := context.Background()
	p := d.Pool()
	buf, err := p.Alloc(ctx, n)
	require.NoError(b, err)
	defer p.Release(buf)
	hp := p.(*tt.Pool).Host()
	hb, err := hp.Alloc(ctx, n)
	require.NoError(b, err)
	defer hp.Release(hb)
	host, err := hp.Bytes(hb)
	require.NoError(b, err)
	other := make([]byte, n)
	for i := range host {
		host[i] = byte(i)
	}
	copy(other, host)
	require.NoError(b, p.Write(ctx, buf, 0, host)) // fault every page in once
	require.NoError(b, p.Read(ctx, buf, 0, host))

	backendtest.BenchTransfers(b, n,
		func() error { return p.Write(ctx, buf, 0, host) },
		func() error { return p.Read(ctx, buf, 0, host) },
		func() { copy(other, host) })
}

// TestRealRuntimeEmulator drives the C++ runtime's emulator, out of mock
// mode, when it has been built (make runtime puts it at
// bin/zyx-tt-runtime).
func TestRealRuntimeEmulator(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	require.Equal(t, "emu", d.Runtime().Runtime)
	require.True(t, d.Info().Emulated)
	p := d.Pool()
	ctx := context.Background()
	b, err := p.Alloc(ctx, 3*2048+17)
	require.NoError(t, err)
	src := make([]byte, 3*2048+17)
	for i := range src {
		src[i] = byte(i * 13)
	}
	require.NoError(t, p.Write(ctx, b, 0, src))
	back := make([]byte, len(src))
	require.NoError(t, p.Read(ctx, b, 0, back))
	require.Equal(t, src, back)
	require.ErrorIs(t, p.Write(ctx, b, int64(len(src)), []byte{1}), driver.ErrInvalidArgument)
	require.NoError(t, p.Release(b))
}

// A tt pool keeps its buffers in the one buffer table: an id from the host
// pool or from another chip's pool is ErrUnknownBuffer.
func TestForeignIDsAreUnknownAcrossChips(t *testing.T) {
	devs, err := openWith(t, "none", "", `, "emu_board": "n300"`)
	require.NoError(t, err)
	require.Len(t, devs, 2)
	ctx := context.Background()
	p0, p1 := devs[0].Pool(), devs[1].Pool()
	id0, err := p0.Alloc(ctx, 4096)
	require.NoError(t, err)
	defer p0.Release(id0)
	id1, err := p1.Alloc(ctx, 4096)
	require.NoError(t, err)
	defer p1.Release(id1)
	require.NotEqual(t, id0, id1, "ids are process-wide")

	require.ErrorIs(t, p1.Retain(id0), driver.ErrUnknownBuffer, "chip 0's id on chip 1")
	require.ErrorIs(t, p0.Write(ctx, id1, 0, []byte{1}), driver.ErrUnknownBuffer, "chip 1's id on chip 0")
	host, err := backends.HostPool()
	require.NoError(t, err)
	hid, err := host.Alloc(ctx, 64)
	require.NoError(t, err)
	defer host.Release(hid)
	require.ErrorIs(t, p0.Retain(hid), driver.ErrUnknownBuffer, "a host-pool id")
	_, err = p0.Size(hid)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
}
