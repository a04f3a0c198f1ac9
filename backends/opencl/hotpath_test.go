package opencl

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// The bindings on the hot paths (enqueued copies, transfers, kernel
// arguments, the NDRange enqueue, event waits and profiling) allocate
// nothing when the memory they hand the loader is already on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes purego's pooled call blocks allocate")
	}
	ctx := context.Background()
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			const n = 1024
			args := backendtest.MakeArgs(t, d.pool, backendtest.VaddArgs(n))
			bufs, release, err := d.pool.bufs.Acquire("test", args[0].Buffer, args[1].Buffer, args[2].Buffer)
			require.NoError(t, err)
			defer release()
			exe, err := d.Compile(ctx, vaddProgram(t))
			require.NoError(t, err)
			defer exe.Release()
			x := exe.(*executable)
			x.globalSize = [3]uintptr{n, 1, 1}
			count := new(uint32)
			*count = n
			host := make([]byte, 4*n)
			w := new(waiter)
			l := d.l

			var errs []error
			keep := func(err error) {
				if err != nil {
					errs = append(errs, err)
				}
			}
			copyAllocs := testing.AllocsPerRun(50, func() {
				keep(l.EnqueueCopyBuffer(d.queue, bufs[0].mem, bufs[1].mem, 0, 0, 4*n, &w.ev[0]))
				_, err := d.waitEvent(w, true)
				keep(err)
			})
			transferAllocs := testing.AllocsPerRun(50, func() {
				keep(l.EnqueueWriteBuffer(d.queue, bufs[0].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil))
				keep(l.EnqueueReadBuffer(d.queue, bufs[2].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil))
			})
			launchAllocs := testing.AllocsPerRun(50, func() {
				for i := range 3 {
					keep(l.SetKernelArg(x.kernel, uint32(i), unsafe.Sizeof(bufs[i].mem), unsafe.Pointer(&bufs[i].mem)))
				}
				keep(l.SetKernelArg(x.kernel, 3, 4, unsafe.Pointer(count)))
				keep(l.EnqueueNDRangeKernel(d.queue, x.kernel, 1, &x.globalSize, &x.localSize, &w.ev[0]))
				_, err := d.waitEvent(w, false)
				keep(err)
			})
			require.Empty(t, errs)
			require.Zero(t, copyAllocs, "an enqueued copy and its timed wait allocate")
			require.Zero(t, transferAllocs, "blocking transfers allocate")
			require.Zero(t, launchAllocs, "kernel arguments and the NDRange enqueue allocate")
			// The launches ran for real: z = x + y of what was written.
			backendtest.CheckVadd(t, d.pool, exe, n)
		})
	}
}
