package bundle

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/zyxtt/zyxtt/tt"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
)

// TestExamplesLoad loads every bundle under examples/ and builds its
// program at the defaults: the runs themselves are in cmd/zyx-tt's
// TestExamplesOnEveryDevice and make demo.
func TestExamplesLoadAll(t *testing.T) {
	entries, err := os.ReadDir("../examples")
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		dir := filepath.Join("../examples", e.Name())
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			b, err := Load(dir)
			require.NoError(t, err)
			p, err := b.Program(b.Defaults())
			require.NoError(t, err)
			require.NotEmpty(t, p.Variants)
		})
	}
	require.NotZero(t, n)
}

// ttExample is an example's Tenstorrent variant at the given var values.
func ttExample(t *testing.T, name string, set map[string]string) (*backends.Program, *tt.Program) {
	t.Helper()
	b, err := Load(filepath.Join("../examples", name))
	require.NoError(t, err)
	vals, err := b.VarValues(set)
	require.NoError(t, err)
	p, err := b.Program(vals)
	require.NoError(t, err)
	return p, tt.ProgramOf(p)
}

func TestExampleEltwiseSplit(t *testing.T) {
	// 100 tiles on 64 cores: 36 cores take 2 tiles, 28 take 1.
	_, v := ttExample(t, "eltwise_split", nil)
	require.Len(t, v.Kernels, 4)
	require.Equal(t, backends.ConstDim(36), v.Kernels[1].Cores.Slice.To)
	require.Equal(t, tt.Const(2), v.Kernels[1].CompileArgs[0])
	require.Equal(t, backends.ConstDim(36), v.Kernels[2].Cores.Slice.From)
	require.Equal(t, backends.ConstDim(64), v.Kernels[2].Cores.Slice.To)
	require.Equal(t, tt.Const(1), v.Kernels[2].CompileArgs[0])
	// 128 tiles split evenly: one group, 2 tiles each.
	_, v = ttExample(t, "eltwise_split", map[string]string{"tiles": "128"})
	require.Len(t, v.Kernels, 3)
	require.Equal(t, tt.Const(2), v.Kernels[1].CompileArgs[0])
	// 10 tiles: 10 cores of one tile.
	_, v = ttExample(t, "eltwise_split", map[string]string{"tiles": "10"})
	require.Len(t, v.Kernels, 3)
	require.Equal(t, backends.ConstDim(10), v.Kernels[0].Cores.Slice.To)
}

// TestExampleMatmulEdges: sizes that are not whole tiles are refused on
// Tenstorrent with a clear error (issue 14), and the other backends still
// get their variants.
func TestExampleMatmulEdges(t *testing.T) {
	b, err := Load("../examples/matmul")
	require.NoError(t, err)
	vals, err := b.VarValues(map[string]string{"m": "100"})
	require.NoError(t, err)
	_, err = b.Program(vals)
	require.ErrorContains(t, err, "examples/matmul/tt.json: require[0]: m % 32 is 4, not 0: on Tenstorrent m must be a multiple of 32")
	p, dropped, err := b.PartialProgram(vals)
	require.NoError(t, err)
	require.Nil(t, tt.ProgramOf(p))
	require.NotNil(t, p.Source(backends.FormatC))
	require.Len(t, dropped, 1)
	require.Equal(t, tt.VariantFormat, dropped[0].Format)
	require.ErrorIs(t, dropped[0], ErrBundle)
	// A tt-only bundle with nothing left is an error.
	b, err = Load("../examples/matmul_tiled")
	require.NoError(t, err)
	vals, err = b.VarValues(map[string]string{"k": "40"})
	require.NoError(t, err)
	_, _, err = b.PartialProgram(vals)
	require.ErrorContains(t, err, "buffers.a.layout: param a is 256×40; tile layout needs rows and cols that are multiples of 32")
}

// The Metal 2.0 example: the loader keeps its names and bindings, the named
// args in name order.
func TestExampleMetal2Add(t *testing.T) {
	_, v := ttExample(t, "metal2_add", nil)
	require.Len(t, v.Kernels, 3)
	reader := v.Kernels[0]
	var names []string
	for _, na := range reader.NamedRuntimeArgs {
		names = append(names, na.Name)
	}
	require.Equal(t, []string{"num_tiles", "start_id"}, names)
	require.Equal(t, "total_tiles", reader.NamedCommonArgs[0].Name)
	require.Len(t, reader.CommonArgs, 1, "the vararg")
	require.Equal(t, map[string]string{"in0": "a_tiles", "in1": "b_tiles"}, reader.DFBs)
	require.Equal(t, map[string]string{"go": "go"}, reader.SemaphoreBindings)
	require.Equal(t, map[string]string{"a": "a", "b": "b"}, reader.Tensors)
	require.Equal(t, "step", v.Kernels[2].NamedCompileArgs[0].Name)
	require.Equal(t, "c_tiles", v.CBs[2].Indices[0].Name)
	require.Equal(t, "go", v.Semaphores[1].Name)
}
