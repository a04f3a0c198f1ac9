package backends

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zyxtt/zyxtt/tt"

	"github.com/stretchr/testify/require"
	"github.com/zyxtt/zyxtt/backends/driver"
)

func names(devs []*Device) []string {
	out := make([]string, len(devs))
	for i, d := range devs {
		out[i] = d.Name()
	}
	return out
}

type selectFixture struct {
	tt, emu, cuda, ocl, c *fakeDevice
}

func newSelectFixture(t *testing.T) *selectFixture {
	f := &selectFixture{
		tt:   &fakeDevice{name: "tt:0", backend: "tt", info: DeviceInfo{Kind: KindAccelerator, Compute: 1e12}},
		emu:  &fakeDevice{name: "tt-emu:0", backend: "tt", info: DeviceInfo{Kind: KindAccelerator, Emulated: true, Compute: 1e18}},
		cuda: &fakeDevice{name: "cuda:0", backend: "cuda", info: DeviceInfo{Compute: 6e13}},
		ocl:  &fakeDevice{name: "opencl:0", backend: "opencl", info: DeviceInfo{Compute: 1e11}},
		c:    &fakeDevice{name: "c", backend: "c", info: DeviceInfo{Compute: 5e11}},
	}
	withRegistry(t, map[string]opener{
		"c":      &staticDriver{devs: []driver.Device{f.c}},
		"cuda":   &staticDriver{devs: []driver.Device{f.cuda}},
		"opencl": &staticDriver{devs: []driver.Device{f.ocl}},
		"tt":     &staticDriver{devs: []driver.Device{f.emu, f.tt}}, // the emulator is listed first on purpose
		"vulkan": &staticDriver{err: errors.New("libvulkan.so.1: cannot open shared object file")},
	})
	return f
}

func allVariants() *Program {
	return &Program{
		Name: "all",
		Variants: []Variant{
			{Format: FormatC, Code: &SourceVariant{Source: "x"}},
			{Format: FormatCUDA, Code: &SourceVariant{Source: "x"}},
			{Format: FormatOpenCL, Code: &SourceVariant{Source: "x"}},
			{Format: tt.VariantFormat, Code: &tt.Program{}},
		},
	}
}

func TestCandidatesOrder(t *testing.T) {
	newSelectFixture(t)
	for _, sel := range []string{"auto", ""} {
		devs, skips, err := Candidates(bg, allVariants(), sel)
		require.NoError(t, err)
		require.Equal(t, []string{"tt:0", "cuda:0", "c", "opencl:0", "tt-emu:0"}, names(devs),
			"real Tenstorrent first, then by compute, emulators last")
		require.Equal(t, []Skip{{Device: "vulkan", Reason: "libvulkan.so.1: cannot open shared object file"}}, skips)
	}

	devs, _, err := Candidates(bg, nil, "auto")
	require.NoError(t, err)
	require.Len(t, devs, 5, "no program: every device")
}

func TestCandidatesSkipReasons(t *testing.T) {
	newSelectFixture(t)
	p := &Program{Name: "c only", Variants: []Variant{{Format: FormatC, Code: &SourceVariant{Source: "x"}}}}
	devs, skips, err := Candidates(bg, p, "auto")
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, names(devs))
	var reasons []string
	for _, s := range skips {
		reasons = append(reasons, s.String())
	}
	require.ElementsMatch(t, []string{
		"vulkan: libvulkan.so.1: cannot open shared object file",
		"tt:0: no variant for tt",
		"cuda:0: no variant for cuda",
		"opencl:0: no variant for opencl",
		"tt-emu:0: no variant for tt",
	}, reasons)

	// Nothing fits: the error lists every reason.
	_, skips, err = Candidates(bg, &Program{Name: "vulkan only", Variants: []Variant{{Format: FormatSPIRV, Code: &SPIRVVariant{}}}}, "auto")
	require.ErrorIs(t, err, ErrNoDevice)
	require.ErrorContains(t, err, "cuda:0: no variant for cuda")
	require.ErrorContains(t, err, "vulkan: libvulkan.so.1")
	require.Len(t, skips, 6)

	// An explicit selector narrows to one device.
	devs, _, err = Candidates(bg, allVariants(), "tt-emu:0")
	require.NoError(t, err)
	require.Equal(t, []string{"tt-emu:0"}, names(devs))
	_, _, err = Candidates(bg, p, "cuda")
	require.ErrorIs(t, err, ErrNoDevice)
	require.ErrorContains(t, err, "cuda:0: no variant for cuda")
	_, _, err = Candidates(bg, p, "metal")
	require.ErrorContains(t, err, `unknown backend "metal"`)
}

func TestCompileOnFallsBack(t *testing.T) {
	f := newSelectFixture(t)
	f.tt.compileErr = &Error{Backend: "tt", Op: "compile", Native: "reader.cpp:3: error", Err: ErrCompile}
	f.cuda.compileErr = fmt.Errorf("cuda: %w", ErrNoVariant)

	sel, err := Select(bg, allVariants(), "auto")
	require.NoError(t, err)
	dev, exe, skips := sel.Device, sel.Executable, sel.Skips
	require.NotNil(t, exe)
	require.Same(t, f.c, dev.Driver(), "after tt and cuda fail, the next by compute")
	dev2, exe2, err := CompileOn(bg, allVariants(), "auto")
	require.NoError(t, err)
	require.Same(t, f.c, dev2.Driver(), "CompileOn picks what Select picks")
	require.NotNil(t, exe2)
	require.Contains(t, skips, Skip{Device: "tt:0", Reason: "tt: compile: compile failed: reader.cpp:3: error"})
	require.Contains(t, skips, Skip{Device: "cuda:0", Reason: "cuda: no variant for this backend"})
	require.Zero(t, f.ocl.compiles.Load(), "nothing after the first success is tried")

	f.c.compileErr = errors.New("gcc exploded")
	f.ocl.compileErr = errors.New("pocl exploded")
	f.emu.compileErr = errors.New("emu exploded")
	_, _, err = CompileOn(bg, allVariants(), "auto")
	require.ErrorIs(t, err, ErrNoDevice)
	require.ErrorContains(t, err, "gcc exploded")
	require.ErrorContains(t, err, "emu exploded")
	var nd *NoDeviceError
	require.ErrorAs(t, err, &nd, "the skips travel in a typed error")
	skips = nd.Skips
	require.Len(t, skips, 6, "vulkan's reason and five failed compiles")

	before := f.c.compiles.Load()
	_, _, err = CompileOn(bg, &Program{Params: []Param{{Kind: 9}}}, "auto")
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.Equal(t, before, f.c.compiles.Load(), "an invalid program is compiled nowhere")

	ctx, cancel := context.WithCancel(bg)
	cancel()
	_, _, err = CompileOn(ctx, allVariants(), "auto")
	require.ErrorIs(t, err, context.Canceled)
}
