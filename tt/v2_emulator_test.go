package tt_test

// The v2 program model through the Go API, end to end on the C++ runtime's
// emulator (bin/zyx-tt-runtime): kernels on core sets with split_work
// arguments, L1 and sharded buffers, CBs on buffers, semaphores and
// multicast, tile layouts the driver tilizes, block-float weights and
// DPRINT. Every result is checked against host arithmetic. The kernels are
// ours; those it shares with cpp/emu/tests/model_tests.cpp are files under
// cpp/emu/tests/kernels (sharedKernel), and the matmul's compute kernel is
// the kernel library's (libraryKernel).

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/internal/half"
	"github.com/zyxtt/zyxtt/kernels"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

func bf16Bits(f float32) uint16  { return half.BF16FromF32(f) }
func bf16Value(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// leBytes and fromLE convert words to and from the little-endian bytes
// the device holds.
func leBytes[T uint16 | uint32](v []T) []byte {
	b, err := binary.Append(nil, binary.LittleEndian, v)
	if err != nil {
		panic(err) // a slice of fixed-size words always encodes
	}
	return b
}

func fromLE[T uint16 | uint32](b []byte) []T {
	v := make([]T, len(b)/binary.Size(T(0)))
	if _, err := binary.Decode(b, binary.LittleEndian, v); err != nil {
		panic(err) // v is sized to b
	}
	return v
}

func bf16Bytes(v []uint16) []byte { return leBytes(v) }
func bytesBF16(b []byte) []uint16 { return fromLE[uint16](b) }
func u32Bytes(v []uint32) []byte  { return leBytes(v) }
func bytesU32(b []byte) []uint32  { return fromLE[uint32](b) }

func randomBF16(n int, seed uint64) []uint16 {
	rng := rand.New(rand.NewPCG(seed, 7))
	v := make([]uint16, n)
	for i := range v {
		v[i] = bf16Bits(float32(rng.Float64()*16 - 8))
	}
	return v
}

func rng(r0, c0, r1, c1 uint64) *tt.CoreSet {
	return &tt.CoreSet{Ranges: []tt.CoreRange{tt.Rect(r0, c0, r1, c1)}}
}

// noc is an arg of kind TTArgCoreNocX or TTArgCoreNocY: a NOC coordinate
// of the core at (r, c).
func noc(kind tt.ArgKind, r, c uint64) tt.Arg {
	return tt.Arg{Kind: kind, Core: tt.Coord{Row: driver.ConstDim(r), Col: driver.ConstDim(c)}}
}

func param(kind tt.ArgKind, p int) tt.Arg {
	return tt.Arg{Kind: kind, Param: p}
}

func expr(t *testing.T, s string, names ...string) driver.GwsDim {
	t.Helper()
	d, err := driver.ParseGws(s, func(n string) (int, bool) {
		for i, x := range names {
			if x == n && x != "" {
				return i, true
			}
		}
		return 0, false
	})
	require.NoError(t, err)
	return d
}

func constExpr(d driver.GwsDim) tt.Arg {
	return tt.Arg{Kind: tt.ArgConst, Value: d}
}

func allocParam(t *testing.T, exe *backends.Executable, p int, n int64) driver.BufferID {
	t.Helper()
	_, ok := exe.Driver().(driver.ParamAllocator)
	require.True(t, ok, "the tt executable allocates params")
	id, err := exe.AllocParam(context.Background(), p, n)
	require.NoError(t, err)
	t.Cleanup(func() { _ = exe.Device().Pool().Release(id) })
	return id
}

// sharedKernel is the source of cpp/emu/tests/kernels/<name>.cpp: the
// kernels these tests share with the C++ emulator tests
// (cpp/emu/tests/model_tests.cpp), kept once for both.
func sharedKernel(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "cpp", "emu", "tests", "kernels", name+".cpp"))
	require.NoError(t, err)
	return string(b)
}

// libraryKernel is the source of the file name of zyx-tt's kernel library
// (kernels/): the kernel a bundle names as "zyx:" + name.
func libraryKernel(t *testing.T, name string) string {
	t.Helper()
	b, err := kernels.Read(name)
	require.NoError(t, err)
	return string(b)
}

// libraryIncludes are the kernel library's headers, which the bundle loader
// gives every program with a library kernel.
func libraryIncludes(t *testing.T) []tt.Include {
	t.Helper()
	inc, err := tt.LibraryIncludes()
	require.NoError(t, err)
	return inc
}

// Two core groups as split_work_to_cores makes them: n tiles (a Variable)
// over the 24 cores of a 3 x 8 rectangle, the first split_group1 cores
// taking one tile more; the two groups run the compute kernel with
// different compile-time tile counts, and every core's reader and writer
// get split_start and split_units as runtime args (kernels read_pairs,
// add_n, write_range).
func TestEmulatorCoreGroupsSplitWork(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	names := []string{"a", "b", "c", "n"}
	e := func(s string) driver.GwsDim { return expr(t, s, names...) }
	all := tt.Rect(0, 0, 2, 7)
	reader := tt.Kernel{Name: "reader", Processor: tt.Riscv0, Cores: rng(0, 0, 2, 7), Source: sharedKernel(t, "read_pairs"),
		CompileArgs: []tt.Arg{param(tt.ArgAccessor, 0), param(tt.ArgAccessor, 1)},
		RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0), param(tt.ArgBufferAddr, 1),
			constExpr(e("split_start(n, 3, 8)")), constExpr(e("split_units(n, 3, 8)"))}}
	writer := tt.Kernel{Name: "writer", Processor: tt.Riscv1, Cores: rng(0, 0, 2, 7), Source: sharedKernel(t, "write_range"),
		CompileArgs: []tt.Arg{param(tt.ArgAccessor, 2)},
		RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 2), constExpr(e("split_start(n, 3, 8)")), constExpr(e("split_units(n, 3, 8)"))}}
	g1 := tt.Kernel{Name: "compute_g1", Processor: tt.Compute, Source: sharedKernel(t, "add_n"),
		Cores:       &tt.CoreSet{Slice: &tt.CoreSlice{Of: all, From: e("0"), To: e("split_group1(n, 3, 8)")}},
		CompileArgs: []tt.Arg{constExpr(e("ceil_div(n, split_cores(n, 3, 8))"))}}
	g2 := tt.Kernel{Name: "compute_g2", Processor: tt.Compute, Source: sharedKernel(t, "add_n"),
		Cores:       &tt.CoreSet{Slice: &tt.CoreSlice{Of: all, From: e("split_group1(n, 3, 8)"), To: e("split_cores(n, 3, 8)")}},
		CompileArgs: []tt.Arg{constExpr(e("n / split_cores(n, 3, 8)"))}}
	prog := &driver.Program{
		Name: "core_groups",
		Params: []driver.Param{backendtest.Global("a", driver.BF16), backendtest.Global("b", driver.BF16),
			backendtest.GlobalMut("c", driver.BF16), backendtest.Variable("n", driver.U32)},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
			Kernels: []tt.Kernel{reader, g1, g2, writer},
			CBs:     []tt.CBConfig{tt.CB(0, "Float16_b", 2048, 2), tt.CB(1, "Float16_b", 2048, 2), tt.CB(16, "Float16_b", 2048, 2)},
		}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	require.Zero(t, exe.Driver().(*tt.Executable).Programs(), "the core sets read n: built at the launch")

	const tiles = 100
	a, b := randomBF16(tiles*1024, 1), randomBF16(tiles*1024, 2)
	bufA, bufB, bufC := allocParam(t, exe, 0, tiles*2048), allocParam(t, exe, 1, tiles*2048), allocParam(t, exe, 2, tiles*2048)
	p := d.Pool()
	require.NoError(t, p.Write(ctx, bufA, 0, bf16Bytes(a)))
	require.NoError(t, p.Write(ctx, bufB, 0, bf16Bytes(b)))
	for _, n := range []int{100, 37, 96, 10} { // uneven, fewer, an even split (one group), fewer units than cores
		require.NoError(t, p.Write(ctx, bufC, 0, bytes.Repeat([]byte{0xc0, 0x7f}, tiles*1024))) // NaN sentinels
		args := []driver.LaunchArg{driver.BufArg(bufA), driver.BufArg(bufB), driver.BufArg(bufC), driver.VarArg(driver.UintConst(driver.U32, uint64(n)))}
		require.NoError(t, exe.Launch(ctx, args), "n=%d", n)
		out := make([]byte, tiles*2048)
		require.NoError(t, p.Read(ctx, bufC, 0, out))
		got := bytesBF16(out)
		for i := range got {
			want := uint16(0x7fc0)
			if i < n*1024 {
				want = bf16Bits(bf16Value(a[i]) + bf16Value(b[i]))
			}
			if got[i] != want {
				require.Failf(t, "core groups", "n=%d: element %d (tile %d) is %#04x, want %#04x", n, i, i/1024, got[i], want)
			}
		}
	}
	require.Equal(t, 4, exe.Driver().(*tt.Executable).Programs(), "one runtime program per value of n")
	// The n=100 program as sent: the reader's 24 cores have 24 different
	// (start, units) pairs; the two compute groups are the 4 and 20 cores
	// split_work_to_cores gives, counted down the columns.
	var req ttruntime.CompileRequest
	for _, r := range exe.Driver().(*tt.Executable).Requests() {
		if len(r.Kernels) == 4 && r.Kernels[1].CompileArgs[0].Value != nil && *r.Kernels[1].CompileArgs[0].Value == 5 {
			req = r
		}
	}
	require.Len(t, req.Kernels, 4, "the n=100 program has both groups")
	require.Len(t, req.Kernels[0].RuntimeArgs, 24)
	require.Equal(t, uint64(4), req.Kernels[1].Cores.Size())
	require.ElementsMatch(t, []ttruntime.CoreCoord{{0, 0}, {1, 0}, {2, 0}, {0, 1}}, req.Kernels[1].Cores.Cores(false), "down the columns")
	require.Len(t, req.Kernels[1].Cores, 2, "as two rectangles")
	require.Equal(t, uint64(20), req.Kernels[2].Cores.Size())
	require.Equal(t, uint32(4), *req.Kernels[2].CompileArgs[0].Value)
}

// Core (1,2) holds a 4-page L1 buffer: it reads src into it, changes every
// word through the buffer's pointer, writes it to dst and tells core (0,0)
// (semaphore 0, through (0,0)'s NOC coordinates), which reads the buffer
// remotely through the holder's NOC coordinates into dst2 (kernels
// l1_holder, l1_peer).
func TestEmulatorL1Loopback(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	holderCore := &tt.CoreSet{Ranges: []tt.CoreRange{tt.CoreAt(1, 2)}}
	peerCore := &tt.CoreSet{Ranges: []tt.CoreRange{tt.CoreAt(0, 0)}}
	sem := tt.Arg{Kind: tt.ArgSemaphore, Semaphore: 0}
	prog := &driver.Program{
		Name: "l1_loopback",
		Params: []driver.Param{backendtest.Global("src", driver.U32), backendtest.GlobalMut("l1", driver.U32),
			backendtest.GlobalMut("dst", driver.U32), backendtest.GlobalMut("dst2", driver.U32)},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
			Kernels: []tt.Kernel{
				{Name: "holder", Processor: tt.Riscv0, Cores: holderCore, Source: sharedKernel(t, "l1_holder"), RuntimeArgs: []tt.Arg{
					param(tt.ArgBufferAddr, 0), param(tt.ArgBufferAddr, 1), param(tt.ArgBufferAddr, 2),
					noc(tt.ArgCoreNocX, 0, 0), noc(tt.ArgCoreNocY, 0, 0), sem}},
				{Name: "peer", Processor: tt.Riscv1, Cores: peerCore, Source: sharedKernel(t, "l1_peer"), RuntimeArgs: []tt.Arg{
					param(tt.ArgBufferAddr, 1), param(tt.ArgBufferAddr, 3),
					noc(tt.ArgCoreNocX, 1, 2), noc(tt.ArgCoreNocY, 1, 2), sem}},
			},
			CBs:        []tt.CBConfig{{Cores: peerCore, TotalBytes: tt.N(4096), Indices: []tt.CBIndex{{Index: 0, Format: "UInt32", PageBytes: tt.N(4096)}}}},
			Semaphores: []tt.Semaphore{{Cores: &tt.CoreSet{Ranges: []tt.CoreRange{tt.CoreAt(0, 0), tt.CoreAt(1, 2)}}}},
			Buffers: []tt.Buffer{
				{Param: 0, PageSize: tt.N(1024)},
				{Param: 1, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(1024), Shard: &tt.Shard{
					Cores: tt.CoreSet{Ranges: []tt.CoreRange{tt.CoreAt(1, 2)}}, Shape: [2]uint32{4, 1}, Tensor: [2]uint32{4, 1}}},
				{Param: 2, PageSize: tt.N(1024)},
				{Param: 3, PageSize: tt.N(4096)},
			},
		}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	src, l1, dst, dst2 := allocParam(t, exe, 0, 4096), allocParam(t, exe, 1, 4096), allocParam(t, exe, 2, 4096), allocParam(t, exe, 3, 4096)
	p := d.Pool()
	in := make([]uint32, 1024)
	for i := range in {
		in[i] = uint32(5 + 7*i)
	}
	args := []driver.LaunchArg{driver.BufArg(src), driver.BufArg(l1), driver.BufArg(dst), driver.BufArg(dst2)}
	for rep := range 2 {
		require.NoError(t, p.Write(ctx, src, 0, u32Bytes(in)))
		require.NoError(t, exe.Launch(ctx, args))
		want := make([]uint32, 1024)
		for i := range want {
			want[i] = in[i]*3 + 1
		}
		for name, id := range map[string]driver.BufferID{"dst": dst, "dst2 (read remotely)": dst2, "the L1 buffer itself": l1} {
			out := make([]byte, 4096)
			require.NoError(t, p.Read(ctx, id, 0, out))
			require.Equal(t, want, bytesU32(out), "run %d: %s", rep, name)
		}
		for i := range in {
			in[i]++
		}
	}
	// A plain DRAM buffer where the L1 one is declared is refused before
	// the runtime, naming the param.
	plain, err := p.Alloc(ctx, 4096)
	require.NoError(t, err)
	defer p.Release(plain)
	err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(src), driver.BufArg(plain), driver.BufArg(dst), driver.BufArg(dst2)})
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "param 1 (l1)")
	require.ErrorContains(t, err, "AllocParam")
}

// Height-sharded eltwise: a, b and c are L1 buffers of 5 x 3 tiles cut
// into shards of 2 x 3 tiles on cores (0,0), (0,1), (0,2); every holder
// adds its shards of a and b into its shard of c with circular buffers
// that sit on the shards (tt-metal's globally allocated address).
func TestEmulatorHeightShardedEltwise(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	const T0, T1, S0 = 5, 3, 2
	const tiles, sp = T0 * T1, S0 * T1
	holders := rng(0, 0, 0, 2)
	shard := &tt.Shard{Cores: *rng(0, 0, 0, 2), Shape: [2]uint32{S0, T1}, Tensor: [2]uint32{T0, T1}, Orientation: "row_major"}
	decl := func(i int) tt.Buffer {
		return tt.Buffer{Param: i, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(2048), Shard: shard}
	}
	cbOn := func(index int, buf int) tt.CBConfig {
		return tt.CBConfig{Cores: holders, TotalBytes: tt.N(sp * 2048), Indices: []tt.CBIndex{{Index: index, Format: "Float16_b", PageBytes: tt.N(2048)}}, Buffer: &buf}
	}
	n := []tt.Arg{tt.Const(sp)}
	prog := &driver.Program{
		Name:   "sharded_add",
		Params: []driver.Param{backendtest.Global("a", driver.BF16), backendtest.Global("b", driver.BF16), backendtest.GlobalMut("c", driver.BF16)},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
			Kernels: []tt.Kernel{
				{Name: "push", Processor: tt.Riscv0, Cores: holders, Source: sharedKernel(t, "shard_push"), CompileArgs: n},
				{Name: "add", Processor: tt.Compute, Cores: holders, Source: sharedKernel(t, "add_n"), CompileArgs: n},
				{Name: "wait", Processor: tt.Riscv1, Cores: holders, Source: sharedKernel(t, "shard_wait"), CompileArgs: n},
			},
			CBs:     []tt.CBConfig{cbOn(0, 0), cbOn(1, 1), cbOn(16, 2)},
			Buffers: []tt.Buffer{decl(0), decl(1), decl(2)},
		}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	a, b := randomBF16(tiles*1024, 10), randomBF16(tiles*1024, 11)
	ba, bb, bc := allocParam(t, exe, 0, tiles*2048), allocParam(t, exe, 1, tiles*2048), allocParam(t, exe, 2, tiles*2048)
	p := d.Pool()
	require.NoError(t, p.Write(ctx, ba, 0, bf16Bytes(a)))
	require.NoError(t, p.Write(ctx, bb, 0, bf16Bytes(b)))
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(ba), driver.BufArg(bb), driver.BufArg(bc)}))
	out := make([]byte, tiles*2048)
	require.NoError(t, p.Read(ctx, bc, 0, out))
	got := bytesBF16(out)
	for i := range got {
		if want := bf16Bits(bf16Value(a[i]) + bf16Value(b[i])); got[i] != want {
			require.Failf(t, "sharded add", "element %d (tile %d) is %#04x, want %#04x", i, i/1024, got[i], want)
		}
	}
	n1, err := p.Size(ba)
	require.NoError(t, err)
	require.EqualValues(t, tiles*2048, n1)
	require.EqualValues(t, 12<<30, p.FreeBytes(), "L1 buffers take no DRAM")
}

// Core (0,0) waits until the 63 receivers are ready (they increment its
// ready semaphore), multicasts a tile into cb 1 of every core of the 8x8
// grid, then sets the receivers' valid semaphore with
// noc_semaphore_set_multicast (kernels mcast_sender, mcast_receiver). The
// semaphore ids arrive as args, as CreateSemaphore gave them.
func TestEmulatorMulticastWithSemaphores(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	semArg := func(i int) tt.Arg { return tt.Arg{Kind: tt.ArgSemaphore, Semaphore: i} }
	sender := &tt.CoreSet{Ranges: []tt.CoreRange{tt.CoreAt(0, 0)}}
	receivers := &tt.CoreSet{Ranges: []tt.CoreRange{tt.Rect(0, 1, 0, 7), tt.Rect(1, 0, 7, 7)}}
	for _, loopback := range []uint64{0, 1} {
		prog := &driver.Program{
			Name:   "mcast",
			Params: []driver.Param{{Name: "out", Kind: driver.GlobalMut, DType: driver.U32}},
			Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
				Kernels: []tt.Kernel{
					{Name: "sender", Processor: tt.Riscv0, Cores: sender, Source: sharedKernel(t, "mcast_sender"),
						CompileArgs: []tt.Arg{tt.Const(loopback)},
						RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0),
							noc(tt.ArgCoreNocX, 0, 0), noc(tt.ArgCoreNocY, 0, 0), noc(tt.ArgCoreNocX, 7, 7), noc(tt.ArgCoreNocY, 7, 7),
							tt.Const(63), semArg(0), semArg(1)}},
					{Name: "receiver", Processor: tt.Riscv0, Cores: receivers, Source: sharedKernel(t, "mcast_receiver"),
						RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0),
							noc(tt.ArgCoreNocX, 0, 0), noc(tt.ArgCoreNocY, 0, 0),
							constExpr(expr(t, "core_row * 8 + core_col")), semArg(0), semArg(1), semArg(2)}},
				},
				CBs: []tt.CBConfig{tt.CB(0, "UInt32", 1024, 1), tt.CB(1, "UInt32", 1024, 1)},
				Semaphores: []tt.Semaphore{
					{Cores: sender},          // ready: id 0 on the sender
					{Cores: rng(0, 0, 7, 7)}, // valid: id 1 (0 is taken on the sender)
					{Cores: receivers, Initial: tt.N(5)},
				},
				Buffers: []tt.Buffer{{Param: 0, PageSize: tt.N(1024)}},
			}}},
		}
		exe, err := backends.DeviceOf(d).Compile(ctx, prog)
		require.NoError(t, err)
		req := exe.Driver().(*tt.Executable).Requests()[0]
		ids := []uint32{req.Semaphores[0].ID, req.Semaphores[1].ID, req.Semaphores[2].ID}
		require.Equal(t, []uint32{0, 1, 0}, ids, "CreateSemaphore's ids: the smallest free on every core of the set")
		require.Len(t, req.Kernels[1].RuntimeArgs, 63, "the receivers' args differ by index")
		out := allocParam(t, exe, 0, 64*1024)
		p := d.Pool()
		for rep := range 2 { // semaphores start from their initial values every run
			require.NoError(t, p.Write(ctx, out, 0, make([]byte, 64*1024)))
			require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(out)}))
			raw := make([]byte, 64*1024)
			require.NoError(t, p.Read(ctx, out, 0, raw))
			got := bytesU32(raw)
			for i := range uint32(256) {
				want := uint32(0xdead)
				if loopback == 1 {
					want = 7000 + i
				}
				require.Equal(t, want, got[i], "loopback %d run %d: the sender's own tile, word %d", loopback, rep, i)
			}
			for c := uint32(1); c < 64; c++ {
				for i := range uint32(255) {
					if got[c*256+i] != 7000+i+c {
						require.Failf(t, "multicast", "loopback %d run %d: core %d word %d is %d, want %d", loopback, rep, c, i, got[c*256+i], 7000+i+c)
					}
				}
				require.Equal(t, uint32(5), got[c*256+255], "core %d saw its semaphore's initial value", c)
			}
		}
		require.NoError(t, exe.Release())
	}
}

// Reads, for each output tile (mt, nt) of this core (t = core, core +
// cores, …), the tile pairs a(mt, kt), b(kt, nt): one tile per page, the
// buffers in tile layout.
const kMatmulTileReader = `
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0), b_addr = get_arg_val<uint32_t>(1);
  const uint32_t mt = get_arg_val<uint32_t>(2), nt = get_arg_val<uint32_t>(3), kt = get_arg_val<uint32_t>(4);
  const uint32_t core = get_arg_val<uint32_t>(5), cores = get_arg_val<uint32_t>(6);
  const InterleavedAddrGen<true> a = {.bank_base_address = a_addr, .page_size = get_tile_size(0)};
  const InterleavedAddrGen<true> b = {.bank_base_address = b_addr, .page_size = get_tile_size(1)};
  for (uint32_t t = core; t < mt * nt; t += cores) {
    const uint32_t row = t / nt, col = t % nt;
    for (uint32_t k = 0; k < kt; k++) {
      cb_reserve_back(0, 1);
      noc_async_read(get_noc_addr(row * kt + k, a), get_write_ptr(0), get_tile_size(0));
      cb_reserve_back(1, 1);
      noc_async_read(get_noc_addr(k * nt + col, b), get_write_ptr(1), get_tile_size(1));
      noc_async_read_barrier();
      cb_push_back(0, 1);
      cb_push_back(1, 1);
    }
  }
}
`

const kMatmulTileWriter = `
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t c_addr = get_arg_val<uint32_t>(0), tiles = get_arg_val<uint32_t>(1);
  const uint32_t core = get_arg_val<uint32_t>(2), cores = get_arg_val<uint32_t>(3);
  const InterleavedAddrGen<true> c = {.bank_base_address = c_addr, .page_size = get_tile_size(16)};
  for (uint32_t t = core; t < tiles; t += cores) {
    cb_wait_front(16, 1);
    noc_async_write(get_read_ptr(16), get_noc_addr(t, c), get_tile_size(16));
    noc_async_write_barrier();
    cb_pop_front(16, 1);
  }
}
`

// matmulTileProgram is c = a·b on a 2 x 3 grid with a, b and c declared
// in tile layout (b stored as bFormat when it is set), the matrices m x k,
// k x n and m x n.
func matmulTileProgram(t *testing.T, m, n, k uint64, bFormat string) *driver.Program {
	mt, nt, kt := tt.Const(m/32), tt.Const(n/32), tt.Const(k/32)
	spread := []tt.Arg{{Kind: tt.ArgCoreIndex}, {Kind: tt.ArgNumCores}}
	reader := tt.Kernel{Source: kMatmulTileReader, RuntimeArgs: append([]tt.Arg{
		param(tt.ArgBufferAddr, 0), param(tt.ArgBufferAddr, 1), mt, nt, kt}, spread...)}
	compute := tt.Kernel{Source: libraryKernel(t, "tt/matmul/compute.cpp"), RuntimeArgs: append([]tt.Arg{
		tt.Const(m), tt.Const(n), tt.Const(k)}, spread...)}
	writer := tt.Kernel{Source: kMatmulTileWriter, RuntimeArgs: append([]tt.Arg{
		param(tt.ArgBufferAddr, 2), tt.Const(m / 32 * n / 32)}, spread...)}
	bPage, bCB := uint64(2048), "Float16_b"
	if bFormat != "" {
		bPage, bCB = 1088, bFormat
	}
	v := tt.OneGroup(reader, compute, writer,
		tt.CB(0, "Float16_b", 2048, 2), tt.CB(1, bCB, bPage, 2), tt.CB(16, "Float16_b", 2048, 2))
	v.Includes = libraryIncludes(t)
	v.Buffers = []tt.Buffer{
		{Param: 0, Tile: true, Rows: m, Cols: k},
		{Param: 1, Tile: true, Rows: k, Cols: n, Format: bFormat},
		{Param: 2, Tile: true, Rows: m, Cols: n},
	}
	return &driver.Program{
		Name:     "matmul_tiles",
		Params:   []driver.Param{backendtest.Global("a", driver.BF16), backendtest.Global("b", driver.BF16), backendtest.GlobalMut("c", driver.BF16)},
		Grid:     []driver.GwsDim{driver.ConstDim(2), driver.ConstDim(3)},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: v}},
	}
}

// checkMatmul runs the program on row-major a and b and compares c with a
// float64 product of bWant (b as the device holds it) within bf16
// rounding of every k-tile's partial sum.
func checkMatmul(t *testing.T, d *tt.Device, prog *driver.Program, m, n, k int, a, b []uint16, bWant []float64) {
	t.Helper()
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	ba, bb, bc := allocParam(t, exe, 0, int64(2*m*k)), allocParam(t, exe, 1, int64(2*k*n)), allocParam(t, exe, 2, int64(2*m*n))
	p := d.Pool()
	require.NoError(t, p.Write(ctx, ba, 0, bf16Bytes(a)))
	require.NoError(t, p.Write(ctx, bb, 0, bf16Bytes(b)))
	err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(ba), driver.BufArg(bb), driver.BufArg(bc)})
	require.NoError(t, err)
	out := make([]byte, 2*m*n)
	require.NoError(t, p.Read(ctx, bc, 0, out))
	got := bytesBF16(out)
	for i := range m {
		for j := range n {
			var want, mag float64
			for q := range k {
				x := float64(bf16Value(a[i*k+q])) * bWant[q*n+j]
				want += x
				mag += math.Abs(x)
			}
			if g := float64(bf16Value(got[i*n+j])); math.Abs(g-want) > mag*0.02+1e-2 {
				require.Failf(t, "matmul", "c[%d][%d] = %g, want %g (±%g)", i, j, g, want, mag*0.02+1e-2)
			}
		}
	}
}

// A bf16 matmul whose A, B and C are declared in tile layout: the host
// data stays row-major, the pool tilizes on upload and untilizes on
// download, and the kernels read and write whole tiles as pages.
func TestEmulatorTileLayoutMatmul(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	const m, n, k = 64, 128, 96
	a, b := randomBF16(m*k, 3), randomBF16(k*n, 4)
	for i := range a {
		a[i] = bf16Bits(bf16Value(a[i]) / 8)
	}
	bWant := make([]float64, len(b))
	for i := range b {
		bWant[i] = float64(bf16Value(b[i]))
	}
	checkMatmul(t, d, matmulTileProgram(t, m, n, k, ""), m, n, k, a, b, bWant)
}

// The same matmul with B stored as Bfp8_b tiles: the pool packs the bf16
// weights into shared-exponent blocks; the reference uses the weights as
// the block format holds them.
func TestEmulatorBfp8Weights(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	const m, n, k = 64, 64, 64
	a, b := randomBF16(m*k, 5), randomBF16(k*n, 6)
	bWant := bfpQuantized(t, tt.Bfp8b, b, k, n)
	checkMatmul(t, d, matmulTileProgram(t, m, n, k, "Bfp8_b"), m, n, k, a, b, bWant)
}

// bfpQuantized is b (row-major rows x cols bf16) as block-float tiles hold
// it, by the package's own packer (tested against the C++ packer's golden
// tile).
func bfpQuantized(t *testing.T, f tt.BlockFloatFormat, b []uint16, rows, cols int) []float64 {
	out := make([]float64, len(b))
	tile := make([]float32, tt.TileValues)
	for tr := 0; tr < rows/32; tr++ {
		for tc := 0; tc < cols/32; tc++ {
			for r := range 32 {
				for c := range 32 {
					tile[r*32+c] = bf16Value(b[(tr*32+r)*cols+tc*32+c])
				}
			}
			packed, err := tt.PackBlockFloat(f, tile, true)
			require.NoError(t, err)
			back, err := tt.UnpackBlockFloat(f, packed, true)
			require.NoError(t, err)
			for r := range 32 {
				for c := range 32 {
					out[(tr*32+r)*cols+tc*32+c] = float64(back[r*32+c])
				}
			}
		}
	}
	return out
}

// Copies the tiles of a tile-layout buffer in reverse order into another,
// page by page, whatever their format: block-float pages included.
const kReverseTiles = `
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t in = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1), tiles = get_arg_val<uint32_t>(2);
  const uint32_t page = get_arg_val<uint32_t>(3);
  const InterleavedAddrGen<true> s = {.bank_base_address = in, .page_size = page};
  const InterleavedAddrGen<true> d = {.bank_base_address = out, .page_size = page};
  cb_reserve_back(0, 1);
  for (uint32_t t = 0; t < tiles; t++) {
    noc_async_read(get_noc_addr(t, s), get_write_ptr(0), page);
    noc_async_read_barrier();
    noc_async_write(get_write_ptr(0), get_noc_addr(tiles - 1 - t, d), page);
    noc_async_write_barrier();
  }
}
`

// Block-float storage through the emulator's memory: f32 data packed to
// Bfp8_b and Bfp4_b tiles by the pool, moved as 1088- and 576-byte pages
// by a kernel (in reverse tile order), unpacked on download.
func TestEmulatorBlockFloatPages(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	const rows, cols = 64, 64
	in := make([]float32, rows*cols)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range in {
		in[i] = float32(r.NormFloat64() * 3)
	}
	for _, f := range []tt.BlockFloatFormat{tt.Bfp8b, tt.Bfp4b} {
		decl := func(p int) tt.Buffer {
			return tt.Buffer{Param: p, Tile: true, Rows: rows, Cols: cols, Format: f.String()}
		}
		prog := &driver.Program{
			Name: "reverse_" + f.String(),
			Params: []driver.Param{{Name: "in", Kind: driver.Global, DType: driver.F32}, {Name: "out", Kind: driver.GlobalMut, DType: driver.F32},
				{Name: "tiles", Kind: driver.Variable, DType: driver.U32}},
			Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
				Kernels: []tt.Kernel{{Name: "reverse", Processor: tt.Riscv0, Cores: rng(0, 0, 0, 0), Source: kReverseTiles,
					RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0), param(tt.ArgBufferAddr, 1), param(tt.ArgParam, 2), param(tt.ArgPageSize, 0)}}},
				CBs:     []tt.CBConfig{{Cores: rng(0, 0, 0, 0), TotalBytes: tt.N(uint64(f.TileBytes())), Indices: []tt.CBIndex{{Index: 0, Format: f.String(), PageBytes: tt.N(uint64(f.TileBytes()))}}}},
				Buffers: []tt.Buffer{decl(0), decl(1)},
			}}},
		}
		exe, err := backends.DeviceOf(d).Compile(ctx, prog)
		require.NoError(t, err)
		bi, bo := allocParam(t, exe, 0, 4*rows*cols), allocParam(t, exe, 1, 4*rows*cols)
		p := d.Pool()
		require.NoError(t, p.Write(ctx, bi, 0, f32Bytes(in)))
		require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(bi), driver.BufArg(bo), driver.VarArg(driver.UintConst(driver.U32, 4))}))
		raw := make([]byte, 4*rows*cols)
		require.NoError(t, p.Read(ctx, bo, 0, raw))
		got := bytesF32(raw)
		// The reference: each 32x32 tile through the packer, the tiles
		// (0,0) (0,1) (1,0) (1,1) in reverse order.
		for tr := range 2 {
			for tc := range 2 {
				tile := make([]float32, 1024)
				for r := range 32 {
					for c := range 32 {
						tile[r*32+c] = in[(tr*32+r)*cols+tc*32+c]
					}
				}
				packed, err := tt.PackBlockFloat(f, tile, true)
				require.NoError(t, err)
				want, err := tt.UnpackBlockFloat(f, packed, true)
				require.NoError(t, err)
				dr, dc := 1-tr, 1-tc
				for r := range 32 {
					for c := range 32 {
						if g := got[(dr*32+r)*cols+dc*32+c]; g != want[r*32+c] {
							require.Failf(t, "block float", "%s: tile (%d,%d) element (%d,%d) is %g, want %g", f, tr, tc, r, c, g, want[r*32+c])
						}
					}
				}
			}
		}
		require.NoError(t, exe.Release())
	}
}

type lineWriter struct {
	mu    sync.Mutex
	lines []string
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		w.lines = append(w.lines, l)
	}
	return len(b), nil
}

func (w *lineWriter) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

const kDPrint = `
#include "dataflow_api.h"
#include "debug/dprint.h"
void kernel_main() {
  DPRINT << "hello from " << get_arg_val<uint32_t>(0) << ENDL();
}
`

// DPRINT lines of the kernels reach Options.KernelOutput, tagged with the
// core and processor, by the time the launch returns.
func TestEmulatorDPrint(t *testing.T) {
	var out lineWriter
	d := openEmuWith(t, "n150", &out)[0].Driver().(*tt.Device)
	ctx := context.Background()
	prog := &driver.Program{
		Name: "dprint",
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{Kernels: []tt.Kernel{
			{Name: "talker", Processor: tt.Riscv1, Cores: rng(0, 0, 1, 1), Source: kDPrint,
				RuntimeArgs: []tt.Arg{constExpr(expr(t, "core_row * 10 + core_col"))}},
		}}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	require.NoError(t, exe.Launch(ctx, nil))
	lines := out.all()
	require.ElementsMatch(t, []string{
		"core (0,0) riscv_1: hello from 0", "core (0,1) riscv_1: hello from 1",
		"core (1,0) riscv_1: hello from 10", "core (1,1) riscv_1: hello from 11",
	}, lines)
}

// semaphoreAddrKernel reads semaphore 0's address from its runtime args,
// its common args and (as an L1 offset) its compile args, as kernels of
// hosts that passed CreateSemaphore's address do; it stores through the
// runtime-arg pointer, increments through the NOC at the compile-time
// offset, and reports what it saw in 8 words at page slot of dst.
const semaphoreAddrKernel = `#include "dataflow_api.h"
void kernel_main() {
  uint32_t dst = get_arg_val<uint32_t>(0);
  uint32_t slot = get_arg_val<uint32_t>(1);
  uint32_t sem_rt = get_arg_val<uint32_t>(2);
  uint32_t sem_common = get_common_arg_val<uint32_t>(0);
  constexpr uint32_t sem_ct = get_compile_time_arg_val(0);
  volatile tt_l1_ptr uint32_t* p = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(sem_rt);
  uint32_t initial = *p;
  *p = initial + 10 + slot;
  uint32_t* out = reinterpret_cast<uint32_t*>(get_write_ptr(0));
  out[0] = sem_rt == get_semaphore(0);
  out[1] = sem_common == sem_rt;
  out[2] = initial;
  out[3] = *reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(0));
  noc_semaphore_inc(get_noc_addr(my_x[0], my_y[0], sem_ct), 100);
  noc_async_atomic_barrier();
  out[4] = *p;
  out[5] = out[6] = out[7] = 0;
  InterleavedAddrGen<true> g{.bank_base_address = dst, .page_size = 32};
  noc_async_write(get_write_ptr(0), get_noc_addr(slot, g), 32);
  noc_async_write_barrier();
}
`

// A semaphore_addr arg is the semaphore's address on each core: in runtime
// and common args the pointer get_semaphore returns there, which a kernel
// may store through, and in compile args an offset the NOC calls accept.
func TestEmulatorSemaphoreAddrArgs(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	addr := tt.Arg{Kind: tt.ArgSemaphoreAddr, Semaphore: 0}
	cores := rng(0, 0, 0, 2)
	prog := &driver.Program{
		Name:   "semaphore_addr",
		Params: []driver.Param{{Name: "dst", Kind: driver.GlobalMut, DType: driver.U32}},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
			Kernels: []tt.Kernel{{
				Name: "sem", Processor: tt.Riscv0, Cores: cores, Source: semaphoreAddrKernel,
				CompileArgs: []tt.Arg{addr},
				CommonArgs:  []tt.Arg{addr},
				RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0), {Kind: tt.ArgCoreIndex}, addr},
			}},
			CBs:        []tt.CBConfig{{Cores: cores, TotalBytes: tt.N(32), Indices: []tt.CBIndex{{Index: 0, Format: "UInt32", PageBytes: tt.N(32)}}}},
			Semaphores: []tt.Semaphore{{Cores: cores, Initial: tt.N(7)}},
			Buffers:    []tt.Buffer{{Param: 0, PageSize: tt.N(32)}},
		}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	dst := allocParam(t, exe, 0, 3*32)
	for rep := range 2 {
		require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(dst)}))
		out := make([]byte, 3*32)
		require.NoError(t, d.Pool().Read(ctx, dst, 0, out))
		got := bytesU32(out)
		for c := range uint32(3) {
			want := []uint32{1, 1, 7, 17 + c, 117 + c, 0, 0, 0}
			require.Equal(t, want, got[8*c:8*c+8], "run %d, core %d: [rt == get_semaphore, common == rt, initial, stored, after the NOC increment]", rep, c)
		}
	}
}

// A ttnn-style include tree in a bundle: the kernel lives inside the
// bundle's include directory and includes a helper by a path relative to
// its own directory ("../../kernel_helper_functions/…"), as ttnn's
// operation kernels do. The loader gives the kernel its path in the tree,
// and the emulator builds it there: a header beside the kernel wins over
// one of that name at the tree's root, and the tree's root and its
// ttnn/cpp are searched too.
func TestEmulatorBundleKernelRelativeInclude(t *testing.T) {
	const kernel = `#include "dataflow_api.h"
#include "../../kernel_helper_functions/pad_value.hpp"
#include "common.hpp"
#include "ops/shared.hpp"
#include "ttnn/operations/helper.hpp"
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  uint32_t l1 = get_write_ptr(0);
  *reinterpret_cast<volatile uint32_t*>(l1) = kPadValue * 1000 + kCommon * 100 + kShared * 10 + kTtnn;
  noc_async_write(l1, get_noc_addr_from_bank_id<true>(0, out), 4);
  noc_async_write_barrier();
}
`
	files := map[string]string{
		"manifest.json": `{"name": "relinc", "params": [{"name": "out", "kind": "global_mut", "dtype": "u32", "shape": [16]}], "grid": [1, 1]}`,
		"tt.json": `{"kernels": [{"name": "writer", "processor": "riscv_0", "cores": [0, 0],
  "source": "src/ops/pad/device/kernels/writer.cpp", "runtime_args": [{"kind": "buffer_addr", "param": "out"}]}],
 "cbs": [{"index": 0, "format": "UInt32", "page_bytes": 64, "pages": 1}],
 "buffers": {"out": {"page_size": 64}},
 "includes": "src"}`,
		"src/ops/pad/device/kernels/writer.cpp":             kernel,
		"src/ops/pad/device/kernels/common.hpp":             "constexpr uint32_t kCommon = 4;\n",
		"src/ops/pad/kernel_helper_functions/pad_value.hpp": "constexpr uint32_t kPadValue = 7;\n",
		"src/common.hpp":                          "constexpr uint32_t kCommon = 9;\n",
		"src/ops/shared.hpp":                      "constexpr uint32_t kShared = 2;\n",
		"src/ttnn/cpp/ttnn/operations/helper.hpp": "constexpr uint32_t kTtnn = 1;\n",
	}
	b, err := bundle.Load(writeBundle(t, files))
	require.NoError(t, err)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	v := tt.ProgramOf(p)
	require.NotNil(t, v)
	require.Len(t, v.Kernels, 1)
	require.Equal(t, "ops/pad/device/kernels/writer.cpp", v.Kernels[0].Path)

	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, p)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	pool := d.Pool()
	out := allocParam(t, exe, 0, 64)
	require.NoError(t, pool.Write(ctx, out, 0, u32Bytes(make([]uint32, 16))))
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(out)}))
	got := make([]byte, 64)
	require.NoError(t, pool.Read(ctx, out, 0, got))
	require.Equal(t, uint32(7421), bytesU32(got)[0],
		"7 from ../../kernel_helper_functions, 4 from beside the kernel, 2 from the root, 1 from ttnn/cpp")
}

// A Metal 2.0 kernel through the Go API: its named runtime, common and
// compile args, varargs, dataflow buffer, semaphore and tensor come from the
// program's names as the generated bindings (kernel metal2_bindings, which
// cpp/emu/tests/dataflow_metal2_tests.cpp runs too). The semaphore it reads
// is the second (id 1), so a binding to the wrong id shows.
func TestEmulatorMetal2Bindings(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	ctx := context.Background()
	cores := rng(0, 0, 0, 1)
	perCore := func(s string) tt.Arg { return constExpr(expr(t, s)) }
	prog := &driver.Program{
		Name: "metal2_bindings",
		Params: []driver.Param{{Name: "scale_var", Kind: driver.Variable, DType: driver.U32},
			{Name: "out", Kind: driver.GlobalMut, DType: driver.U32}},
		Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{
			Kernels: []tt.Kernel{{
				Name: "reader", Processor: tt.Riscv0, Cores: cores, Source: sharedKernel(t, "metal2_bindings"),
				NamedRuntimeArgs: []tt.NamedArg{{Name: "page", Arg: tt.Arg{Kind: tt.ArgCoreIndex}},
					{Name: "base", Arg: perCore("10 * (core_index + 1)")}},
				RuntimeArgs:       []tt.Arg{perCore("100 * (core_index + 1)")},
				NamedCommonArgs:   []tt.NamedArg{{Name: "scale", Arg: param(tt.ArgParam, 0)}},
				CommonArgs:        []tt.Arg{tt.Const(55)},
				NamedCompileArgs:  []tt.NamedArg{{Name: "bias", Arg: tt.Const(7)}},
				DFBs:              map[string]string{"scratch": "scratch_cb"},
				SemaphoreBindings: map[string]string{"go": "go"},
				Tensors:           map[string]string{"out": "out"},
			}},
			CBs: []tt.CBConfig{{Cores: cores, TotalBytes: tt.N(64),
				Indices: []tt.CBIndex{{Index: 3, Name: "scratch_cb", Format: "UInt32", PageBytes: tt.N(32)}}}},
			Semaphores: []tt.Semaphore{{Name: "idle", Cores: cores}, {Name: "go", Cores: cores, Initial: tt.N(5)}},
			Buffers:    []tt.Buffer{{Param: 1, PageSize: tt.N(32)}},
		}}},
	}
	exe, err := backends.DeviceOf(d).Compile(ctx, prog)
	require.NoError(t, err)
	defer func() { require.NoError(t, exe.Release()) }()
	out := allocParam(t, exe, 1, 2*32)
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, 3)), driver.BufArg(out)}))
	b := make([]byte, 2*32)
	require.NoError(t, d.Pool().Read(ctx, out, 0, b))
	got := bytesU32(b)
	for c := range uint32(2) {
		want := []uint32{10*(c+1)*3 + 7, 100 * (c + 1), 55, 5, 3, 1, 32, c}
		require.Equal(t, want, got[8*c:8*c+8], "core %d: [base*scale+bias, vararg, common vararg, sem value, dfb id, sem id, page size, page]", c)
	}
}
