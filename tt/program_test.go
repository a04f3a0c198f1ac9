package tt_test

// The runtime programs the tt backend makes of a TTVariant, and the pool's
// layouts, checked against the mock runtime: the requests as sent
// (grouping, semaphore ids, resolved coordinates, declarations), the
// per-launch cache, and the bytes the device holds for tile-layout and
// block-float buffers.

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

func oneKernel(k tt.Kernel, params ...driver.Param) *driver.Program {
	if k.Processor == "" {
		k.Processor = tt.Riscv0
	}
	if k.Source == "" {
		k.Source = "void kernel_main() {}"
	}
	return &driver.Program{Name: "p", Params: params, Variants: []driver.Variant{{Format: tt.VariantFormat, Code: &tt.Program{Kernels: []tt.Kernel{k}}}}}
}

func compileOne(t *testing.T, d *tt.Device, p *driver.Program) *backends.Executable {
	t.Helper()
	exe, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.NoError(t, err)
	t.Cleanup(func() { _ = exe.Release() })
	return exe
}

func onlyRequest(t *testing.T, exe *backends.Executable) ttruntime.CompileRequest {
	t.Helper()
	reqs := exe.Driver().(*tt.Executable).Requests()
	require.Len(t, reqs, 1)
	return reqs[0]
}

// Equal args on 64 cores are one runtime_args entry; args that differ by
// row are one entry per row; every core keeps its own values.
func TestRuntimeArgsAreGrouped(t *testing.T) {
	d := open1(t, "")
	buf := driver.Param{Name: "a", Kind: driver.Global, DType: driver.F32}
	same := oneKernel(tt.Kernel{Cores: rng(0, 0, 7, 7), RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0), tt.Const(7)}}, buf)
	req := onlyRequest(t, compileOne(t, d, same))
	require.Equal(t, []ttruntime.CoreArgs{{Cores: ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 7, 7)},
		Args: []ttruntime.ArgEntry{ttruntime.ParamEntry(ttruntime.ArgBufferAddr, 0), ttruntime.ConstEntry(7)}}}, req.Kernels[0].RuntimeArgs)

	byRow := oneKernel(tt.Kernel{Cores: rng(0, 0, 7, 7), RuntimeArgs: []tt.Arg{{Kind: tt.ArgCoreRow}, tt.Const(1)}})
	req = onlyRequest(t, compileOne(t, d, byRow))
	require.Len(t, req.Kernels[0].RuntimeArgs, 8)
	for r, ca := range req.Kernels[0].RuntimeArgs {
		require.Equal(t, ttruntime.CoreRangeSet{ttruntime.Rect(uint32(r), 0, uint32(r), 7)}, ca.Cores)
		require.Equal(t, uint32(r), *ca.Args[0].Value)
	}

	// core_index, num_cores and a split over the kernel's 12 cores in
	// their order: every core gets its own values, checked by hand.
	e := func(s string) driver.GwsDim { return expr(t, s) }
	split := oneKernel(tt.Kernel{Cores: rng(1, 2, 3, 5), RuntimeArgs: []tt.Arg{
		{Kind: tt.ArgCoreIndex}, {Kind: tt.ArgNumCores}, constExpr(e("split_start(30, 3, 4)")), constExpr(e("split_units(30, 3, 4)"))}})
	req = onlyRequest(t, compileOne(t, d, split))
	got := map[ttruntime.CoreCoord][]uint32{}
	for _, ca := range req.Kernels[0].RuntimeArgs {
		for _, c := range ca.Cores.Cores(false) {
			var vals []uint32
			for _, a := range ca.Args {
				vals = append(vals, *a.Value)
			}
			got[c] = vals
		}
	}
	require.Len(t, got, 12)
	// 30 units over 12 cores of a 3x4 split grid: 6 cores take 3, 6 take 2;
	// the split counts down the columns of its own grid, whose (0,0) is
	// core (0,0) of the chip: the kernel's core (1,2) is split core (1,2).
	for i, c := range (ttruntime.CoreRangeSet{ttruntime.Rect(1, 2, 3, 5)}).Cores(false) {
		row, col := uint64(c[0]), uint64(c[1])
		var units, start uint64
		if row < 3 && col < 4 {
			k := col*3 + row
			units = 2
			if k < 6 {
				units = 3
			}
			start = 3*min(k, 6) + 2*(k-min(k, 6))
		}
		require.Equal(t, []uint32{uint32(i), 12, uint32(start), uint32(units)}, got[c], "core %v", c)
	}
}

// Semaphore ids are CreateSemaphore's: the smallest id free on every core
// of the set, in declaration order; a semaphore arg is its id.
func TestSemaphoreIDs(t *testing.T) {
	d := open1(t, "")
	p := oneKernel(tt.Kernel{Cores: rng(0, 0, 1, 7), RuntimeArgs: []tt.Arg{
		{Kind: tt.ArgSemaphore, Semaphore: 3}, {Kind: tt.ArgSemaphore, Semaphore: 2}}})
	v := tt.ProgramOf(p)
	v.Semaphores = []tt.Semaphore{
		{}, // every core of the kernels: 0
		{Cores: rng(0, 0, 0, 7), Initial: tt.N(4)}, // row 0: 1
		{Cores: rng(1, 0, 1, 7)},                   // row 1: 1 as well
		{Cores: rng(0, 3, 1, 3)},                   // both rows: 2
	}
	req := onlyRequest(t, compileOne(t, d, p))
	var ids []uint32
	for _, s := range req.Semaphores {
		ids = append(ids, s.ID)
	}
	require.Equal(t, []uint32{0, 1, 1, 2}, ids)
	require.Equal(t, uint32(4), req.Semaphores[1].Initial)
	require.Equal(t, ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 1, 7)}, req.Semaphores[0].Cores, "nil cores: every core any kernel runs on")
	require.Equal(t, uint32(2), *req.Kernels[0].RuntimeArgs[0].Args[0].Value)
	require.Equal(t, uint32(1), *req.Kernels[0].RuntimeArgs[0].Args[1].Value)

	// More than a core has: the launch says so before the runtime.
	for range 16 {
		v.Semaphores = append(v.Semaphores, tt.Semaphore{})
	}
	_, err := backends.DeviceOf(d).Compile(context.Background(), p)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "no semaphore id is free")
}

// Other cores' NOC coordinates are resolved by the driver through the
// init reply's tables (the mock's are the emulator's: x = col + 1,
// y = row + 1); bank entries and accessors stay for the runtime and make
// the driver declare the buffer's default layout.
func TestCoordinatesAndDeclarations(t *testing.T) {
	d := open1(t, "")
	at := func(r, c driver.GwsDim) tt.Coord { return tt.Coord{Row: r, Col: c} }
	p := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 3),
		CompileArgs: []tt.Arg{param(tt.ArgAccessor, 0)},
		RuntimeArgs: []tt.Arg{
			{Kind: tt.ArgCoreNocX, Core: at(driver.ConstDim(5), driver.CoreDim(driver.GwsCoreCol))},
			{Kind: tt.ArgCoreNocY, Core: at(driver.ConstDim(5), driver.CoreDim(driver.GwsCoreCol))},
			{Kind: tt.ArgBankNocX, Param: 1, Page: driver.CoreDim(driver.GwsCoreIndex)},
		}},
		driver.Param{Name: "a", Kind: driver.Global, DType: driver.F32},
		driver.Param{Name: "b", Kind: driver.Global, DType: driver.BF16})
	req := onlyRequest(t, compileOne(t, d, p))
	for c, ca := range req.Kernels[0].RuntimeArgs {
		require.Equal(t, ttruntime.CoreRangeSet{ttruntime.Rect(0, uint32(c), 0, uint32(c))}, ca.Cores)
		require.Equal(t, uint32(c+1), *ca.Args[0].Value, "NOC x of core (5, %d)", c)
		require.Equal(t, uint32(6), *ca.Args[1].Value, "NOC y of row 5")
		require.Equal(t, ttruntime.BankEntry(ttruntime.ArgBankNocX, 1, uint32(c)), ca.Args[2])
	}
	require.Equal(t, []ttruntime.BufferDecl{
		{Param: 0, BufferSpec: ttruntime.BufferSpec{PageSize: 2048, Placement: "dram", Layout: "interleaved"}},
		{Param: 1, BufferSpec: ttruntime.BufferSpec{PageSize: 2048, Placement: "dram", Layout: "interleaved"}},
	}, req.Buffers, "the default layout of params addressed by layout")

	bad := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0), RuntimeArgs: []tt.Arg{
		{Kind: tt.ArgCoreNocX, Core: at(driver.ConstDim(8), driver.ConstDim(0))}}})
	_, err := backends.DeviceOf(d).Compile(context.Background(), bad)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "outside the chip's worker grid")
}

// A program whose grid and core sets read a Variable is built once per
// value it is launched with; Release drops every one of them.
func TestRuntimeProgramsPerLaunch(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	exe, err := backends.DeviceOf(d).Compile(ctx, vaddProgram())
	require.NoError(t, err)
	e := exe.Driver().(*tt.Executable)
	require.Zero(t, e.Programs())
	args := launchArgs(t, d, 4096, 2)
	for _, n := range []uint64{2, 4, 2, 4, 8} {
		args[0] = driver.VarArg(driver.UintConst(driver.U32, n))
		require.NoError(t, exe.Launch(ctx, args))
	}
	require.Equal(t, 3, e.Programs())
	for _, r := range e.Requests() {
		for _, k := range r.Kernels {
			n := k.Cores[0][3] + 1
			require.Equal(t, ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 0, n-1)}, k.Cores, "kernels without cores run on the launch grid")
		}
	}
	ids := e.ProgramIDs()
	require.NoError(t, exe.Release())
	for _, id := range ids {
		err := d.Client().Release(ctx, ttruntime.ProgramRequest{Program: id})
		var re *ttruntime.RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, ttruntime.CodeUnknownProgram, re.Code, "program %d was released", id)
	}
}

// The L1 of a core holds its circular buffers and the L1 buffers of the
// launch; a launch that needs more is refused with ErrOutOfMemory naming
// the core.
func TestL1BudgetAtLaunch(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	usable := d.Runtime().L1.Usable()
	p := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0)}, driver.Param{Name: "l1", Kind: driver.GlobalMut, DType: driver.U8})
	v := tt.ProgramOf(p)
	v.CBs = []tt.CBConfig{{Cores: rng(0, 0, 0, 0), TotalBytes: tt.N(1 << 20), Indices: []tt.CBIndex{{Index: 0, Format: "UInt8", PageBytes: tt.N(1 << 20)}}}}
	v.Buffers = []tt.Buffer{{Param: 0, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(4096),
		Shard: &tt.Shard{Cores: *rng(0, 0, 0, 0), Shape: [2]uint32{96, 1}, Tensor: [2]uint32{96, 1}}}}
	exe := compileOne(t, d, p)
	b := allocParam(t, exe, 0, 96*4096)
	err := exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(b)})
	require.ErrorIs(t, err, driver.ErrOutOfMemory)
	require.ErrorContains(t, err, "run: core (0, 0) needs")
	require.ErrorContains(t, err, "for the program's circular buffers and the run's L1 buffers")
	require.Greater(t, uint64(1<<20+96*4096), usable)
	// A smaller buffer fits (once the large one is gone: the device, like
	// a card, keeps a core's circular buffers off every L1 buffer on it).
	require.NoError(t, d.Pool().Release(b))
	v.Buffers[0].Shard.Shape, v.Buffers[0].Shard.Tensor = [2]uint32{16, 1}, [2]uint32{16, 1}
	exe2 := compileOne(t, d, p)
	b2 := allocParam(t, exe2, 0, 16*4096)
	require.NoError(t, exe2.Launch(ctx, []driver.LaunchArg{driver.BufArg(b2)}))
}

// rawDevice reads a pool buffer's bytes as the runtime holds them.
func rawDevice(t *testing.T, d *tt.Device, id driver.BufferID, n int) []byte {
	t.Helper()
	rid, err := d.Pool().(*tt.Pool).RuntimeBuffer(id)
	require.NoError(t, err)
	seg, err := shm.Create(shm.NewName(), int64(n))
	require.NoError(t, err)
	defer seg.Close()
	require.NoError(t, d.Client().Read(context.Background(), ttruntime.TransferRequest{Buffer: rid, Segment: seg.Name(), Length: uint64(n)}))
	return bytes.Clone(seg.Bytes()[:n])
}

// tiledAt is where element (r, c) of a rows x cols matrix sits in tile
// layout, by the definition: tiles in row-major order, four 16x16 faces
// per tile in the order top-left, top-right, bottom-left, bottom-right,
// each face row-major.
func tiledAt(r, c, cols int) int {
	tile := (r/32)*(cols/32) + c/32
	face := 0
	if r%32 >= 16 {
		face += 2
	}
	if c%32 >= 16 {
		face++
	}
	return tile*1024 + face*256 + (r%16)*16 + c%16
}

func tileProgram(dt driver.DType, rows, cols uint64, format string) *driver.Program {
	p := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0)}, driver.Param{Name: "m", Kind: driver.GlobalMut, DType: dt})
	tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 0, Tile: true, Rows: rows, Cols: cols, Format: format}}
	return p
}

// The pool tilizes on Write and untilizes on Read, for every element size,
// over batches of matrices; the device holds the tiles as defined.
func TestTileLayoutPool(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	p := d.Pool()
	const rows, cols, batches = 64, 96, 2
	for _, dt := range []driver.DType{driver.BF16, driver.F32, driver.I32, driver.U16, driver.U8, driver.I8} {
		es := dt.Size()
		exe := compileOne(t, d, tileProgram(dt, rows, cols, ""))
		n := int64(batches * rows * cols * es)
		b := allocParam(t, exe, 0, n)
		size, err := p.Size(b)
		require.NoError(t, err)
		require.Equal(t, n, size)
		host := make([]byte, n)
		for i := range host {
			host[i] = byte(rand.Uint32())
		}
		require.NoError(t, p.Write(ctx, b, 0, host))
		dev := rawDevice(t, d, b, int(n))
		for bt := range batches {
			for r := range rows {
				for c := range cols {
					h := ((bt*rows+r)*cols + c) * es
					v := (bt*rows*cols + tiledAt(r, c, cols)) * es
					if !bytes.Equal(host[h:h+es], dev[v:v+es]) {
						require.Failf(t, "tilize", "%s batch %d element (%d,%d) is not at its tile position", dt, bt, r, c)
					}
				}
			}
		}
		back := make([]byte, n)
		require.NoError(t, p.Read(ctx, b, 0, back))
		require.Equal(t, host, back, "%s: untilized on read", dt)
		unit, err := p.(*tt.Pool).TransferUnit(b)
		require.NoError(t, err)
		require.EqualValues(t, 32*cols*es, unit)
		// Whole tile rows may be moved alone (the second tile row of the
		// second matrix); anything else is refused and moves nothing.
		row := int64(32 * cols * es)
		patch := bytes.Repeat([]byte{0x5a}, int(row))
		require.NoError(t, p.Write(ctx, b, 3*row, patch))
		copy(host[3*row:], patch)
		require.NoError(t, p.Read(ctx, b, 0, back))
		require.Equal(t, host, back)
		part := make([]byte, row)
		require.NoError(t, p.Read(ctx, b, row, part))
		require.Equal(t, host[row:2*row], part)
		for _, bad := range [][2]int64{{1, row}, {0, row - 1}, {row / 2, row}} {
			err := p.Write(ctx, b, bad[0], make([]byte, bad[1]))
			require.ErrorIs(t, err, driver.ErrInvalidArgument)
			require.ErrorContains(t, err, "not whole tile rows")
			require.ErrorIs(t, p.Read(ctx, b, bad[0], make([]byte, bad[1])), driver.ErrInvalidArgument)
		}
		require.NoError(t, p.Read(ctx, b, 0, back))
		require.Equal(t, host, back, "a refused write changed nothing")
		// The host size must be whole matrices.
		_, err = exe.AllocParam(ctx, 0, n+int64(es))
		require.ErrorIs(t, err, driver.ErrInvalidArgument)
	}
}

// A tile row larger than the staging region moves through a region of its
// own.
func TestTileLayoutPoolWideRows(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	const rows, cols = 64, 65568 // a tile row of 32 x 65568 f32 is over 8 MiB
	exe := compileOne(t, d, tileProgram(driver.F32, rows, cols, ""))
	n := int64(rows * cols * 4)
	require.Greater(t, n/2, int64(tt.StagingBytes))
	b := allocParam(t, exe, 0, n)
	host := make([]byte, n)
	for i := range host {
		host[i] = byte(i * 7)
	}
	p := d.Pool()
	require.NoError(t, p.Write(ctx, b, 0, host))
	dev := rawDevice(t, d, b, int(n))
	for _, rc := range [][2]int{{0, 0}, {17, 40000}, {63, cols - 1}, {40, 16}} {
		h, v := (rc[0]*cols+rc[1])*4, tiledAt(rc[0], rc[1], cols)*4
		require.Equal(t, host[h:h+4], dev[v:v+4], "element %v", rc)
	}
	back := make([]byte, n)
	require.NoError(t, p.Read(ctx, b, 0, back))
	require.True(t, bytes.Equal(host, back))
}

// Block-float storage: the device holds PackBlockFloat's bytes of every
// 32x32 tile (row-major tiles of the matrix), a read gives the values the
// format holds, and the device size is the packed size while Size is the
// host's.
func TestTileLayoutPoolBlockFloat(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	p := d.Pool()
	const rows, cols = 64, 96
	vals := make([]float32, rows*cols)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range vals {
		vals[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(12)-6)))
	}
	for _, f := range []tt.BlockFloatFormat{tt.Bfp8b, tt.Bfp4b} {
		for _, dt := range []driver.DType{driver.F32, driver.BF16} {
			exe := compileOne(t, d, tileProgram(dt, rows, cols, f.String()))
			es := dt.Size()
			host := make([]byte, rows*cols*es)
			src := make([]float32, len(vals))
			for i, v := range vals {
				if dt == driver.BF16 {
					b := bf16Bits(v)
					binary.LittleEndian.PutUint16(host[2*i:], b)
					src[i] = bf16Value(b)
				} else {
					binary.LittleEndian.PutUint32(host[4*i:], math.Float32bits(v))
					src[i] = v
				}
			}
			b := allocParam(t, exe, 0, int64(len(host)))
			size, err := p.Size(b)
			require.NoError(t, err)
			require.EqualValues(t, len(host), size)
			require.NoError(t, p.Write(ctx, b, 0, host))
			tiles := (rows / 32) * (cols / 32)
			dev := rawDevice(t, d, b, tiles*f.TileBytes())
			back := make([]byte, len(host))
			require.NoError(t, p.Read(ctx, b, 0, back))
			for tr := range rows / 32 {
				for tc := range cols / 32 {
					want, err := tt.PackBlockFloat(f, tileOf(src, cols, tr, tc), true)
					require.NoError(t, err)
					k := tr*(cols/32) + tc
					require.Equal(t, want, dev[k*f.TileBytes():(k+1)*f.TileBytes()], "%s %s tile (%d,%d)", f, dt, tr, tc)
					dec, err := tt.UnpackBlockFloat(f, want, true)
					require.NoError(t, err)
					for rr := range 32 {
						for cc := range 32 {
							i := (tr*32+rr)*cols + tc*32 + cc
							var g float32
							if dt == driver.BF16 {
								g = bf16Value(binary.LittleEndian.Uint16(back[2*i:]))
								require.Equal(t, bf16Bits(dec[rr*32+cc]), bf16Bits(g), "%s bf16 element %d", f, i)
								continue
							}
							g = math.Float32frombits(binary.LittleEndian.Uint32(back[4*i:]))
							require.Equal(t, dec[rr*32+cc], g, "%s f32 element %d", f, i)
						}
					}
				}
			}
		}
	}
}

// A buffer param's declared layout is what AllocParam allocates and what a
// launch insists on.
func TestAllocParamAndLayoutChecks(t *testing.T) {
	d := open1(t, "")
	ctx := context.Background()
	p := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0), RuntimeArgs: []tt.Arg{param(tt.ArgBufferAddr, 0), param(tt.ArgBufferAddr, 1)}},
		driver.Param{Name: "small", Kind: driver.Global, DType: driver.U32},
		driver.Param{Name: "any", Kind: driver.Global, DType: driver.U32},
		driver.Param{Name: "n", Kind: driver.Variable, DType: driver.U32})
	tt.ProgramOf(p).Buffers = []tt.Buffer{{Param: 0, PageSize: tt.N(4)}}
	exe := compileOne(t, d, p)
	small := allocParam(t, exe, 0, 400)
	plain, err := d.Pool().Alloc(ctx, 400)
	require.NoError(t, err)
	defer d.Pool().Release(plain)
	n := driver.VarArg(driver.UintConst(driver.U32, 1))
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(small), driver.BufArg(plain), n}), "an undeclared param takes any buffer")
	require.NoError(t, exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(small), driver.BufArg(small), n}))
	err = exe.Launch(ctx, []driver.LaunchArg{driver.BufArg(plain), driver.BufArg(plain), n})
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "param 0 (small): the buffer is dram interleaved, 2048-byte pages, but the program declares dram interleaved, 4-byte pages")

	_, err = exe.AllocParam(ctx, 2, 64)
	require.ErrorIs(t, err, driver.ErrInvalidArgument, "a Variable has no buffer")
	_, err = exe.AllocParam(ctx, 9, 64)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	_, err = exe.AllocParam(ctx, 0, 0)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	// 4-byte pages are charged as such: whole 32-byte aligned pages.
	free := d.Pool().FreeBytes()
	b := allocParam(t, exe, 0, 40)
	require.Equal(t, free-10*32, d.Pool().FreeBytes())
	require.NoError(t, d.Pool().Release(b))

	// A shard grid that reads a Variable cannot be evaluated without args.
	q := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0)}, driver.Param{Name: "s", Kind: driver.Global, DType: driver.U32},
		driver.Param{Name: "n", Kind: driver.Variable, DType: driver.U32})
	tt.ProgramOf(q).Buffers = []tt.Buffer{{Param: 0, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(64), Shard: &tt.Shard{
		Cores: tt.CoreSet{Ranges: []tt.CoreRange{{End: tt.Coord{Row: driver.ConstDim(0), Col: driver.ParamDim(1)}}}}, Shape: [2]uint32{1, 1}, Tensor: [2]uint32{1, 1}}}}
	qe, err := backends.DeviceOf(d).Compile(ctx, q)
	require.NoError(t, err)
	_, err = qe.Driver().(driver.ParamAllocator).AllocParam(ctx, 0, 64)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "shard grid")
	require.NoError(t, qe.Release())

	// A spec the runtime would refuse is refused before it is sent: at
	// compile, where the declaration is checked, and at AllocParam, where
	// the size meets it.
	r := oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 0)}, driver.Param{Name: "s", Kind: driver.Global, DType: driver.U32})
	tt.ProgramOf(r).Buffers = []tt.Buffer{{Param: 0, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(64), Shard: &tt.Shard{
		Cores: *rng(0, 0, 0, 3), Shape: [2]uint32{2, 3}, Tensor: [2]uint32{8, 4}}}}
	_, err = backends.DeviceOf(d).Compile(ctx, r)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "compile.buffers[0].shard.shape: a height-sharded buffer deals its 32 pages out in shard rows of shape[1] = 3 pages")
	tt.ProgramOf(r).Buffers[0].Shard.Shape = [2]uint32{2, 4}
	re := compileOne(t, d, r)
	_, err = re.AllocParam(ctx, 0, 64*64)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "alloc.shard.tensor: the tensor holds 32 pages; the buffer has 64")
	b, err = re.AllocParam(ctx, 0, 64*32)
	require.NoError(t, err)
	require.NoError(t, d.Pool().Release(b))
}

// DPRINT lines go to Options.KernelOutput when it is set (the runtime is
// asked for them) and not otherwise.
func TestKernelOutputReachesTheOptions(t *testing.T) {
	var out lineWriter
	d := openPrinting(t, &out)
	exe := compileOne(t, d, oneKernel(tt.Kernel{Cores: rng(0, 0, 0, 1)}))
	require.NoError(t, exe.Launch(context.Background(), nil))
	require.Equal(t, []string{"core (0,0) riscv_0: tick", "core (0,1) riscv_0: tick"}, out.all())
}

// CheckLaunch gives the request Compile and Launch would send, and the
// errors of the program's own rules, without a runtime; the runtime's rules
// answer at the launch that compiles it.
func TestCheckLaunch(t *testing.T) {
	d := open1(t, "")
	info := d.Runtime()
	args := []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, 4)), driver.BufArg(1), driver.BufArg(2), driver.BufArg(3)}
	req, err := tt.CheckLaunch(vaddProgram(), args, info)
	require.NoError(t, err)
	require.Len(t, req.Kernels, 3)
	for _, k := range req.Kernels {
		require.Equal(t, ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 0, 3)}, k.Cores)
	}
	args[0] = driver.VarArg(driver.UintConst(driver.U32, 9))
	_, err = tt.CheckLaunch(vaddProgram(), args, info)
	require.ErrorIs(t, err, driver.ErrInvalidArgument, "a launch grid past the chip")

	bad := vaddProgram()
	tt.ProgramOf(bad).CBs[1].Indices[0].Index = 0
	args[0] = driver.VarArg(driver.UintConst(driver.U32, 4))
	_, err = tt.CheckLaunch(bad, args, info)
	require.NoError(t, err, "a CB index twice on a core is the runtime's rule")
	exe := compileOne(t, d, bad)
	launch := []driver.LaunchArg{driver.VarArg(driver.UintConst(driver.U32, 4))}
	for i := 1; i <= 3; i++ {
		buf, err := exe.AllocParam(context.Background(), i, 4*4096)
		require.NoError(t, err)
		launch = append(launch, driver.BufArg(buf))
	}
	err = exe.Launch(context.Background(), launch)
	require.ErrorIs(t, err, driver.ErrInvalidArgument)
	require.ErrorContains(t, err, "compile.cbs[1].indices: CB 0 on core (0, 0) is already configured by cbs[0]")
}

// tileOf is tile (tr, tc), row-major, of a row-major matrix of cols columns.
func tileOf(m []float32, cols, tr, tc int) []float32 {
	tile := make([]float32, tt.TileValues)
	for r := range tt.TileDim {
		for c := range tt.TileDim {
			tile[r*tt.TileDim+c] = m[(tr*tt.TileDim+r)*cols+tc*tt.TileDim+c]
		}
	}
	return tile
}
