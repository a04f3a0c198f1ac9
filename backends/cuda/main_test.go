package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/zyxtt/zyxtt/backends"
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

// faultHelper runs a kernel that writes through a wild pointer and checks
// that the device is then reported lost by every call. It runs in its own
// process because a fault poisons the process's primary context.
func faultHelper() int {
	ctx := context.Background()
	fail := func(format string, args ...any) int {
		fmt.Printf("FAULT-HELPER-FAIL: "+format+"\n", args...)
		return 1
	}
	st, err := backends.Backend(ctx, Name)
	if err != nil || st.Err != nil {
		return fail("no cuda backend: %v %v", err, st.Err)
	}
	d := st.Devices[0]
	bad, err := d.Compile(ctx, &backends.Program{
		Name:   "wild_write",
		Params: []backends.Param{{Name: "p", Kind: backends.GlobalMut, DType: backends.U32}},
		Grid:   []backends.GwsDim{backends.ConstDim(1)},
		Variants: []backends.Variant{{Format: backends.FormatCUDA, Code: &backends.SourceVariant{Entry: "wild_write", Local: [3]uint32{32},
			Source: `extern "C" __global__ void wild_write(unsigned int *p) {
				volatile unsigned int *wild = (unsigned int *)0xdead0000ull;
				*wild = p[threadIdx.x];
			}`}}},
	})
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
	err = bad.Launch(ctx, []backends.LaunchArg{backends.BufArg(buf)})
	if !errors.Is(err, backends.ErrDeviceLost) {
		return fail("the faulting launch returned %v, want ErrDeviceLost", err)
	}
	fmt.Println("fault:", err)
	_, err = d.Pool().Alloc(ctx, 1024)
	if !errors.Is(err, backends.ErrDeviceLost) {
		return fail("alloc after the fault returned %v, want ErrDeviceLost", err)
	}
	fmt.Println("alloc after:", err)
	err = good.Launch(ctx, []backends.LaunchArg{backends.BufArg(buf), backends.BufArg(buf), backends.BufArg(buf), backends.VarArg(backends.UintConst(backends.U32, 4))})
	if !errors.Is(err, backends.ErrDeviceLost) {
		return fail("launch after the fault returned %v, want ErrDeviceLost", err)
	}
	if err := d.Pool().Read(ctx, buf, 0, make([]byte, 4)); !errors.Is(err, backends.ErrDeviceLost) {
		return fail("read after the fault returned %v, want ErrDeviceLost", err)
	}
	if _, err := d.Compile(ctx, vaddProgram()); !errors.Is(err, backends.ErrDeviceLost) {
		return fail("compile after the fault returned %v, want ErrDeviceLost", err)
	}
	if err := d.Close(); err != nil {
		fmt.Println("close after the fault:", err)
	}
	fmt.Println("FAULT-HELPER-OK")
	return 0
}
