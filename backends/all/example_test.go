package all_test

import (
	"context"
	"fmt"
	"log"

	"github.com/zyxtt/zyxtt/backends"
	_ "github.com/zyxtt/zyxtt/backends/all"
	"github.com/zyxtt/zyxtt/tt"
)

// docs/api.md, "Three programs": each example is one of them, main's body
// as the example's.

const src = "void vadd(const float *x, const float *y, float *z, uint32_t n, uint64_t g, uint64_t g1, uint64_t g2) { for (uint64_t i = g * 256; i < n && i < (g + 1) * 256; i++) z[i] = x[i] + y[i]; }"

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// A vector add on the best device this machine has.
func Example_vectorAdd() {
	ctx := context.Background()
	prog, err := backends.ParseProgram("vadd(x: f32[], y: f32[], z: mut f32[], n: u32) grid [ceil_div(n, 256)]",
		backends.Variant{Format: backends.FormatC, Code: &backends.SourceVariant{Entry: "vadd", Source: "void vadd(const float *x, const float *y, float *z, uint32_t n, uint64_t g, uint64_t g1, uint64_t g2) { for (uint64_t i = g * 256; i < n && i < (g + 1) * 256; i++) z[i] = x[i] + y[i]; }"}})
	check(err)
	dev, exe, err := backends.CompileOn(ctx, prog, "auto") // the best device with a variant of prog
	check(err)
	defer backends.CloseAll()
	x, err := backends.BufferOf(ctx, dev.Pool(), []float32{1, 2, 3, 4})
	check(err)
	z, err := backends.NewBuffer[float32](ctx, dev.Pool(), x.Len())
	check(err)
	check(exe.Call(ctx, x, x, z, x.Len()))
	out, err := z.Read(ctx)
	check(err)
	fmt.Println(dev.Name(), out)
	// Output: c [2 4 6 8]
}

// A pipeline: chunk i's upload overlaps chunk i-1's kernel and chunk
// i-2's download, on two sets of buffers, ordered by events.
func Example_pipeline() {
	ctx := context.Background()
	prog, err := backends.ParseProgram("vadd(x: f32[], y: f32[], z: mut f32[], n: u32) grid [ceil_div(n, 256)]",
		backends.Variant{Format: backends.FormatC, Code: &backends.SourceVariant{Source: src, Entry: "vadd"}})
	check(err)
	dev, exe, err := backends.CompileOn(ctx, prog, "c")
	check(err)
	defer backends.CloseAll()
	const chunk, chunks = 4096, 16
	in, out := make([]float32, chunk*chunks), make([]float32, chunk*chunks)
	for i := range in {
		in[i] = float32(i)
	}
	var x, z [2]*backends.Buffer[float32]
	for b := range 2 {
		x[b], err = backends.NewBuffer[float32](ctx, dev.Pool(), chunk)
		check(err)
		z[b], err = backends.NewBuffer[float32](ctx, dev.Pool(), chunk)
		check(err)
	}
	var runs, reads [2]backends.Event // the last kernel and read-back of each set (nil: none yet)
	for i := range chunks {
		b, lo, hi := i%2, i*chunk, (i+1)*chunk
		up, err := x[b].WriteAsync(ctx, in[lo:hi], runs[b]) // after the kernel that last read x[b]
		check(err)
		args, err := exe.Args(x[b], x[b], z[b], chunk)
		check(err)
		runs[b], err = exe.Submit(ctx, args, up, reads[b]) // after the upload, and the read-back of z[b]
		check(err)
		reads[b], err = z[b].ReadAsync(ctx, out[lo:hi], runs[b])
		check(err)
	}
	check(backends.WaitAll(ctx, reads[0], reads[1]))
	fmt.Println(out[1], out[len(out)-1])
	// Output: 2 131070
}

// A Tenstorrent program from the kernel library, on the emulator: the
// kernels of examples/vadd's tt.json, their args named. 4999 + 4999 prints
// 9992: the FPU takes f32 operands as TF32 (10 mantissa bits), as the card
// does (docs/emulator.md, "Numerics").
func Example_tenstorrent() {
	ctx := context.Background()
	prog, err := backends.ParseProgram("vadd(x: f32[], y: f32[], z: mut f32[], n: u32) grid [2, 2]") // 2x2 cores
	check(err)
	a := tt.Named(prog.Params)
	reader, err := tt.LibraryKernel("tt/dataflow/read_chunks_binary.cpp")
	check(err)
	reader.CompileArgs = []tt.Arg{a.Accessor("x"), a.Accessor("y")}
	reader.RuntimeArgs = []tt.Arg{a.BufferAddr("x"), a.BufferAddr("y"), a.PageSize("x"), a.Param("n"), tt.CoreIndex(), tt.NumCores()}
	compute, err := tt.LibraryKernel("tt/compute/add_tiles.cpp")
	check(err)
	compute.RuntimeArgs, compute.FP32DestAcc = []tt.Arg{a.Param("n"), tt.CoreIndex(), tt.NumCores()}, true
	writer, err := tt.LibraryKernel("tt/dataflow/write_chunks.cpp")
	check(err)
	writer.RuntimeArgs = []tt.Arg{a.BufferAddr("z"), a.PageSize("z"), a.Param("n"), tt.CoreIndex(), tt.NumCores()}
	check(a.Err())
	cb := func(i int) tt.CBConfig { return tt.CB(i, "Float32", 4096, 2) } // one 1024-element f32 chunk a page
	code := tt.OneGroup(reader, compute, writer, cb(0), cb(1), cb(16))
	code.Includes, err = tt.LibraryIncludes()
	check(err)
	prog.SetVariant(backends.Variant{Format: tt.VariantFormat, Code: code})

	dev, exe, err := backends.CompileOn(ctx, prog, "tt-emu")
	check(err)
	defer backends.CloseAll()
	xs := make([]float32, 5000)
	for i := range xs {
		xs[i] = float32(i)
	}
	x, err := backends.BufferOf(ctx, dev.Pool(), xs)
	check(err)
	z, err := backends.NewBuffer[float32](ctx, dev.Pool(), len(xs))
	check(err)
	check(exe.Call(ctx, x, x, z, len(xs)))
	out, err := z.Read(ctx)
	check(err)
	fmt.Println(dev.Name(), out[0], out[1], out[4999])
	// Output: tt-emu:0 0 2 9992
}
