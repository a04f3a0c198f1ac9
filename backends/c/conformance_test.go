//go:build darwin || freebsd || linux || netbsd

package c

import (
	"context"
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// openOwn opens a C device of the test's own, for a check that closes it.
func openOwn(t testing.TB) driver.Device {
	device(t) // skips without a compiler
	d, err := Open(context.Background(), Config{})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return d
}

func TestExecutableConformance(t *testing.T) {
	backendtest.RunExecutableConformance(t, device(t), openOwn, backendtest.ExampleProgram(t, "vadd"), backendtest.VaddArgs(1000)...)
}

func TestBadInputConformance(t *testing.T) {
	backendtest.RunBadInputConformance(t, device(t), backendtest.BadInput{
		Program: func(t testing.TB) *driver.Program { return backendtest.ExampleProgram(t, "vadd") },
		Args:    backendtest.VaddArgs(1000),
		Check: func(t testing.TB, dev *backends.Device, exe *backends.Executable) {
			backendtest.CheckVadd(t, backends.PoolOf(dev.Pool()), exe, 777)
		},
		BuildsCode: true,
	})
}
