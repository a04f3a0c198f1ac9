package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// helperEnv names the helper process a test re-runs this binary as.
const helperEnv = "ZYX_CUDA_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "fault":
		os.Exit(faultHelper())
	case "fault-pending":
		os.Exit(faultPendingHelper())
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// runFaultHelper re-runs this binary as the helper process name, on a GPU
// and not with -short, and requires that it succeeded, printed ok and met
// the illegal-address fault its wild write causes.
func runFaultHelper(t *testing.T, name, ok string) {
	t.Helper()
	gpu(t)
	if testing.Short() {
		t.Skip("short: skips the helper process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	out, err := cmd.CombinedOutput()
	t.Logf("helper output:\n%s", out)
	require.NoError(t, err)
	require.Contains(t, string(out), ok)
	require.Contains(t, string(out), "CUDA_ERROR_ILLEGAL_ADDRESS")
}

// helperFail is how a helper process reports a failure: a line that starts
// with prefix, and the exit status 1.
func helperFail(prefix string) func(format string, args ...any) int {
	return func(format string, args ...any) int {
		fmt.Printf(prefix+": "+format+"\n", args...)
		return 1
	}
}

// helperDevice is the first device of the cuda backend, for a helper
// process.
func helperDevice(ctx context.Context) (*backends.Device, error) {
	st, err := backends.Backend(ctx, Name)
	if err != nil {
		return nil, err
	}
	if st.Err != nil {
		return nil, st.Err
	}
	if len(st.Devices) == 0 {
		return nil, errors.New("no device")
	}
	return st.Devices[0], nil
}

// faultHelper runs a kernel that writes through a wild pointer and checks
// that the device is then reported lost by every call. It runs in its own
// process because a fault poisons the process's primary context.
func faultHelper() int {
	ctx := context.Background()
	fail := helperFail("FAULT-HELPER-FAIL")
	d, err := helperDevice(ctx)
	if err != nil {
		return fail("no cuda backend: %v", err)
	}
	bad, err := d.Compile(ctx, wildProgram())
	if err != nil {
		return fail("compile: %v", err)
	}
	good, err := d.Compile(ctx, vaddProgram())
	if err != nil {
		return fail("compile vadd: %v", err)
	}
	buf, err := d.Pool().Alloc(ctx, 1024)
	if err != nil {
		return fail("alloc: %v", err)
	}
	err = bad.Launch(ctx, []driver.LaunchArg{driver.BufArg(buf)})
	if !errors.Is(err, driver.ErrDeviceLost) {
		return fail("the faulting launch returned %v, want ErrDeviceLost", err)
	}
	fmt.Println("fault:", err)
	_, err = d.Pool().Alloc(ctx, 1024)
	if !errors.Is(err, driver.ErrDeviceLost) {
		return fail("alloc after the fault returned %v, want ErrDeviceLost", err)
	}
	fmt.Println("alloc after:", err)
	err = good.Launch(ctx, []driver.LaunchArg{driver.BufArg(buf), driver.BufArg(buf), driver.BufArg(buf), driver.VarArg(driver.UintConst(driver.U32, 4))})
	if !errors.Is(err, driver.ErrDeviceLost) {
		return fail("launch after the fault returned %v, want ErrDeviceLost", err)
	}
	if err := d.Pool().Read(ctx, buf, 0, make([]byte, 4)); !errors.Is(err, driver.ErrDeviceLost) {
		return fail("read after the fault returned %v, want ErrDeviceLost", err)
	}
	if _, err := d.Compile(ctx, vaddProgram()); !errors.Is(err, driver.ErrDeviceLost) {
		return fail("compile after the fault returned %v, want ErrDeviceLost", err)
	}
	if err := d.Close(); err != nil {
		fmt.Println("close after the fault:", err)
	}
	fmt.Println("FAULT-HELPER-OK")
	return 0
}
