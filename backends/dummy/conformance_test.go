package dummy_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/dummy"
)

func open(t testing.TB) driver.Device {
	d, err := dummy.New(dummy.Config{Memory: 1 << 24})
	require.NoError(t, err)
	return d
}

func TestExecutableConformance(t *testing.T) {
	d := open(t)
	defer d.Close()
	backendtest.RunExecutableConformance(t, d, open, vaddProgram(), backendtest.BufferArg(4000), backendtest.BufferArg(4000),
		backendtest.ScalarArg(driver.UintConst(driver.U32, 1000)))
}

func TestBadInputConformance(t *testing.T) {
	d := open(t)
	defer d.Close()
	backendtest.RunBadInputConformance(t, d, backendtest.BadInput{
		Program: func(testing.TB) *driver.Program { return vaddProgram() },
		Args: []backendtest.Arg{backendtest.BufferArg(4000), backendtest.BufferArg(4000),
			backendtest.ScalarArg(driver.UintConst(driver.U32, 1000))},
		GridLimits: true,
	})
}
