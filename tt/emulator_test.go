package tt_test

// The tt backend against the C++ runtime's emulator layer
// (bin/zyx-tt-runtime, built by `make runtime`): the same Go paths as on a
// card, with kernels that really run.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/kernels"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// openEmu opens the emulator devices of board through the real runtime.
func openEmu(t testing.TB, board string) []*backends.Device { return openEmuWith(t, board, nil) }

// openEmuWith is openEmu with kernel output going to out.
func openEmuWith(t testing.TB, board string, out io.Writer) []*backends.Device {
	t.Helper()
	bin := rtbin.Require(t)
	t.Setenv(tt.EnvSysfsRoot, fixture("none"))
	t.Setenv(ttruntime.EnvLockDir, filepath.Join(t.TempDir(), "locks"))
	t.Setenv(tt.EnvEmulator, "")
	t.Setenv("ZYX_EMU_TIMEOUT_MS", "1000") // deadlock detection, for the hang test
	cfg, err := backends.ParseConfig(fmt.Appendf(nil,
		`{"tenstorrent": {"runtime": %q, "timeout_s": 120, "emu_board": %q, "cache_dir": %q}}`, bin, board, t.TempDir()))
	require.NoError(t, err)
	devs, err := openRuntimeOpts(t, backends.Options{Config: cfg, Backends: []string{"tt"}, KernelOutput: out})
	if errors.Is(err, driver.ErrUnsupported) {
		t.Skipf("%s has no emulator layer: %v", bin, err)
	}
	require.NoError(t, err)
	return devs
}

func TestEmulatorRuntimeDevices(t *testing.T) {
	cases := []struct {
		board      string
		chips      int
		dramPerDev uint64
		arch       string
	}{
		{"n150", 1, 12 << 30, tt.ArchWormhole},
		{"n300", 2, 12 << 30, tt.ArchWormhole},
		{"p150a", 1, 32 << 30, tt.ArchBlackhole},
	}
	for _, tc := range cases {
		t.Run(tc.board, func(t *testing.T) {
			devs := openEmu(t, tc.board)
			require.Len(t, devs, tc.chips)
			for k, dev := range devs {
				d := dev.Driver().(*tt.Device)
				rt := d.Runtime()
				require.Equal(t, fmt.Sprintf("tt-emu:%d", k), d.Name())
				require.Equal(t, "emu", rt.Runtime)
				require.Equal(t, tc.board, rt.Board)
				require.Equal(t, tc.arch, rt.Arch)
				require.Equal(t, k, rt.Chip)
				info := d.Info()
				require.True(t, info.Emulated)
				require.Equal(t, []uint64{uint64(rt.Grid.Rows), uint64(rt.Grid.Cols)}, info.MaxGlobalWorkDims)
				require.NotZero(t, rt.Grid.Rows*rt.Grid.Cols)
				require.Equal(t, tc.dramPerDev, info.Memory, "the runtime's DRAM is the board's")
				require.EqualValues(t, tc.dramPerDev, d.Pool().FreeBytes())
				require.Equal(t, rt.L1.Usable(), info.LocalMemSize)
				require.NotZero(t, info.LocalMemSize)
			}
		})
	}
}

func TestEmulatorRuntimeTransfers(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	p := d.Pool()
	ctx := context.Background()
	free := p.FreeBytes()

	// More than the staging region, from Go memory, at an odd offset.
	const n = tt.StagingBytes + 3*2048 + 17
	buf, err := p.Alloc(ctx, n+5)
	require.NoError(t, err)
	require.Less(t, p.FreeBytes(), free-n)
	src := stagedRoundTrip(t, backends.PoolOf(p), buf, 5, n, func(i int) byte { return byte(i*31 + i>>11) })

	// Host-pool memory goes zero-copy.
	hostRoundTrip(t, backends.PoolOf(p), buf, 4096, 1<<20, func(i int) byte { return byte(i * 7) })
	back := make([]byte, 4091)
	require.NoError(t, p.Read(ctx, buf, 5, back))
	require.Equal(t, src[:4091], back, "bytes before the host-pool write are untouched")

	// Bad ranges and ids lose nothing and keep the device.
	require.ErrorIs(t, p.Write(ctx, buf, n+5, []byte{1}), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Read(ctx, buf, -1, []byte{1}), driver.ErrInvalidArgument)
	require.ErrorIs(t, p.Write(ctx, 12345, 0, []byte{1}), driver.ErrUnknownBuffer)
	_, err = p.Alloc(ctx, int64(free)+1)
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	require.NoError(t, p.Release(buf))
	require.Equal(t, free, p.FreeBytes())
	require.ErrorIs(t, p.Release(buf), driver.ErrUnknownBuffer)
}

// exampleVadd is examples/vadd's Tenstorrent variant: z = x + y over n f32
// elements, one 1024-element tile per step, tiles dealt round-robin to the
// cores of the grid, with the kernel library's kernels that vadd names.
func exampleVadd(t *testing.T, rows, cols int) *driver.Program {
	t.Helper()
	read := func(name string) string {
		b, err := kernels.Read(name)
		require.NoError(t, err)
		return string(b)
	}
	const x, y, z, n = 0, 1, 2, 3
	spread := []tt.Arg{{Kind: tt.ArgCoreIndex}, {Kind: tt.ArgNumCores}}
	reader := tt.Kernel{
		Source:      read("tt/dataflow/read_chunks_binary.cpp"),
		CompileArgs: []tt.Arg{{Kind: tt.ArgAccessor, Param: x}, {Kind: tt.ArgAccessor, Param: y}},
		RuntimeArgs: append([]tt.Arg{
			{Kind: tt.ArgBufferAddr, Param: x}, {Kind: tt.ArgBufferAddr, Param: y},
			{Kind: tt.ArgPageSize, Param: x}, {Kind: tt.ArgParam, Param: n},
		}, spread...),
	}
	compute := tt.Kernel{
		Source:       read("tt/compute/add_tiles.cpp"),
		RuntimeArgs:  append([]tt.Arg{{Kind: tt.ArgParam, Param: n}}, spread...),
		MathFidelity: "HiFi4",
		FP32DestAcc:  true,
	}
	writer := tt.Kernel{
		Source: read("tt/dataflow/write_chunks.cpp"),
		RuntimeArgs: append([]tt.Arg{
			{Kind: tt.ArgBufferAddr, Param: z}, {Kind: tt.ArgPageSize, Param: z},
			{Kind: tt.ArgParam, Param: n},
		}, spread...),
	}
	cb := func(i int) tt.CBConfig { return tt.CB(i, "Float32", 4096, 2) }
	code := tt.OneGroup(reader, compute, writer, cb(0), cb(1), cb(16))
	code.Includes = libraryIncludes(t)
	return &driver.Program{
		Name: "vadd",
		Params: []driver.Param{
			{Name: "x", Kind: driver.Global, DType: driver.F32},
			{Name: "y", Kind: driver.Global, DType: driver.F32},
			{Name: "z", Kind: driver.GlobalMut, DType: driver.F32},
			{Name: "n", Kind: driver.Variable, DType: driver.U32},
		},
		Grid:     []driver.GwsDim{driver.ConstDim(uint64(rows)), driver.ConstDim(uint64(cols))},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: code}},
	}
}

// f32Bytes and bytesF32 convert f32 values to and from device bytes.
var f32Bytes, bytesF32 = backendtest.F32Bytes, backendtest.BytesF32

func TestEmulatorRuntimeRunsVadd(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, exampleVadd(t, 2, 3))
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()

	p := d.Pool()
	const n = 5*1024 + 300 // six tiles, the last one partial
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i] = float32(i)*0.25 - 100
		ys[i] = float32(i%97) * 1.5
	}
	var bufs [3]driver.BufferID
	for i := range bufs {
		bufs[i], err = p.Alloc(ctx, 4*n)
		require.NoError(t, err)
		defer func() { require.NoError(t, p.Release(bufs[i])) }()
	}
	require.NoError(t, p.Write(ctx, bufs[0], 0, f32Bytes(xs)))
	require.NoError(t, p.Write(ctx, bufs[1], 0, f32Bytes(ys)))
	sentinel := make([]float32, n)
	for i := range sentinel {
		sentinel[i] = -7
	}
	require.NoError(t, p.Write(ctx, bufs[2], 0, f32Bytes(sentinel)))

	args := func(count uint64) []driver.LaunchArg {
		return []driver.LaunchArg{driver.BufArg(bufs[0]), driver.BufArg(bufs[1]), driver.BufArg(bufs[2]),
			driver.VarArg(driver.UintConst(driver.U32, count))}
	}
	check := func(count int) {
		t.Helper()
		out := make([]byte, 4*n)
		require.NoError(t, p.Read(ctx, bufs[2], 0, out))
		zs := bytesF32(out)
		for i := range zs {
			want := float32(-7)
			if i < count {
				want = xs[i] + ys[i]
			}
			if math.Abs(float64(zs[i]-want)) > 1e-5*math.Max(1, math.Abs(float64(want))) {
				require.Failf(t, "vadd", "z[%d] = %g, want %g (n=%d)", i, zs[i], want, count)
			}
		}
	}
	// A shorter run first: the elements past it keep the sentinel.
	require.NoError(t, exe.Launch(ctx, args(2048)))
	check(2048)
	el, err := exe.LaunchTimed(ctx, args(n))
	require.NoError(t, err)
	require.Positive(t, el, "the emulator times the run")
	require.Less(t, el, time.Minute)
	check(n)

	// Launch errors are caught before the runtime and keep the device.
	require.ErrorIs(t, exe.Launch(ctx, args(n)[:3]), driver.ErrInvalidArgument)
	require.ErrorIs(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(999), args(n)[1], args(n)[2], args(n)[3]}), driver.ErrUnknownBuffer)
	require.ErrorIs(t, exe.Launch(ctx, []driver.LaunchArg{args(n)[3], args(n)[1], args(n)[2], args(n)[3]}), driver.ErrInvalidArgument)
	require.NoError(t, exe.Launch(ctx, args(n)))
	check(n)
}

func TestEmulatorRuntimeGridLimits(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	g := d.Runtime().Grid
	ctx := context.Background()
	_, err := backends.DeviceOf(d).Compile(ctx, exampleVadd(t, int(g.Rows)+1, 1))
	require.ErrorIs(t, err, driver.ErrInvalidArgument, "a grid past the chip is refused before the runtime")
	exe, err := backends.DeviceOf(d).Compile(ctx, exampleVadd(t, int(g.Rows), int(g.Cols)))
	require.NoError(t, err, "the whole harvested grid is usable")
	require.NoError(t, exe.Release())
}

func TestEmulatorRuntimeKernelFaults(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()

	// A kernel that does not compile: ErrCompile with the compiler's words.
	bad := exampleVadd(t, 1, 1)
	tt.ProgramOf(bad).Kernels[1].Source = "#error no tiles today\n" + tt.ProgramOf(bad).Kernels[1].Source
	_, err := backends.DeviceOf(d).Compile(ctx, bad)
	require.ErrorIs(t, err, driver.ErrCompile)
	require.ErrorContains(t, err, "no tiles today")

	// A kernel that waits forever: the emulator reports the deadlock, and
	// the device lives on.
	hang := exampleVadd(t, 1, 1)
	tt.ProgramOf(hang).Kernels[2].Source = `#include <cstdint>
#include "api/dataflow/dataflow_api.h"
void kernel_main() {
  cb_wait_front(tt::CBIndex::c_17, 1); // nothing ever pushes to 17
}
`
	tt.ProgramOf(hang).CBs = append(tt.ProgramOf(hang).CBs, tt.CB(17, "Float32", 4096, 1))
	exe, err := backends.DeviceOf(d).Compile(ctx, hang)
	require.NoError(t, err)
	p := d.Pool()
	var bufs [3]driver.BufferID
	for i := range bufs {
		bufs[i], err = p.Alloc(ctx, 4096)
		require.NoError(t, err)
	}
	args := []driver.LaunchArg{driver.BufArg(bufs[0]), driver.BufArg(bufs[1]), driver.BufArg(bufs[2]),
		driver.VarArg(driver.UintConst(driver.U32, 1024))}
	began := time.Now()
	err = exe.Launch(ctx, args)
	require.Less(t, time.Since(began), 30*time.Second)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re)
	require.Equal(t, ttruntime.CodeDeadlock, re.Code, "message: %s", re.Message)
	require.NotErrorIs(t, err, driver.ErrDeviceLost)
	require.NoError(t, exe.Release())

	// still usable
	require.NoError(t, p.Write(ctx, bufs[0], 0, make([]byte, 4096)))
	for _, b := range bufs {
		require.NoError(t, p.Release(b))
	}
}

// A kernel that calls abort or exit, or fails a C assert, stops with a run
// error naming the core, the kernel and the call; the runtime lives on, and
// the next launch on the device computes.
func TestEmulatorRuntimeKernelExits(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	p := d.Pool()
	const n = 1024
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i)*0.5, float32(i%7)
	}
	var bufs [3]backends.BufferID
	for i := range bufs {
		var err error
		bufs[i], err = p.Alloc(ctx, 4*n)
		require.NoError(t, err)
		defer func() { require.NoError(t, p.Release(bufs[i])) }()
	}
	require.NoError(t, p.Write(ctx, bufs[0], 0, f32Bytes(xs)))
	require.NoError(t, p.Write(ctx, bufs[1], 0, f32Bytes(ys)))
	args := []backends.LaunchArg{backends.BufArg(bufs[0]), backends.BufArg(bufs[1]), backends.BufArg(bufs[2]),
		backends.VarArg(backends.UintConst(backends.U32, n))}
	good, err := backends.DeviceOf(d).Compile(ctx, exampleVadd(t, 1, 1))
	require.NoError(t, err)
	defer func() { require.NoError(t, good.Release()) }()

	cases := []struct {
		name   string
		kernel int // in the one group: reader, compute, writer
		rename string
		stop   string // the kernel's first statement
		want   []string
	}{
		{"abort in compute", 1, "adder", "std::abort();",
			[]string{"core (0,0) adder (compute) at adder.cpp:", "the kernel called abort()"}},
		{"exit in writer", 2, "storer", "std::exit(3);",
			[]string{"core (0,0) storer (riscv_1) at storer.cpp:", "the kernel called exit(3)"}},
		{"assert in reader", 0, "loader", "assert(get_arg_val<uint32_t>(3) == 7);",
			[]string{"core (0,0) loader (riscv_0) at loader.cpp:", `assertion "get_arg_val<uint32_t>(3) == 7" failed at loader.cpp:`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prog := exampleVadd(t, 1, 1)
			k := &tt.ProgramOf(prog).Kernels[tc.kernel]
			k.Name = tc.rename
			k.Source = "#include <cassert>\n#include <cstdlib>\n" +
				strings.Replace(k.Source, "void kernel_main() {", "void kernel_main() {\n  "+tc.stop, 1)
			exe, err := backends.DeviceOf(d).Compile(ctx, prog)
			require.NoError(t, err)
			defer func() { require.NoError(t, exe.Release()) }()
			err = exe.Launch(ctx, args)
			var re *ttruntime.RemoteError
			require.ErrorAs(t, err, &re)
			require.Equal(t, ttruntime.CodeRunError, re.Code, "message: %s", re.Message)
			for _, w := range tc.want {
				require.Contains(t, re.Message, w)
			}
			require.NotErrorIs(t, err, backends.ErrDeviceLost)

			// The same runtime runs the next launch.
			require.NoError(t, p.Write(ctx, bufs[2], 0, make([]byte, 4*n)))
			require.NoError(t, good.Launch(ctx, args))
			out := make([]byte, 4*n)
			require.NoError(t, p.Read(ctx, bufs[2], 0, out))
			zs := bytesF32(out)
			for i := range zs {
				require.Equal(t, xs[i]+ys[i], zs[i], "z[%d]", i)
			}
		})
	}
}

// TestEmulatorTTRulesAreTheRuntimes: a tt.json that breaks a rule of the
// program loads; the runtime refuses the program when the device compiles
// it, with the field of its compile request, and the driver refuses what it
// alone reads (per-core kinds, host layouts) naming the kernel or buffer.
func TestEmulatorTTRulesAreTheRuntimes(t *testing.T) {
	dev := openEmu(t, "n150")[0]
	for _, tc := range v2RuleCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bundle.Load(writeV2(t, tc))
			require.NoError(t, err, "the bundle loads: the rule is the runtime's")
			p, err := b.Program(b.Defaults())
			require.NoError(t, err)
			_, err = dev.Compile(t.Context(), p)
			require.ErrorIs(t, err, driver.ErrInvalidArgument)
			require.ErrorContains(t, err, tc.substr)
		})
	}
}
