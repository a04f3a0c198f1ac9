package backendtest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

func TestF32RoundTrip(t *testing.T) {
	v := backendtest.RandomF32(3, 257, -5, 5)
	require.Equal(t, v, backendtest.BytesF32(backendtest.F32Bytes(v)))
	require.Equal(t, []byte{0, 0, 0x80, 0x3f}, backendtest.F32Bytes([]float32{1}))
	for _, x := range v {
		require.True(t, x >= -5 && x < 5, "%g outside [-5, 5)", x)
	}
	require.Equal(t, v, backendtest.RandomF32(3, 257, -5, 5), "the same seed gives the same values")
}

func TestExamplesDir(t *testing.T) {
	dir := backendtest.ExamplesDir(t)
	_, err := os.Stat(filepath.Join(dir, "vadd", "manifest.json"))
	require.NoError(t, err)
	p := backendtest.ExampleProgram(t, "vadd")
	require.NotNil(t, p.Source(driver.FormatOpenCL))
	require.Len(t, p.Params, 4)
	require.Equal(t, driver.Variable, p.Params[3].Kind, "n stays a launch argument")
}

// Upload and Download round-trip through a device pool (the dummy's).
func TestUploadDownload(t *testing.T) {
	d, err := dummy.New(dummy.Config{Memory: 64 << 20})
	require.NoError(t, err)
	defer d.Close()
	v := backendtest.RandomF32(9, 100, 0, 1)
	id := backendtest.UploadF32(t, backends.PoolOf(d.Pool()), v)
	require.Equal(t, v, backendtest.DownloadF32(t, backends.PoolOf(d.Pool()), id, len(v)))
	require.NoError(t, d.Pool().Release(id))
	require.EqualValues(t, 64<<20, d.Pool().FreeBytes())
}

func TestParams(t *testing.T) {
	require.Equal(t, []driver.Param{
		{Name: "x", Kind: driver.Global, DType: driver.F32},
		{Name: "z", Kind: driver.GlobalMut, DType: driver.F16},
		{Name: "n", Kind: driver.Variable, DType: driver.U32},
	}, []driver.Param{backendtest.Global("x", driver.F32), backendtest.GlobalMut("z", driver.F16), backendtest.Variable("n", driver.U32)})
}

func TestOnce(t *testing.T) {
	var o backendtest.Once[int]
	opens := 0
	open := func() (int, string, error) { opens++; return 7, "", nil }
	require.Equal(t, 7, o.Get(t, open))
	require.Equal(t, 7, o.Get(t, open))
	require.Equal(t, 1, opens, "opened once")

	var missing backendtest.Once[int]
	skipped := false
	t.Run("missing", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		missing.Get(t, func() (int, string, error) { return 0, "no such library", nil })
	})
	require.True(t, skipped, "a device that is not here skips the test")
}

// EachDevice runs f once on every device the Devices open, as the
// backend's own type, in a subtest named after the device.
func TestEachDevice(t *testing.T) {
	ds := backendtest.Devices{
		Library: "none",
		Load:    func() error { return nil },
		Open: func(t testing.TB, ids *[]int) ([]driver.Device, error) {
			require.Nil(t, ids, "every device")
			d, err := dummy.New(dummy.Config{Memory: 1 << 20})
			return []driver.Device{d}, err
		},
	}
	var names []string
	backendtest.EachDevice(t, ds, func(t *testing.T, d *dummy.Device) {
		names = append(names, t.Name())
		require.Equal(t, "dummy", d.Name())
	})
	require.Equal(t, []string{"TestEachDevice/dummy"}, names)
}
