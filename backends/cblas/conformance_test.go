//go:build darwin || freebsd || linux || netbsd

package cblas_test

import (
	"context"
	"testing"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/cblas"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// open opens a CBLAS device of the test's own, or skips naming what is
// missing.
func open(t testing.TB) driver.Device {
	d, err := cblas.Open(context.Background(), cblas.Config{})
	if err != nil {
		t.Skipf("no CBLAS library: %v", err)
	}
	return d
}

// matmul is the matmul example: the device takes its GEMM variant.
func matmul(t testing.TB) *driver.Program { return backendtest.ExampleProgram(t, "matmul") }

func TestExecutableConformance(t *testing.T) {
	d := open(t)
	defer d.Close()
	backendtest.RunExecutableConformance(t, d, open, matmul(t), backendtest.MatmulArgs(33, 47, 65)...)
}

func TestBadInputConformance(t *testing.T) {
	d := open(t)
	defer d.Close()
	backendtest.RunBadInputConformance(t, d, backendtest.BadInput{
		Program:    matmul,
		Args:       backendtest.MatmulArgs(33, 47, 65),
		BuildsCode: true,
	})
}
