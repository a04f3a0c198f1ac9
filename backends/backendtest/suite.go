package backendtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// Devices opens the devices of a backend with many (OpenCL, Vulkan) for
// tests, skipping where the library or a device is missing.
type Devices struct {
	// Library is what Load looks for ("libOpenCL.so.1"), named when the
	// test skips.
	Library string
	// Load loads the backend's native library.
	Load func() error
	// Open opens the devices whose ordinals ids keeps (nil: every device)
	// with the test's settings (a private cache directory, say).
	Open func(t testing.TB, ids *[]int) ([]driver.Device, error)
}

// NewDevices is the Devices of a backend whose native library load loads
// (the backend's own loader, its value unused) and whose open opens the
// devices ids keeps.
func NewDevices[L any](library string, load func() (L, error), open func(t testing.TB, ids *[]int) ([]driver.Device, error)) Devices {
	return Devices{Library: library, Load: func() error { _, err := load(); return err }, Open: open}
}

func (ds Devices) open(t testing.TB, ids *[]int) []driver.Device {
	t.Helper()
	if err := ds.Load(); err != nil {
		t.Skipf("%s not found: %v", ds.Library, err)
	}
	devs, err := ds.Open(t, ids)
	if err != nil {
		t.Skipf("no device: %v", err)
	}
	return devs
}

// All opens every device; they are closed, without error, when the test
// ends.
func (ds Devices) All(t testing.TB) []driver.Device {
	t.Helper()
	devs := ds.open(t, nil)
	t.Cleanup(func() {
		for _, d := range devs {
			require.NoError(t, d.Close())
		}
	})
	return devs
}

// Runner is *testing.T or *testing.B: a test that runs subtests of its
// own kind.
type Runner[T any] interface {
	testing.TB
	Run(name string, f func(T)) bool
}

// EachDevice opens every device of ds (as All does) and runs f on each,
// as D, in a subtest named after the device.
func EachDevice[D driver.Device, T Runner[T]](t T, ds Devices, f func(t T, d D)) {
	t.Helper()
	for _, d := range As[D](ds.All(t)) {
		t.Run(d.Name(), func(t T) { f(t, d) })
	}
}

// One opens device i on its own, for a check that closes it.
func (ds Devices) One(i int) Opener {
	return func(t testing.TB) driver.Device { return ds.open(t, &[]int{i})[0] }
}

// As is devs as the backend's own device type.
func As[D driver.Device](devs []driver.Device) []D {
	out := make([]D, len(devs))
	for i, d := range devs {
		out[i] = d.(D)
	}
	return out
}

// DeviceSuite is what RunDeviceSuite checks on every device of a backend
// that builds code and enforces its grid limits (OpenCL, Vulkan).
type DeviceSuite struct {
	Devices Devices
	// Program is the vadd example, or a program that launches with its
	// args.
	Program func(t testing.TB) *driver.Program
	// Info checks what the backend's DeviceInfo says beyond the common
	// fields.
	Info func(t *testing.T, dev driver.Device)
	// Cases are the device's own bad-input cases.
	Cases func(dev driver.Device) []BadCase
}

// RunDeviceSuite checks that device_ids [] keeps no device, then runs, as
// subtests of each device: that the registered backend lists it under its
// name ("opencl:0"); the common DeviceInfo fields (name, kind, memory, work
// sizes, f32 add, formats that take Program) and s.Info; RunPoolConformance
// on its pool; the PartialGroupExamples against their references;
// CheckLaunchTimed; RunExecutableConformance (with a device of its own for
// the close checks); and RunBadInputConformance with s.Cases.
func RunDeviceSuite(t *testing.T, s DeviceSuite) {
	t.Helper()
	devs := s.Devices.All(t)
	_, err := s.Devices.Open(t, &[]int{})
	require.ErrorIs(t, err, driver.ErrNoDevice, "device_ids [] keeps no device")
	st, err := backends.Backend(context.Background(), devs[0].Backend())
	require.NoError(t, err)
	require.NoError(t, st.Err, "the registered backend opens")
	require.Len(t, st.Devices, len(devs), "the registered backend has every device")
	args := VaddArgs(1000)
	for i, own := range devs {
		d := backends.DeviceOf(own)
		t.Run(d.Name(), func(t *testing.T) {
			t.Run("registered", func(t *testing.T) {
				want := fmt.Sprintf("%s:%d", d.Backend(), i)
				require.Equal(t, want, d.Name())
				require.Equal(t, want, st.Devices[i].Name())
				require.Equal(t, d.Backend(), st.Devices[i].Backend())
			})
			t.Run("info", func(t *testing.T) {
				info := d.Info()
				require.NotEmpty(t, info.Name)
				require.Contains(t, []driver.DeviceKind{driver.KindCPU, driver.KindGPU, driver.KindAccelerator, driver.KindOther}, info.Kind)
				require.Positive(t, info.Memory)
				require.Positive(t, info.MaxLocalThreads)
				require.Len(t, info.MaxLocalWorkDims, 3)
				require.Len(t, info.MaxGlobalWorkDims, 3)
				require.Positive(t, info.MaxGlobalWorkDims[0])
				require.True(t, info.Supports(driver.F32).Has(driver.CapAdd))
				require.True(t, s.Program(t).Accepts(info.Formats), "the device takes a variant of the program (formats %v)", info.Formats)
				if s.Info != nil {
					s.Info(t, own)
				}
			})
			t.Run("pool", func(t *testing.T) { RunPoolConformance(t, d.Pool()) })
			t.Run("examples", func(t *testing.T) { RunExamples(t, own, PartialGroupExamples()...) })
			t.Run("launch timed", func(t *testing.T) { CheckLaunchTimed(t, own, s.Program(t)) })
			t.Run("executable", func(t *testing.T) {
				RunExecutableConformance(t, own, s.Devices.One(i), s.Program(t), args...)
			})
			t.Run("bad input", func(t *testing.T) {
				var cases []BadCase
				if s.Cases != nil {
					cases = s.Cases(own)
				}
				RunBadInputConformance(t, own, BadInput{
					Program: s.Program, Args: args, BuildsCode: true, GridLimits: true, Cases: cases,
					Check: func(t testing.TB, dev *backends.Device, exe *backends.Executable) { CheckVadd(t, dev.Pool(), exe, 777) },
				})
			})
		})
	}
}
