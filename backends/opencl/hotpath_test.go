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
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			const n = 1024
			args := backendtest.MakeArgs(t, d.pool, backendtest.VaddArgs(n))
			bufs, release, err := d.pool.bufs.Acquire("test", args[0].Buffer, args[1].Buffer, args[2].Buffer)
			require.NoError(t, err)
			defer release()
			exe, err := d.Compile(context.Background(), vaddProgram(t))
			require.NoError(t, err)
			defer exe.Release()
			x := exe.(*executable)
			x.globalSize = [3]uintptr{n, 1, 1}
			count := new(uint32)
			*count = n
			host := make([]byte, 4*n)
			w, l := new(waiter), d.l

			backendtest.RequireNoAllocs(t, 50, map[string]func() error{
				"an enqueued copy and its timed wait": func() error {
					if err := l.EnqueueCopyBuffer(d.queue, bufs[0].mem, bufs[1].mem, 0, 0, 4*n, &w.ev[0]); err != nil {
						return err
					}
					_, err := d.waitEvent(w, true)
					return err
				},
				"blocking transfers": func() error {
					if err := l.EnqueueWriteBuffer(d.queue, bufs[0].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil); err != nil {
						return err
					}
					return l.EnqueueReadBuffer(d.queue, bufs[2].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil)
				},
				"kernel arguments, the NDRange enqueue and its wait": func() error {
					for i, b := range bufs {
						if err := l.SetKernelArg(x.kernel, uint32(i), unsafe.Sizeof(b.mem), unsafe.Pointer(&b.mem)); err != nil {
							return err
						}
					}
					if err := l.SetKernelArg(x.kernel, 3, 4, unsafe.Pointer(count)); err != nil {
						return err
					}
					if err := l.EnqueueNDRangeKernel(d.queue, x.kernel, 1, &x.globalSize, &x.localSize, &w.ev[0]); err != nil {
						return err
					}
					_, err := d.waitEvent(w, false)
					return err
				},
			})
			// The launches ran for real: z = x + y of what was written.
			backendtest.CheckVadd(t, d.pool, exe, n)
		})
	}
}
