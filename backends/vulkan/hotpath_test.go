package vulkan

import (
	"testing"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// Recording and submitting a batch (the barriers, a buffer copy, a
// dispatch with its cached descriptor set and push constants, timestamps,
// the submit), the completer's wait for its fence and its recycling of the
// command buffer and fence allocate nothing: every pointer the driver gets
// is to memory the device or executable keeps on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	const n = 1024
	for _, d := range openAll(t) {
		var bufs []*buffer
		for _, a := range backendtest.MakeArgs(t, backends.PoolOf(d.pool), backendtest.VaddArgs(n))[:3] {
			b, err := d.pool.bufs.Get("test", a.Buffer)
			require.NoError(t, err)
			bufs = append(bufs, b)
		}
		exe, err := backends.DeviceOf(d).Compile(t.Context(), vaddProgram(t))
		require.NoError(t, err)
		x := exe.Driver().(*executable)
		push := make([]byte, x.push.size)
		push[0], push[1] = n&0xff, n>>8
		timed := d.queryPool != 0
		// submit records into a batch, submits it and waits until the
		// completer has ended it.
		submit := func(record func(bt *batch) error) error {
			d.q.Mu.Lock()
			defer d.q.Mu.Unlock()
			bt, err := d.openBatch()
			if err != nil {
				return err
			}
			if err := record(bt); err != nil {
				return err
			}
			serial := bt.serial
			d.flush()
			for d.completed.Load() < serial {
				d.q.Cond.Wait()
			}
			return d.q.LostErr()
		}
		// The first dispatch makes the descriptor set the others reuse.
		require.NoError(t, submit(func(bt *batch) error { return x.recordDispatch(bt, bufs, push, [3]uint32{n / 256, 1, 1}) }))

		t.Run(d.name, func(t *testing.T) {
			backendtest.RequireNoAllocs(t, 20, map[string]func() error{
				"a recorded, submitted and ended buffer copy": func() error {
					return submit(func(bt *batch) error {
						d.recordCopy(bt, bufs[0].buf, bufs[1].buf, vkBufferCopy{Size: 4 * n})
						return nil
					})
				},
				"a recorded, submitted and ended dispatch, timed when the queue has timestamps": func() error {
					err := submit(func(bt *batch) error {
						if timed {
							d.l.CmdResetQueryPool(bt.cmd, d.queryPool, 0, 2)
							d.l.CmdWriteTimestamp(bt.cmd, stageTopOfPipe, d.queryPool, 0)
						}
						if err := x.recordDispatch(bt, bufs, push, [3]uint32{n / 256, 1, 1}); err != nil {
							return err
						}
						if timed {
							d.l.CmdWriteTimestamp(bt.cmd, stageBottomOfPipe, d.queryPool, 1)
						}
						return nil
					})
					if err != nil || !timed {
						return err
					}
					return d.l.GetQueryPoolResults(d.handle, d.queryPool, 0, 2, d.hot.stamps[:], 8, queryResult64Wait)
				},
			})
		})
		backendtest.CheckVadd(t, backends.PoolOf(d.pool), exe, n)
		require.NoError(t, exe.Release())
	}
}
