package vulkan

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// Recording and submitting a command buffer (the barriers, a buffer copy,
// a dispatch with its descriptor set and push constants, timestamps, the
// submit and the fence wait) allocates nothing: every pointer the driver
// gets is to memory the device or executable keeps on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	const n = 1024
	for _, d := range openAll(t) {
		var bufs []*buffer
		for _, a := range backendtest.MakeArgs(t, d.pool, backendtest.VaddArgs(n))[:3] {
			b, err := d.pool.bufs.Get("test", a.Buffer)
			require.NoError(t, err)
			bufs = append(bufs, b)
		}
		exe, err := d.Compile(t.Context(), vaddProgram(t))
		require.NoError(t, err)
		x := exe.(*executable)
		x.pushData[0], x.pushData[1] = n&0xff, n>>8
		timed := d.queryPool != 0
		record := func(cmd vkCommandBuffer) {
			d.l.CmdBindPipeline(cmd, pipelineBindCompute, x.pipeline)
			d.l.CmdBindDescriptorSets(cmd, pipelineBindCompute, x.layout, 0, x.descSets[:])
			d.l.CmdPushConstants(cmd, x.layout, shaderStageCompute, 0, x.pushData[:x.push.size])
			d.l.CmdDispatch(cmd, n/256, 1, 1)
		}

		d.mu.Lock()
		x.bindBuffers(bufs)
		t.Run(d.name, func(t *testing.T) {
			// The subtest may skip (under the race detector); d.mu is held
			// by its parent, which unlocks it either way.
			backendtest.RequireNoAllocs(t, 20, map[string]func() error{
				"a recorded, submitted and awaited buffer copy": func() error {
					return d.copyCommand(bufs[0].buf, bufs[1].buf, vkBufferCopy{Size: 4 * n})
				},
				"a recorded, submitted and awaited dispatch": func() error {
					_, err := d.run(timed, record)
					return err
				},
			})
		})
		d.mu.Unlock()
		backendtest.CheckVadd(t, d.pool, exe, n)
		require.NoError(t, exe.Release())
	}
}
