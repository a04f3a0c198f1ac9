package bundle

import (
	"encoding/binary"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
)

// copyBundle copies testdata/vadd (manifest, C variant and source) into a
// fresh directory the test may change.
func copyBundle(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"manifest.json", "c.json", "vadd.c"} {
		data, err := os.ReadFile(filepath.Join("testdata", "vadd", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	}
	return dir
}

// A .npy file that claims a 4 GiB header is refused before anything is
// allocated.
func TestNpyHeaderLengthIsChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.npy")
	data := make([]byte, 384)
	copy(data, "\x93NUMPY\x02\x00")
	binary.LittleEndian.PutUint32(data[8:], 0xFFFFFFF0)
	require.NoError(t, os.WriteFile(path, data, 0o600))
	err := ReadInput(path, backends.F32, []uint64{4}, make([]byte, 16))
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	require.ErrorContains(t, err, "header claims 4294967280 bytes in a file of 384")
}

// Bundle files that are not regular files (a FIFO, which would block the
// reader for ever) are refused.
func TestNonRegularFilesAreRefused(t *testing.T) {
	dir := copyBundle(t)
	require.NoError(t, os.Remove(filepath.Join(dir, "vadd.c")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "vadd.c"), 0o600))
	done := make(chan error, 1)
	go func() { _, err := Load(dir); done <- err }()
	select {
	case err := <-done:
		require.ErrorContains(t, err, "not a regular file")
	case <-time.After(5 * time.Second):
		t.Fatal("Load blocked on a FIFO")
	}
	fifo := filepath.Join(t.TempDir(), "in.bin")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	require.ErrorContains(t, ReadInput(fifo, backends.F32, []uint64{1}, make([]byte, 4)), "not a regular file")
}

// npyFile is a version 1.0 .npy file with the header dict given (padded as
// NumPy pads it) and then data.
func npyFile(dict string, data []byte) []byte {
	const prefix = 10
	pad := 64 - (prefix+len(dict)+1)%64
	header := dict + strings.Repeat(" ", pad%64) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)), byte(len(header)>>8))
	return append(append(out, header...), data...)
}

// npyCase is one .npy file for a 2 x 3 f32 param and what ReadInput makes
// of it: nil, or an error wrapping is whose text holds want.
type npyCase struct {
	name string
	data []byte
	is   error
	want string
}

func npyCases() []npyCase {
	array := make([]byte, 24)
	for i := range 6 {
		binary.LittleEndian.PutUint32(array[4*i:], math.Float32bits(float32(i)))
	}
	c := func(fortran, shape string) string {
		return "{'descr': '<f4', 'fortran_order': " + fortran + ", 'shape': " + shape + ", }"
	}
	inv, unsup := backends.ErrInvalidArgument, backends.ErrUnsupported
	return []npyCase{
		{"the array", npyFile(c("False", "(2, 3)"), array), nil, ""},
		{"the array, 1-D", npyFile(c("False", "(6,)"), array), nil, ""},
		{"1-D in Fortran order, which is C order", npyFile(c("True", "(6,)"), array), nil, ""},
		{"a byte after the array", npyFile(c("False", "(2, 3)"), append(array, 0)), inv, "f.npy: 1 byte follows the array ([2 3] <f4, 24 bytes); a .npy file holds one array and nothing after it"},
		{"a second array after the array", append(npyFile(c("False", "(2, 3)"), array), npyFile(c("False", "(2, 3)"), array)...), inv, "bytes follow the array"},
		{"cut short", npyFile(c("False", "(2, 3)"), array[:23]), inv, "f.npy is cut short: it ends 23 bytes into the array ([2 3] <f4, 24 bytes)"},
		{"no data", npyFile(c("False", "(2, 3)"), nil), inv, "f.npy is cut short: it ends 0 bytes into the array"},
		{"2-D in Fortran order", npyFile(c("True", "(2, 3)"), array), unsup, "f.npy is in Fortran (column-major) order"},
		{"2-D in Fortran order, a byte after", npyFile(c("True", "(2, 3)"), append(array, 0)), unsup, "Fortran"},
		{"another shape", npyFile(c("False", "(3, 2)"), array), inv, "has shape [3 2], the param needs [2 3]"},
		{"another dtype", npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", array), inv, "holds <i4 elements"},
		{"fortran_order neither True nor False", npyFile(c("1", "(2, 3)"), array), inv, "not a .npy file"},
	}
}

// ReadInput takes a .npy file that is exactly one array in C order, and
// refuses anything after the array, a file cut short, and Fortran order
// (which it does not transpose), naming the file.
func TestReadInputNpyIsOneArray(t *testing.T) {
	for _, tc := range npyCases() {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.npy")
			require.NoError(t, os.WriteFile(path, tc.data, 0o600))
			dst := make([]byte, 24)
			err := ReadInput(path, backends.F32, []uint64{2, 3}, dst)
			if tc.is == nil {
				require.NoError(t, err)
				got, err := ToFloat64(backends.F32, dst)
				require.NoError(t, err)
				require.Equal(t, []float64{0, 1, 2, 3, 4, 5}, got)
				return
			}
			require.ErrorIs(t, err, tc.is)
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, path, "the error names the file")
		})
	}
}

// An input file that is not a regular file is refused for what it is, at
// once (a FIFO without a writer does not block the open), as an invalid
// argument rather than a bad bundle; a bundle file that is not regular is
// a bad bundle.
func TestReadInputRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "in.bin")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	sock := filepath.Join(dir, "s.npy")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	link := filepath.Join(dir, "link.npy")
	require.NoError(t, os.Symlink(fifo, link))
	for _, tc := range []struct{ name, path, what string }{
		{"a FIFO", fifo, "a named pipe (FIFO)"},
		{"a link to a FIFO", link, "a named pipe (FIFO)"},
		{"a directory", t.TempDir() + "/", "a directory"},
		{"a character device", os.DevNull, "a character device"},
		{"a socket", sock, "a socket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ReadInput(tc.path, backends.F32, []uint64{1}, make([]byte, 4))
			require.ErrorIs(t, err, backends.ErrInvalidArgument)
			require.NotErrorIs(t, err, ErrBundle)
			require.ErrorContains(t, err, tc.path+" is not a regular file (it is "+tc.what+")")
		})
	}
	bundle := copyBundle(t)
	src := filepath.Join(bundle, "vadd.c")
	require.NoError(t, os.Remove(src))
	require.NoError(t, syscall.Mkfifo(src, 0o600))
	_, err = Load(bundle)
	require.ErrorIs(t, err, ErrBundle)
	require.ErrorContains(t, err, "vadd.c is not a regular file (it is a named pipe (FIFO))")
}

// A symbolic link inside a bundle may not lead out of it.
func TestSymlinksStayInsideTheBundle(t *testing.T) {
	dir := copyBundle(t)
	outside := filepath.Join(t.TempDir(), "elsewhere.c")
	require.NoError(t, os.WriteFile(outside, []byte("void vadd(void) {}"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "vadd.c")))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "vadd.c")))
	_, err := Load(dir)
	require.ErrorContains(t, err, "leads outside the bundle")

	// A link that stays inside is fine.
	require.NoError(t, os.Remove(filepath.Join(dir, "vadd.c")))
	data, err := os.ReadFile(filepath.Join("testdata", "vadd", "vadd.c"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "real.c"), data, 0o600))
	require.NoError(t, os.Symlink("real.c", filepath.Join(dir, "vadd.c")))
	_, err = Load(dir)
	require.NoError(t, err)
}

// Errors promise a field path, and give it.
func TestErrorsNameTheFieldPath(t *testing.T) {
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"unknown key in a param", `{"name": "x", "params": [{"name": "a", "kind": "global", "dtype": "f32", "shap": ["4"]}], "grid": ["1"]}`,
			"params[0].shap: unknown field"},
		{"a JSON array", `[1, 2]`, "the file must hold one JSON object, got a list"},
		{"a default past f16", `{"name": "x", "vars": [{"name": "h", "dtype": "f16", "default": 1e10}], "params": [], "grid": ["1"]}`,
			"vars[0].default: 1e10 is out of range for f16"},
		{"a default past f32", `{"name": "x", "vars": [{"name": "h", "dtype": "f32", "default": 1e39}], "params": [], "grid": ["1"]}`,
			"out of range for f32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.manifest), "m.json")
			require.ErrorContains(t, err, tc.want)
		})
	}
	c, err := ParseConstant(backends.F16, "inf")
	require.NoError(t, err, "an infinity asked for by name is allowed")
	require.True(t, math.IsInf(c.Float(), 1))
}

// A reference whose sizes do not fit its buffers is refused at load; sizes
// that overflow are an error, never a panic.
func TestReferenceSizesAreChecked(t *testing.T) {
	manifest := func(ref string) string {
		return `{"name": "mm", "vars": [{"name": "m", "dtype": "u64", "default": 4}],
		 "params": [{"name": "a", "kind": "global", "dtype": "f32", "shape": ["16"]},
		            {"name": "b", "kind": "global", "dtype": "f32", "shape": ["16"]},
		            {"name": "c", "kind": "global_mut", "dtype": "f32", "shape": ["16"]}],
		 "grid": ["1"], "reference": ` + ref + `}`
	}
	for _, tc := range []struct{ name, ref, want string }{
		{"operand too small", `{"op": "matmul", "args": ["a", "b"], "out": "c", "m": "4", "n": "4", "k": "8"}`, "matmul operand a has 16 elements, fewer than batch·m·k = 32"},
		{"output too big", `{"op": "matmul", "args": ["a", "b"], "out": "c", "m": "2", "n": "2", "k": "4"}`, "matmul output c has 16 elements, not batch·m·n = 4"},
		{"overflow", `{"op": "matmul", "args": ["a", "b"], "out": "c", "m": "2147483648", "n": "2147483648", "k": "0", "batch": "2147483648"}`, "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), []byte(manifest(tc.ref)), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"source": "k.c", "entry": "k"}`), 0o600))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "k.c"), []byte("void k(void){}"), 0o600))
			_, err := Load(dir)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// The f8 dtypes can be generated and decoded.
func TestF8DataRoundTrips(t *testing.T) {
	for _, dt := range []backends.DType{backends.F8E4M3, backends.F8E5M2} {
		g, err := ParseGen("random:-4:4")
		require.NoError(t, err)
		mem := make([]byte, 1000)
		require.NoError(t, Fill(mem, dt, g, 1))
		vals, err := ToFloat64(dt, mem)
		require.NoError(t, err)
		var distinct = map[float64]bool{}
		for _, v := range vals {
			require.GreaterOrEqual(t, v, -4.0)
			require.LessOrEqual(t, v, 4.0)
			distinct[v] = true
		}
		require.Greater(t, len(distinct), 20, "%s: real values, not a constant", dt)
		require.NoError(t, Fill(mem[:1], dt, Gen{Kind: GenConst, Value: 1.5}, 0))
		v, err := ToFloat64(dt, mem[:1])
		require.NoError(t, err)
		require.Equal(t, 1.5, v[0])
	}
}
