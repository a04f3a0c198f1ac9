package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// openOwn opens GPU i as a device of the test's own, for a check that
// closes it.
func openOwn(i int) backendtest.Opener {
	return func(t testing.TB) driver.Device {
		drv, err := loadDriver()
		if err != nil {
			t.Skip("libcuda.so.1 not found: " + err.Error())
		}
		d, err := openDevice(drv, i, Config{CacheDir: t.TempDir(), StagingChunk: defaultStagingChunk})
		require.NoError(t, err)
		return d
	}
}

// The kernel (NVRTC) and the GEMM (cuBLAS) executables keep the contract.
func TestExecutableConformance(t *testing.T) {
	for i, d := range gpus(t) {
		t.Run(d.Name()+"/kernel", func(t *testing.T) {
			backendtest.RunExecutableConformance(t, d, openOwn(i), backendtest.ExampleProgram(t, "vadd"), backendtest.VaddArgs(1000)...)
		})
		t.Run(d.Name()+"/gemm", func(t *testing.T) {
			p := backendtest.ExampleProgram(t, "matmul")
			p.RemoveVariant(driver.FormatCUDA)
			backendtest.RunExecutableConformance(t, d, openOwn(i), p, backendtest.MatmulArgs(33, 47, 65)...)
		})
	}
}

func TestBadInputConformance(t *testing.T) {
	for _, d := range gpus(t) {
		t.Run(d.Name()+"/kernel", func(t *testing.T) {
			backendtest.RunBadInputConformance(t, d, backendtest.BadInput{
				Program: func(t testing.TB) *driver.Program { return backendtest.ExampleProgram(t, "vadd") },
				Args:    backendtest.VaddArgs(1000),
				Check: func(t testing.TB, dev *backends.Device, exe *backends.Executable) {
					backendtest.CheckVadd(t, backends.PoolOf(dev.Pool()), exe, 777)
				},
				BuildsCode: true,
				GridLimits: true,
			})
		})
		t.Run(d.Name()+"/gemm", func(t *testing.T) {
			backendtest.RunBadInputConformance(t, d, backendtest.BadInput{
				Program: func(t testing.TB) *driver.Program {
					p := backendtest.ExampleProgram(t, "matmul")
					p.RemoveVariant(driver.FormatCUDA)
					return p
				},
				Args:       backendtest.MatmulArgs(33, 47, 65),
				BuildsCode: true,
			})
		})
	}
}
