package cuda

import (
	"context"
	"testing"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// The overhead benchmarks need no GPU: every driver entry point is libc's
// abs (cuEventCreate feclearexcept) and every handle 0, so each driver call returns CUDA_SUCCESS at once
// and what is timed is the backend's own work around the calls. Each pairs
// a path of the backend with the bare purego calls it makes (the same
// count of calls to the same function), so the difference is the
// backend's overhead per launch.

// absDevice is a device whose driver is libc's abs.
func absDevice(b testing.TB) (*Device, *kernelExec) {
	libc, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		b.Skip("libc.so.6:", err)
	}
	abs, err := purego.Dlsym(libc, "abs")
	require.NoError(b, err)
	// cuEventCreate's first argument is a pointer: feclearexcept returns 0
	// whatever it is given (and leaves the handle 0).
	libm, err := purego.Dlopen("libm.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		b.Skip("libm.so.6:", err)
	}
	clear0, err := purego.Dlsym(libm, "feclearexcept")
	require.NoError(b, err)
	drv := &driverAPI{}
	for _, s := range drv.symbols() {
		*s.Addr = abs
	}
	drv.eventCreate = clear0
	drv.ctxGetCurrent = clear0 // no context: makeCurrent sets it
	// No stream memory operations: launches that run alone poll an event.
	drv.streamWriteValue32, drv.memHostGetDevicePointer = 0, 0
	d := &Device{drv: drv, name: "cuda:abs"}
	d.pool = newPool(d)
	p := &driver.Program{Name: "empty", Grid: []driver.GwsDim{driver.ConstDim(1)}}
	k := &kernelExec{launcher: launcher{dev: d, prog: p, what: "launch"}, block: [3]uint32{32, 1, 1}}
	k.prepareRun = k.prepare
	k.params, err = newCBlock(paramBlockSize(0))
	require.NoError(b, err)
	b.Cleanup(func() { _ = k.params.free() })
	return d, k
}

// BenchmarkOverheadLaunch: Launch (the synchronous path: cuCtxSetCurrent,
// cuLaunchKernel, cuEventRecord, cuEventQuery) against those four bare
// calls.
func BenchmarkOverheadLaunch(b *testing.B) {
	d, k := absDevice(b)
	ctx := context.Background()
	l := &driver.Launch{Grid: [3]uint64{1, 1, 1}}
	b.Run("backend", func(b *testing.B) {
		for b.Loop() {
			if err := k.Launch(ctx, l); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			d.drv.cuCtxSetCurrent(0)
			d.drv.cuLaunchKernel(0, [3]uint32{1, 1, 1}, k.block, 0, k.params.addr(0))
			d.drv.cuEventRecord(0, 0)
			d.drv.cuEventQuery(0)
		}
	})
}

// BenchmarkOverheadSubmit: Submit (cuCtxSetCurrent, cuLaunchKernel; the
// events retired every 1,000 through the stream) against the two bare
// calls.
func BenchmarkOverheadSubmit(b *testing.B) {
	d, k := absDevice(b)
	b.Run("backend", func(b *testing.B) { overheadSubmit(b, d, k) })
	b.Run("direct", func(b *testing.B) {
		defer func(v bool) { issueAside = v }(issueAside)
		issueAside = false
		overheadSubmit(b, d, k)
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			d.drv.cuCtxSetCurrent(0)
			d.drv.cuLaunchKernel(0, [3]uint32{1, 1, 1}, k.block, 0, k.params.addr(0))
		}
	})
}

// overheadSubmit times Submit, waiting every 1,000.
func overheadSubmit(b *testing.B, d *Device, k *kernelExec) {
	ctx := context.Background()
	l := &driver.Launch{Grid: [3]uint64{1, 1, 1}}
	var last driver.Event
	i := 0
	for b.Loop() {
		ev, err := k.Submit(ctx, l)
		if err != nil {
			b.Fatal(err)
		}
		last = ev
		if i++; i%1000 == 0 {
			require.NoError(b, last.Wait(ctx))
		}
	}
	require.NoError(b, last.Wait(ctx))
	d.closed.Store(true) // the reaper and the issuer exit
	d.drainForClose()
	d.closed.Store(false)
}
