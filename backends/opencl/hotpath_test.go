package opencl

import (
	"context"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// The bindings on the hot paths (enqueued copies, transfers, kernel
// arguments, the NDRange enqueue with a wait list, flushes, event waits,
// status and profiling reads, event retains and releases) allocate nothing
// when the memory they hand the loader is already on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	backendtest.EachDevice(t, clDevices, func(t *testing.T, d *device) {
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
		// evs[0] is each command's event, evs[1] the one before it
		// in a wait list; prof is what their results are read into.
		evs, prof, l := new([2]clEvent), new(profile), d.l
		wait := func() error {
			defer l.ReleaseEvent(evs[0])
			if err := l.Flush(d.queue); err != nil {
				return err
			}
			if err := l.WaitForEvents(evs[:1]); err != nil {
				return err
			}
			_, _, err := d.eventResult(evs[0], true, prof)
			return err
		}

		backendtest.RequireNoAllocs(t, 50, map[string]func() error{
			"an enqueued copy and its timed wait": func() error {
				if err := l.EnqueueCopyBuffer(d.queue, bufs[0].mem, bufs[1].mem, 0, 0, 4*n, nil, &evs[0]); err != nil {
					return err
				}
				return wait()
			},
			"blocking transfers": func() error {
				if err := l.EnqueueWriteBuffer(d.queue, bufs[0].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, nil); err != nil {
					return err
				}
				return l.EnqueueReadBuffer(d.queue, bufs[2].mem, true, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, nil)
			},
			"non-blocking transfers, the second after the first's event": func() error {
				if err := l.EnqueueWriteBuffer(d.queue, bufs[0].mem, false, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), nil, &evs[1]); err != nil {
					return err
				}
				err := l.EnqueueReadBuffer(d.queue, bufs[0].mem, false, 0, uintptr(len(host)), unsafe.Pointer(&host[0]), evs[1:], &evs[0])
				_ = l.ReleaseEvent(evs[1])
				if err != nil {
					return err
				}
				return wait()
			},
			"kernel arguments, the NDRange enqueue after a retained event, and its wait": func() error {
				for i, b := range bufs {
					if err := l.SetKernelArg(x.kernel, uint32(i), unsafe.Sizeof(b.mem), unsafe.Pointer(&b.mem)); err != nil {
						return err
					}
				}
				if err := l.SetKernelArg(x.kernel, 3, 4, unsafe.Pointer(count)); err != nil {
					return err
				}
				if err := l.EnqueueCopyBuffer(d.queue, bufs[2].mem, bufs[1].mem, 0, 0, 4, nil, &evs[1]); err != nil {
					return err
				}
				if err := l.RetainEvent(evs[1]); err != nil {
					return err
				}
				_ = l.ReleaseEvent(evs[1])
				err := l.EnqueueNDRangeKernel(d.queue, x.kernel, 1, &x.globalSize, &x.localSize, evs[1:], &evs[0])
				_ = l.ReleaseEvent(evs[1])
				if err != nil {
					return err
				}
				return wait()
			},
		})
		// The launches ran for real: z = x + y of what was written.
		backendtest.CheckVadd(t, d.pool, exe, n)
	})
}
