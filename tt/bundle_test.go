package tt_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/internal/testfiles"
	"github.com/zyxtt/zyxtt/tt"
)

// tt.json is the tt format's own file: these tests load bundles that hold
// one (bundle.Load, which hands the file to tt.Program.LoadBundle) and check
// the program bound at var values (BindBundle).

// writeBundle makes a bundle directory from file contents.
var writeBundle = testfiles.Dir

const v2Manifest = `{"name": "v2",
 "vars": [{"name": "n", "dtype": "u32", "default": 64}, {"name": "tiles", "dtype": "u32", "default": 10}],
 "params": [
   {"name": "a", "kind": "global", "dtype": "bf16", "shape": [64, 128]},
   {"name": "s", "kind": "global", "dtype": "bf16", "shape": [128, 64]},
   {"name": "w", "kind": "global", "dtype": "f32", "shape": [2, 64, 64]},
   {"name": "r", "kind": "global", "dtype": "u32", "shape": [16, 8]},
   {"name": "c", "kind": "global_mut", "dtype": "bf16", "shape": [64, 128]},
   {"name": "n", "kind": "variable"}],
 "grid": [1]}`

const v2TT = `{
 "semaphores": [{"name": "ready", "cores": [[0, 0, 1, 3]], "initial": "tiles / 10"}, {"cores": [0, 0, 1, 3]}],
 "kernels": [
  {"name": "reader1", "processor": "riscv_0", "cores": {"of": [0, 0, 1, 3], "from": 0, "to": "split_group1(tiles, 2, 4)"},
   "source": "k.cpp", "defines": {"X": "1"},
   "compile_args": [{"kind": "accessor", "param": "a"}, "tiles * 2"],
   "named_compile_args": {"page": {"kind": "page_size", "param": "a"}, "num_tiles": "tiles"},
   "runtime_args": [{"name": "src", "kind": "buffer_addr", "param": "a"}, "split_start(tiles, 2, 4)", "split_units(tiles, 2, 4)",
      {"kind": "bank_id", "param": "a", "page": "split_start(tiles, 2, 4)"},
      {"kind": "core_noc_x", "core": ["core_row", "n - 64"]}, {"kind": "semaphore", "semaphore": "ready"}, {"kind": "semaphore", "semaphore": 1},
      {"kind": "semaphore_addr", "semaphore": "ready"}],
   "common_args": [{"kind": "param", "param": "n"}]},
  {"name": "reader2", "processor": "riscv_0", "cores": {"of": [0, 0, 1, 3], "from": "split_group1(tiles, 2, 4)", "to": "split_cores(tiles, 2, 4)"},
   "source": "k.cpp", "runtime_args": ["split_start(tiles, 2, 4)"]},
  {"name": "compute", "processor": "compute", "cores": [[0, 0, 1, 3]], "source": "k.cpp",
   "compute_config": {"math_fidelity": "LoFi", "fp32_dest_acc": true, "dst_full_sync": true, "unpack_to_dest_fp32": [0, 2]}},
  {"processor": "riscv_1", "noc": 0, "cores": [[0, 0, 0, 3], [1, 0, 1, 3]], "source": "tt/writer.cpp",
   "runtime_args": ["core_index * 100 + num_cores"]}
 ],
 "cbs": [
   {"cores": [[0, 0, 1, 3]], "pages": 2, "indices": [{"index": 0, "format": "Float16_b"}, {"index": 1, "format": "Float16_b", "page_bytes": 2048}]},
   {"cores": [[0, 0, 1, 3]], "total_bytes": "2 * 1088", "indices": [{"index": 2, "format": "Bfp8_b"}]},
   {"cores": [[0, 0, 1, 1]], "buffer": "s", "indices": [{"index": 3, "format": "Float16_b"}]},
   {"index": 16, "format": "Float16_b", "pages": 2, "tile": [16, 32]}
 ],
 "buffers": {
   "a": {"page_size": 2048},
   "s": {"placement": "l1", "memory_layout": "height_sharded", "layout": "tile", "shard": {"cores": [[0, 0, 1, 1]], "shape": [32, 64]}},
   "w": {"layout": "tile", "format": "Bfp8_b"},
   "r": {"placement": "l1", "memory_layout": "width_sharded", "page_size": 16, "shard": {"cores": [0, 0, 0, 1], "shape": [16, 4], "orientation": "col_major"}}
 },
 "includes": "inc",
 "require": [{"zero": "n % 32", "message": "n must be whole tiles"}]
}`

func v2Files() map[string]string {
	return map[string]string{"manifest.json": v2Manifest, "tt.json": v2TT, "k.cpp": "// k", "tt/writer.cpp": "// w",
		"inc/common.h": "#define COMMON 1\n", "inc/sub/x.h": "#define X 2\n", "inc/.hidden": "skipped"}
}

func TestTTV2(t *testing.T) {
	b, err := bundle.Load(writeBundle(t, v2Files()))
	require.NoError(t, err)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	v := tt.ProgramOf(p)
	require.NotNil(t, v)
	c := backends.ConstDim
	split := func(op driver.GwsOp) backends.GwsDim { return driver.SplitDim(op, c(10), c(2), c(4)) }
	rect := func(r0, c0, r1, c1 uint64) *tt.CoreSet {
		return &tt.CoreSet{Ranges: []tt.CoreRange{tt.Rect(r0, c0, r1, c1)}}
	}
	// split_work_to_cores(10 tiles, 2x4): 8 cores, the first 2 take 2 tiles.
	reader1 := tt.Kernel{Name: "reader1", Processor: tt.Riscv0, Source: "// k", Defines: map[string]string{"X": "1"},
		Cores:            &tt.CoreSet{Slice: &tt.CoreSlice{Of: tt.Rect(0, 0, 1, 3), From: c(0), To: c(2)}},
		CompileArgs:      []tt.Arg{{Kind: tt.ArgAccessor, Param: 0}, tt.Const(20)},
		NamedCompileArgs: []tt.NamedArg{{Name: "num_tiles", Arg: tt.Const(10)}, {Name: "page", Arg: tt.Arg{Kind: tt.ArgPageSize, Param: 0}}},
		RuntimeArgs: []tt.Arg{
			{Kind: tt.ArgBufferAddr, Param: 0},
			{Kind: tt.ArgConst, Value: split(driver.GwsSplitStart)},
			{Kind: tt.ArgConst, Value: split(driver.GwsSplitUnits)},
			{Kind: tt.ArgBankID, Param: 0, Page: split(driver.GwsSplitStart)},
			{Kind: tt.ArgCoreNocX, Core: tt.Coord{Row: driver.CoreDim(driver.GwsCoreRow), Col: c(0)}},
			{Kind: tt.ArgSemaphore, Semaphore: 0},
			{Kind: tt.ArgSemaphore, Semaphore: 1},
			{Kind: tt.ArgSemaphoreAddr, Semaphore: 0},
		},
		CommonArgs: []tt.Arg{{Kind: tt.ArgParam, Param: 5}},
	}
	require.Equal(t, reader1, v.Kernels[0])
	require.Equal(t, &tt.CoreSet{Slice: &tt.CoreSlice{Of: tt.Rect(0, 0, 1, 3), From: c(2), To: c(8)}}, v.Kernels[1].Cores)
	require.Equal(t, rect(0, 0, 1, 3), v.Kernels[2].Cores)
	require.Equal(t, "LoFi", v.Kernels[2].MathFidelity)
	require.True(t, v.Kernels[2].FP32DestAcc)
	require.True(t, v.Kernels[2].DstFullSync)
	require.Equal(t, []uint32{0, 2}, v.Kernels[2].UnpackToDestFP32)
	w := v.Kernels[3]
	require.Equal(t, "writer", w.Name) // from the source's name
	require.Equal(t, 0, *w.NOC)
	require.Equal(t, &tt.CoreSet{Ranges: []tt.CoreRange{tt.Rect(0, 0, 0, 3), tt.Rect(1, 0, 1, 3)}}, w.Cores)
	require.Equal(t, driver.BinaryDim(driver.GwsAdd, driver.BinaryDim(driver.GwsMul, driver.CoreDim(driver.GwsCoreIndex), c(100)), driver.CoreDim(driver.GwsNumCores)), w.RuntimeArgs[0].Value)

	s := 1
	require.Equal(t, []tt.CBConfig{
		{Cores: rect(0, 0, 1, 3), TotalBytes: tt.N(4096), Indices: []tt.CBIndex{{Index: 0, Format: "Float16_b", PageBytes: tt.N(2048)}, {Index: 1, Format: "Float16_b", PageBytes: tt.N(2048)}}},
		{Cores: rect(0, 0, 1, 3), TotalBytes: tt.N(2176), Indices: []tt.CBIndex{{Index: 2, Format: "Bfp8_b", PageBytes: tt.N(1088)}}},
		// The shard of s: 1x2 tiles of 2048 bytes.
		{Cores: rect(0, 0, 1, 1), TotalBytes: tt.N(4096), Indices: []tt.CBIndex{{Index: 3, Format: "Float16_b", PageBytes: tt.N(2048)}}, Buffer: &s},
		// A 16x32 bf16 tile is 1024 bytes.
		{TotalBytes: tt.N(2048), Indices: []tt.CBIndex{{Index: 16, Format: "Float16_b", PageBytes: tt.N(1024), TileRows: 16, TileCols: 32}}},
	}, v.CBs)
	require.Equal(t, []tt.Semaphore{{Name: "ready", Cores: rect(0, 0, 1, 3), Initial: tt.N(1)}, {Cores: rect(0, 0, 1, 3)}}, v.Semaphores)
	require.Equal(t, []tt.Buffer{
		{Param: 0, Placement: "dram", Layout: "interleaved", PageSize: tt.N(2048)},
		// 128x64 bf16 in tiles: 4x2 tiles, shards of 1x2 tiles on 4 cores.
		{Param: 1, Placement: "l1", Layout: "height_sharded", PageSize: tt.N(2048), Tile: true, Rows: 128, Cols: 64,
			Shard: &tt.Shard{Cores: *rect(0, 0, 1, 1), Shape: [2]uint32{1, 2}, Tensor: [2]uint32{4, 2}, Orientation: "row_major"}},
		// Bfp8_b tiles of the last two dims.
		{Param: 2, Placement: "dram", Layout: "interleaved", PageSize: tt.N(1088), Tile: true, Rows: 64, Cols: 64, Format: "Bfp8_b"},
		// 16x8 u32 in 16-byte sticks of 4: 16x2 pages, shards of 16x1.
		{Param: 3, Placement: "l1", Layout: "width_sharded", PageSize: tt.N(16),
			Shard: &tt.Shard{Cores: *rect(0, 0, 0, 1), Shape: [2]uint32{16, 1}, Tensor: [2]uint32{16, 2}, Orientation: "col_major"}},
	}, v.Buffers)
	require.Equal(t, []tt.Include{{Path: "common.h", Source: "#define COMMON 1\n"}, {Path: "sub/x.h", Source: "#define X 2\n"}}, v.Includes)
	// Every kernel names its cores: the grid is the box around them.
	require.Equal(t, []backends.GwsDim{c(2), c(4)}, p.Variant(tt.VariantFormat).Grid)

	// At other var values the groups move: 16 tiles split evenly, so the
	// second group is empty and its kernel is left out.
	vals, err := b.VarValues(map[string]string{"tiles": "16"})
	require.NoError(t, err)
	p, err = b.Program(vals)
	require.NoError(t, err)
	require.Len(t, tt.ProgramOf(p).Kernels, 3)
	require.Equal(t, c(8), tt.ProgramOf(p).Kernels[0].Cores.Slice.To)
}

// TestTTSplitCoverage checks the two core groups of split work against
// split_work_to_cores: every unit is on exactly one core, in order.
func TestTTSplitCoverage(t *testing.T) {
	b, err := bundle.Load(writeBundle(t, v2Files()))
	require.NoError(t, err)
	for tiles := 1; tiles <= 40; tiles++ {
		vals, err := b.VarValues(map[string]string{"tiles": strconv.Itoa(tiles)})
		require.NoError(t, err)
		p, err := b.Program(vals)
		require.NoError(t, err)
		covered := make([]int, tiles)
		for _, k := range tt.ProgramOf(p).Kernels {
			startArg := map[string]int{"reader1": 1, "reader2": 0}
			ai, ok := startArg[k.Name]
			if !ok {
				continue
			}
			cores := sliceCores(t, k.Cores)
			for i, cr := range cores {
				env := driver.CoreEnv{Row: cr[0], Col: cr[1], Index: uint64(i), Count: uint64(len(cores))}
				start, err := k.RuntimeArgs[ai].Value.EvalCore(nil, env)
				require.NoError(t, err)
				units, err := driver.SplitDim(driver.GwsSplitUnits, backends.ConstDim(uint64(tiles)), backends.ConstDim(2), backends.ConstDim(4)).EvalCore(nil, env)
				require.NoError(t, err)
				require.NotZero(t, units, "tiles %d core %v", tiles, cr)
				for u := start; u < start+units; u++ {
					covered[u]++
				}
			}
		}
		for u, n := range covered {
			require.Equal(t, 1, n, "tiles %d: unit %d covered %d times", tiles, u, n)
		}
	}
}

// sliceCores lists the cores of a bound slice, down the columns of its
// rectangle (split_work_to_cores' order).
func sliceCores(t *testing.T, s *tt.CoreSet) [][2]uint64 {
	t.Helper()
	require.NotNil(t, s.Slice)
	of := s.Slice.Of
	r0, c0, r1 := of.Start.Row.Value, of.Start.Col.Value, of.End.Row.Value
	rows := r1 - r0 + 1
	var out [][2]uint64
	for k := s.Slice.From.Value; k < s.Slice.To.Value; k++ {
		out = append(out, [2]uint64{r0 + k%rows, c0 + k/rows})
	}
	return out
}

// v2Edit is one change to the v2 bundle: old becomes new in tt.json and
// the manifest.
type v2Edit struct{ old, new string }

// v2Case is a broken v2 bundle: the edits and what the error says.
type v2Case struct {
	name   string
	edits  []v2Edit
	file   string
	substr string
}

// writeV2 writes the v2 bundle with the case's edits.
func writeV2(t *testing.T, tc v2Case) string {
	files := v2Files()
	for _, e := range tc.edits {
		require.Contains(t, files["tt.json"]+files["manifest.json"], e.old, "edit %q", e.old)
		files["tt.json"] = strings.Replace(files["tt.json"], e.old, e.new, 1)
		files["manifest.json"] = strings.Replace(files["manifest.json"], e.old, e.new, 1)
	}
	return writeBundle(t, files)
}

// TestTTV2Errors: what the driver reads of tt.json (its shape, names,
// expressions, defaults and host layouts) is checked when the bundle loads
// or binds, naming the file and the field.
func TestTTV2Errors(t *testing.T) {
	for _, tc := range []v2Case{
		{"both forms", []v2Edit{{`"kernels": [`, `"reader": {"source": "k.cpp"}, "kernels": [`}}, "tt.json", "kernels: give either kernels or the reader/compute/writer shorthand"},
		{"dup name", []v2Edit{{`"name": "reader2"`, `"name": "reader1"`}}, "tt.json", `kernels[1].name: "reader1" is also the name of kernels[0]`},
		{"negative param ordinal", []v2Edit{{`{"kind": "bank_id", "param": "a", "page"`, `{"kind": "bank_id", "param": -1, "page"`}}, "tt.json", "kernels[0].runtime_args[3]: want a name or an ordinal, got -1"},
		{"negative param reference", []v2Edit{{`{"kind": "bank_id", "param": "a", "page"`, `{"kind": "bank_id", "param": "$-1", "page"`}}, "tt.json", "kernels[0].runtime_args[3].param: param ordinal -1 out of range (6 params)"},
		{"unknown kernel field", []v2Edit{{`"source": "k.cpp", "defines"`, `"sourc": "k.cpp", "defines"`}}, "tt.json", "kernels[0].sourc: unknown field"},
		{"unknown arg field", []v2Edit{{`{"kind": "bank_id", "param": "a", "page"`, `{"kind": "bank_id", "param": "a", "pag"`}}, "tt.json", "kernels[0].runtime_args[3].pag: unknown field"},
		{"per-core compile arg", []v2Edit{{`"tiles * 2"`, `"core_row * 2"`}}, "tt.json", "kernels[0].compile_args[1].value: core_row * 2 reads the core it runs on"},
		{"no semaphore", []v2Edit{{`"semaphore": "ready"`, `"semaphore": "go"`}}, "tt.json", `kernels[0].runtime_args[5].semaphore: no semaphore named "go"`},
		{"semaphore index", []v2Edit{{`"semaphore": 1}`, `"semaphore": 2}`}}, "tt.json", `kernels[0].runtime_args[6].semaphore: semaphore index 2 out of range (2 semaphores)`},
		{"semaphore_addr without semaphore", []v2Edit{{`"kind": "semaphore_addr", "semaphore": "ready"`, `"kind": "semaphore_addr"`}}, "tt.json", `kernels[0].runtime_args[7].semaphore: missing (a semaphore's name or index)`},
		{"semaphore_addr with a page", []v2Edit{{`"kind": "semaphore_addr", "semaphore": "ready"`, `"kind": "semaphore_addr", "semaphore": "ready", "page": 1`}}, "tt.json", `kernels[0].runtime_args[7].page: kind semaphore_addr takes no page`},
		{"core arg", []v2Edit{{`"core": ["core_row", "n - 64"]`, `"core": [1]`}}, "tt.json", "kernels[0].runtime_args[4].core: want [row, col], got 1 values"},
		{"stray field", []v2Edit{{`{"kind": "param", "param": "n"}`, `{"kind": "param", "param": "n", "value": 3}`}}, "tt.json", "kernels[0].common_args[0].value: kind param takes no value"},
		{"range length", []v2Edit{{`"cores": [[0, 0, 1, 3]], "source"`, `"cores": [[0, 0, 1]], "source"`}}, "tt.json", "kernels[2].cores[0]: want a core [row, col] or a range"},
		{"backward range", []v2Edit{{`"cores": [[0, 0, 1, 3]], "source"`, `"cores": [1, 0, 0, 3], "source"`}}, "tt.json", "kernels[2].cores: range [1, 0, 0, 3] runs backwards"},
		{"slice past the rectangle", []v2Edit{{`"to": "split_cores(tiles, 2, 4)"`, `"to": "split_cores(tiles, 2, 4) + 1"`}}, "tt.json", "kernels[1].cores: cores 2 to 9 of a 2×4 rectangle"},
		{"per-core division by zero", []v2Edit{{`"core_index * 100 + num_cores"`, `"100 / core_col"`}}, "tt.json", "kernels[3].runtime_args[0].value: on core [0, 0]: grid expression: division by zero"},
		{"per-core overflow", []v2Edit{{`"core_index * 100 + num_cores"`, `"core_row * 4294967296"`}}, "tt.json", "kernels[3].runtime_args[0].value: on core [1, 0]: value 4294967296 does not fit in 32 bits"},
		{"no kernel anywhere", []v2Edit{{`"processor": "compute", "cores": [[0, 0, 1, 3]]`, `"processor": "compute", "cores": {"of": [0, 0, 1, 3], "from": 0, "to": 0}`}}, "", ""},
		{"buffer of nothing", []v2Edit{{`"a": {"page_size": 2048}`, `"zz": {"page_size": 2048}`}}, "tt.json", `buffers.zz: no buffer param named "zz"`},
		{"buffer of a var", []v2Edit{{`"a": {"page_size": 2048}`, `"n": {"page_size": 2048}`}}, "tt.json", `buffers.n: no buffer param named "n"`},
		{"tile not 32", []v2Edit{{`"shape": [2, 64, 64]`, `"shape": [2, 64, 60]`}}, "tt.json", "buffers.w.layout: param w is 64×60; tile layout needs rows and cols that are multiples of 32"},
		{"shard too few cores", []v2Edit{{`"shard": {"cores": [[0, 0, 1, 1]], "shape": [32, 64]}`, `"shard": {"cores": [[0, 0, 0, 2]], "shape": [32, 64]}`}}, "tt.json", "buffers.s.shard.cores: 4 shards of 32×64 elements but 3 cores to hold them"},
		// Height sharding deals 8 pages out one to a shard: 8 shards.
		{"height shard deal past the cores", []v2Edit{{`"shape": [32, 64]}`, `"shape": [32, 32]}`}}, "tt.json", "buffers.s.shard.cores: 8 shards of 32×32 elements but 4 cores to hold them"},
		{"height shard rows do not divide the pages", []v2Edit{{`"shape": [32, 64]}`, `"shape": [32, 96]}`}}, "tt.json",
			"buffers.s.shard.shape[1]: a height-sharded buffer deals its 8 pages out in shard rows of 3 pages (96 elements), which do not divide them"},
		{"shard not in pages", []v2Edit{{`"shape": [32, 64]}`, `"shape": [48, 64]}`}}, "tt.json", "buffers.s.shard.shape: 48×64 elements is not a whole number of 32×32-element pages"},
		{"tile page size", []v2Edit{{`"w": {"layout": "tile", "format": "Bfp8_b"}`, `"w": {"layout": "tile", "format": "Bfp8_b", "page_size": 2048}`}}, "tt.json", "buffers.w.page_size: 2048; a page of a tile-layout buffer is one Bfp8_b tile, 1088 bytes"},
		{"cb on dram buffer", []v2Edit{{`"buffer": "s"`, `"buffer": "a"`}}, "tt.json", "cbs[2].total_bytes: missing (only a CB on a sharded buffer defaults to the shard's size)"},
		{"cb mixed pages", []v2Edit{{`{"index": 1, "format": "Float16_b", "page_bytes": 2048}`, `{"index": 1, "format": "Float16_b", "page_bytes": 1024}`}}, "tt.json", "cbs[0].pages: its indices have pages of 2048 and 1024 bytes: give total_bytes"},
		{"unknown one-index cb field", []v2Edit{{`"tile": [16, 32]`, `"tiles": [16, 32]`}}, "tt.json", "cbs[3].tiles: unknown field"},
		{"one-index cb index type", []v2Edit{{`{"index": 16, "format"`, `{"index": "16", "format"`}}, "tt.json", "cbs[3].index: want a whole number, got a string"},
		{"kernel source type", []v2Edit{{`"source": "k.cpp", "defines"`, `"source": 1, "defines"`}}, "tt.json", "kernels[0].source: want a string, got a number"},
		{"cb format", []v2Edit{{`"format": "Bfp8_b"}]`, `"format": "Bfp2_b"}]`}}, "tt.json", `cbs[1].indices[0].format: "Bfp2_b": want Float32`},
		{"cb no size", []v2Edit{{`, "pages": 2, "tile"`, `, "tile"`}}, "tt.json", "cbs[3].pages: missing"},
		{"include escapes", []v2Edit{{`"includes": "inc"`, `"includes": ["../inc"]`}}, "tt.json", `includes[0]: path "../inc" must be relative`},
		{"include missing", []v2Edit{{`"includes": "inc"`, `"includes": ["inc", "nope.h"]`}}, "tt.json", "includes[1]: stat"},
		{"semaphore name", []v2Edit{{`{"cores": [0, 0, 1, 3]}]`, `{"name": "ready", "cores": [0, 0, 1, 3]}]`}}, "tt.json", `semaphores[1].name: "ready" is also the name of semaphores[0]`},
		{"bad arg literal", []v2Edit{{`"tiles * 2"`, `true`}}, "tt.json", "kernels[0].compile_args[1]: want an arg object, a number or an expression, got true"},
		{"require", []v2Edit{{`"default": 64}`, `"default": 80}`}}, "tt.json", "require[0]: n % 32 is 16, not 0: n must be whole tiles"},
		{"unknown var", []v2Edit{{`"tiles * 2"`, `"tiles * q"`}}, "tt.json", `kernels[0].compile_args[1].value: unknown variable "q"`},
		{"compute config on dm", []v2Edit{{`"source": "k.cpp", "runtime_args": ["split_start(tiles, 2, 4)"]`, `"source": "k.cpp", "compute_config": {}, "runtime_args": ["split_start(tiles, 2, 4)"]`}}, "tt.json", "kernels[1].compute_config: only compute kernels have a compute_config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "no kernel anywhere" {
				// Only the compute kernel, on an empty slice.
				files := v2Files()
				files["tt.json"] = `{"kernels": [{"processor": "compute", "cores": {"of": [0, 0, 1, 3], "from": 0, "to": "tiles - 10"}, "source": "k.cpp"}]}`
				dir := writeBundle(t, files)
				_, err := bundle.Load(dir)
				require.ErrorContains(t, err, filepath.Join(dir, "tt.json")+": kernels: no kernel runs on any core at these var values")
				return
			}
			dir := writeV2(t, tc)
			_, err := bundle.Load(dir)
			require.Error(t, err)
			require.ErrorIs(t, err, bundle.ErrBundle)
			require.Contains(t, err.Error(), filepath.Join(dir, tc.file)+": ")
			require.Contains(t, err.Error(), tc.substr)
		})
	}
}

// TestTTShardSpecsAccepted: shard shapes tt-metal's ShardSpecBuffer takes
// load and bind, in pages, as given: shards narrower or wider than a
// height-sharded tensor, shorter than a width-sharded one, and partial last
// shards of every layout. s is 128×64 bf16 in tiles (4×2 pages) on 4 cores;
// r is 16×8 u32 in sticks of 4 (16×2 pages).
func TestTTShardSpecsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edits []v2Edit
		param int
		shape [2]uint32
	}{
		{"height narrower than the tensor", []v2Edit{{`"shape": [32, 64]}`, `"shape": [64, 32]}`}}, 1, [2]uint32{2, 1}},
		{"height with a partial last shard", []v2Edit{{`"shape": [32, 64]}`, `"shape": [96, 64]}`}}, 1, [2]uint32{3, 2}},
		{"height narrower with a partial last shard", []v2Edit{{`"shape": [32, 64]}`, `"shape": [96, 32]}`}}, 1, [2]uint32{3, 1}},
		{"height wider than the tensor", []v2Edit{{`"shape": [32, 64]}`, `"shape": [32, 128]}`}}, 1, [2]uint32{1, 4}},
		{"width shorter than the tensor", []v2Edit{{`"cores": [0, 0, 0, 1], "shape": [16, 4]`, `"cores": [0, 0, 1, 1], "shape": [8, 4]`}}, 3, [2]uint32{8, 1}},
		{"width with a partial last shard", []v2Edit{{`"cores": [0, 0, 0, 1], "shape": [16, 4]`, `"cores": [0, 0, 1, 1], "shape": [12, 4]`}}, 3, [2]uint32{12, 1}},
		{"block with partial edge shards", []v2Edit{{`"memory_layout": "height_sharded", "layout": "tile", "shard": {"cores": [[0, 0, 1, 1]], "shape": [32, 64]}`,
			`"memory_layout": "block_sharded", "layout": "tile", "shard": {"cores": [[0, 0, 1, 1]], "shape": [96, 32]}`}}, 1, [2]uint32{3, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := bundle.Load(writeV2(t, v2Case{edits: tc.edits}))
			require.NoError(t, err)
			p, err := b.Program(b.Defaults())
			require.NoError(t, err)
			v := tt.ProgramOf(p)
			require.NotNil(t, v)
			var got *tt.Shard
			for _, bd := range v.Buffers {
				if bd.Param == tc.param {
					got = bd.Shard
				}
			}
			require.NotNil(t, got)
			require.Equal(t, tc.shape, got.Shape)
			want := map[int][2]uint32{1: {4, 2}, 3: {16, 2}}[tc.param]
			require.Equal(t, want, got.Tensor, "the tensor in pages is as given")
		})
	}
}

// v2RuleCases break rules of the program itself (processors, NOCs, CB
// indices and sizes, overlapping cores, enums): the bundle loads, and the
// device refuses the program when it compiles it, naming the field of the
// compile request (or, for what the driver alone reads of the Go program,
// the kernel and arg).
var v2RuleCases = []v2Case{
	{"fidelity", []v2Edit{{`"math_fidelity": "LoFi"`, `"math_fidelity": "HiFi5"`}}, "tt.json", "compile.kernels[2].compute_config.math_fidelity"},
	{"unpack to dest past the CBs", []v2Edit{{`"unpack_to_dest_fp32": [0, 2]`, `"unpack_to_dest_fp32": [0, 32]`}}, "tt.json",
		"compile.kernels[2].compute_config.unpack_to_dest_fp32[1]: is 32; CB indices are 0-31"},
	{"param of a buffer", []v2Edit{{`{"kind": "param", "param": "n"}`, `{"kind": "param", "param": "a"}`}}, "tt.json", "but kind param needs a variable param"},
	{"bfp of ints", []v2Edit{{`{"name": "w", "kind": "global", "dtype": "f32"`, `{"name": "w", "kind": "global", "dtype": "u32"`}}, "tt.json", "Bfp8_b storage holds f32 or bf16 params, not u32"},
	{"two ranges overlap", []v2Edit{{`[[0, 0, 0, 3], [1, 0, 1, 3]]`, `[[0, 0, 0, 3], [0, 3, 1, 3]]`}}, "tt.json", "kernel 3 (writer) cores: core (0, 3) is in it twice"},
	{"bad processor", []v2Edit{{`{"processor": "riscv_1", "noc": 0`, `{"processor": "trisc", "noc": 0`}}, "tt.json", `compile.kernels[3].processor: "trisc" is not one of riscv_0, riscv_1, compute`},
	{"noc on compute", []v2Edit{{`"processor": "compute",`, `"processor": "compute", "noc": 1,`}}, "tt.json", `compile.kernels[2].noc: only data-movement kernels`},
	{"per-core common arg", []v2Edit{{`"common_args": [{"kind": "param", "param": "n"}]`, `"common_args": [{"kind": "core_index"}]`}}, "tt.json", `kernel 0 (reader1) common arg 0: core_index differs per core`},
	{"accessor at run", []v2Edit{{`{"name": "src", "kind": "buffer_addr"`, `{"name": "src", "kind": "accessor"`}}, "tt.json", `compile.kernels[0].runtime_args`},
	{"two kernels one processor", []v2Edit{{`"to": "split_cores(tiles, 2, 4)"`, `"to": "split_cores(tiles, 2, 4)", "row_wise": true`}}, "tt.json", `compile.kernels[1].cores`},
	{"bad placement", []v2Edit{{`"a": {"page_size": 2048}`, `"a": {"placement": "sram"}`}}, "tt.json", `"sram" is not one of dram, l1`},
	{"bfp without tile", []v2Edit{{`"w": {"layout": "tile", "format": "Bfp8_b"}`, `"w": {"format": "Bfp8_b"}`}}, "tt.json", `storage format Bfp8_b needs the tile layout`},
	{"sharded without shard", []v2Edit{{`"a": {"page_size": 2048}`, `"a": {"memory_layout": "block_sharded"}`}}, "tt.json", `compile.buffers`},
	{"cb page divides", []v2Edit{{`"total_bytes": "2 * 1088"`, `"total_bytes": 2000`}}, "tt.json", `compile.cbs[1].indices[0].page_bytes: 1088 does not divide total_bytes 2000`},
	{"cb index twice", []v2Edit{{`{"index": 16, "format"`, `{"index": 2, "format"`}}, "tt.json", `compile.cbs`},
	{"cb tile", []v2Edit{{`"tile": [16, 32]`, `"tile": [3, 32]`}}, "tt.json", `compile.cbs[3].indices[0].tile: [3, 32] is not a tile shape`},
}

// TestTTShorthandCompat: the reader/compute/writer form is the one-group
// program of tt.OneGroup.
func TestTTShorthandCompat(t *testing.T) {
	b, err := bundle.Load("../bundle/testdata/vadd")
	require.NoError(t, err)
	p, err := b.Program(b.Defaults())
	require.NoError(t, err)
	v := tt.ProgramOf(p)
	want := tt.OneGroup(v.Kernels[0], v.Kernels[1], v.Kernels[2], v.CBs...)
	require.Equal(t, want, v)
	require.Nil(t, v.Buffers)
	for _, cb := range v.CBs {
		require.Nil(t, cb.Cores)
	}
}

// FuzzParseTT feeds tt.json variants to the loader: it must return an
// error or a program, never panic or hang.
func FuzzParseTT(f *testing.F) {
	f.Add([]byte(v2TT))
	f.Add([]byte(`{"kernels": [{"processor": "riscv_0", "source": "k.cpp", "cores": {"of": [0, 0, 1000000000, 1000000000], "from": 0, "to": 5}}]}`))
	f.Add([]byte(`{"reader": {"source": "k.cpp"}, "compute": {"source": "k.cpp"}, "writer": {"source": "k.cpp"}, "cbs": [{"indices": [{"index": 0, "format": "Bfp8_b"}], "pages": 4294967295}]}`))
	files := v2Files()
	delete(files, "tt.json")
	dir := writeBundle(f, files)
	f.Fuzz(func(t *testing.T, data []byte) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "tt.json"), data, 0o644))
		b, err := bundle.Load(dir)
		if err != nil {
			require.NotEmpty(t, err.Error())
			return
		}
		_, _ = b.Program(b.Defaults())
	})
}
