package vulkan

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// Recording and submitting a command buffer (the barriers, a buffer copy,
// a dispatch with its descriptor set and push constants, timestamps, the
// submit and the fence wait) allocates nothing: every pointer the driver
// gets is to memory the device or executable keeps on the heap.
func TestHotPathsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes purego's pooled call blocks allocate")
	}
	ctx := context.Background()
	for _, d := range openAll(t) {
		t.Run(d.name, func(t *testing.T) {
			const n = 1024
			var bufs []*buffer
			for _, a := range backendtest.MakeArgs(t, d.pool, backendtest.VaddArgs(n))[:3] {
				b, err := d.pool.bufs.Get("test", a.Buffer)
				require.NoError(t, err)
				bufs = append(bufs, b)
			}
			exe, err := d.Compile(ctx, vaddProgram(t))
			require.NoError(t, err)
			defer exe.Release()
			x := exe.(*executable)
			x.pushData[0] = n & 0xff
			x.pushData[1] = n >> 8

			d.mu.Lock()
			x.bindBuffers(bufs)
			var errs []error
			keep := func(err error) {
				if err != nil {
					errs = append(errs, err)
				}
			}
			copyAllocs := testing.AllocsPerRun(20, func() {
				keep(d.copyCommand(bufs[0].buf, bufs[1].buf, vkBufferCopy{Size: 4 * n}))
			})
			l := d.l
			timed := d.queryPool != 0
			dispatchAllocs := testing.AllocsPerRun(20, func() {
				_, err := d.run(timed, func(cmd vkCommandBuffer) {
					l.CmdBindPipeline(cmd, pipelineBindCompute, x.pipeline)
					l.CmdBindDescriptorSets(cmd, pipelineBindCompute, x.layout, 0, x.descSets[:])
					l.CmdPushConstants(cmd, x.layout, shaderStageCompute, 0, x.pushData[:x.push.size])
					l.CmdDispatch(cmd, n/256, 1, 1)
				})
				keep(err)
			})
			d.mu.Unlock()
			require.Empty(t, errs)
			require.Zero(t, copyAllocs, "a recorded, submitted and awaited buffer copy allocates")
			require.Zero(t, dispatchAllocs, "a recorded, submitted and awaited dispatch allocates")
			backendtest.CheckVadd(t, d.pool, exe, n)
		})
	}
}
