package vulkan

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpupool"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
)

// executable is a compute pipeline with its layout and one descriptor set.
type executable struct {
	dev       *device
	prog      *driver.Program
	module    vkShaderModule
	setLayout vkDescriptorSetLayout
	layout    vkPipelineLayout
	pipeline  vkPipeline
	nbuf      int
	push      pushLayout

	mu       sync.Mutex
	released bool
	// refs counts the caller's reference (until Release) and one per
	// submitted launch that has not ended; the last destroys the pipeline.
	refs atomic.Int32

	// sets are the descriptor sets made so far (under the device's q.Mu),
	// from pools; a set is rewritten only once no pending work uses it.
	sets  []*descSet
	pools []vkDescriptorPool
}

// descSet is a descriptor set, the buffers it binds (by serial) and the
// last batch that used it.
type descSet struct {
	set     [1]vkDescriptorSet
	key     []uint64
	lastUse uint64
}

// pushLayout places each Variable param in the push-constant block: in
// param order, each at an offset aligned to its size.
type pushLayout struct {
	offsets []int // by param ordinal; -1 for buffers
	size    int   // rounded up to 4, as Vulkan requires
}

func layoutPush(params []driver.Param) pushLayout {
	pl := pushLayout{offsets: make([]int, len(params))}
	off := 0
	for i, p := range params {
		if p.Kind != driver.Variable {
			pl.offsets[i] = -1
			continue
		}
		n := p.DType.Size()
		off = (off + n - 1) / n * n
		pl.offsets[i] = off
		off += n
	}
	pl.size = (off + 3) / 4 * 4
	return pl
}

// Compile checks the program's SPIR-V before the driver sees it, then
// builds the pipeline through the device's pipeline cache.
func (d *device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if err := d.q.CheckOpen(ctx, "compile"); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile", Err: err}
	}
	v := p.SPIRV()
	if v == nil {
		return nil, driver.Errorf(Name, "compile", driver.ErrNoVariant, "program %q has no Vulkan variant", p.Name)
	}
	p = p.WithVariant(p.Variant(driver.FormatSPIRV))
	entry := v.Entry
	if entry == "" {
		entry = "main"
	}
	mod, err := parseSPIRV(v.Code)
	if err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile", Native: err.Error(), Err: fmt.Errorf("%w: program %q: %w", driver.ErrCompile, p.Name, err)}
	}
	local, ok := mod.Entries[entry]
	if !ok {
		return nil, driver.Errorf(Name, "compile", driver.ErrCompile, "program %q: no GLCompute entry point %q in the SPIR-V", p.Name, entry)
	}
	nbuf := 0
	for _, prm := range p.Params {
		if prm.Kind.IsBuffer() {
			nbuf++
		}
	}
	for id, b := range mod.Bindings {
		if b[0] != 0 || int(b[1]) >= nbuf {
			return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: variable %%%d is bound at set %d binding %d; the program has %d buffer params at set 0, bindings 0..%d", p.Name, id, b[0], b[1], nbuf, nbuf-1)
		}
	}
	if err := d.checkLocal(p.Name, local, v.Local); err != nil {
		return nil, err
	}
	push := layoutPush(p.Params)
	if lim := d.props.Limits.MaxPushConstantsSize; push.size > int(lim) {
		return nil, driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: %d bytes of push constants, %s allows %d", p.Name, push.size, d.name, lim)
	}

	d.q.Mu.Lock()
	defer d.q.Mu.Unlock()
	if d.q.Closed { // closed since checkOpen: the device handle is gone
		return nil, driver.Errorf(Name, "compile", driver.ErrClosed, "%s", d.name)
	}
	x := &executable{dev: d, prog: p, nbuf: nbuf, push: push}
	x.refs.Store(1)
	if err := x.build(v.Code, entry); err != nil {
		x.destroy()
		return nil, err
	}
	d.execMu.Lock()
	d.execs[x] = struct{}{}
	d.execMu.Unlock()
	if err := d.savePipelineCache(); err != nil {
		driver.Debug(driver.DebugCompile, "vulkan pipeline cache not saved", "device", d.name, "err", err)
	}
	return x, nil
}

// checkLocal compares the shader's local size with the variant's and the
// device's limits.
func (d *device) checkLocal(name string, shader, stated [3]uint32) error {
	if shader != [3]uint32{} && stated != [3]uint32{} {
		norm := stated
		for i := range norm {
			norm[i] = max(norm[i], 1)
		}
		if norm != shader {
			return driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: variant local %v disagrees with the shader's local_size %v", name, stated, shader)
		}
	}
	lim := &d.props.Limits
	total := uint64(1)
	for i, s := range shader {
		if s > lim.MaxComputeWorkGroupSize[i] {
			return driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: local size %d on axis %d exceeds %s's limit of %d", name, s, i, d.name, lim.MaxComputeWorkGroupSize[i])
		}
		total *= uint64(max(s, 1))
	}
	if total > uint64(lim.MaxComputeWorkGroupInvocations) {
		return driver.Errorf(Name, "compile", driver.ErrInvalidArgument, "program %q: local size %v (%d invocations) exceeds %s's limit of %d", name, shader, total, d.name, lim.MaxComputeWorkGroupInvocations)
	}
	return nil
}

// build creates the Vulkan objects; the caller holds d.q.Mu.
func (x *executable) build(code []byte, entry string) error {
	d := x.dev
	l := d.l
	var p pins
	defer p.Unpin()
	var err error

	// SPIR-V words must be 4-byte aligned: copy into a []uint32.
	words := make([]uint32, len(code)/4)
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(code)), code)
	smi := &vkShaderModuleCreateInfo{SType: stShaderModuleCreateInfo, CodeSize: uintptr(len(code)), PCode: slicePtr(&p, words)}
	p.Pin(smi)
	if x.module, err = l.CreateShaderModule(d.handle, smi); err != nil {
		return compileFailure(err)
	}

	bindings := make([]vkDescriptorSetLayoutBinding, x.nbuf)
	for i := range bindings {
		bindings[i] = vkDescriptorSetLayoutBinding{Binding: uint32(i), DescriptorType: descriptorStorageBuffer, DescriptorCount: 1, StageFlags: shaderStageCompute}
	}
	dsl := &vkDescriptorSetLayoutCreateInfo{SType: stDescriptorSetLayoutCreateInfo, BindingCount: uint32(len(bindings)), PBindings: slicePtr(&p, bindings)}
	p.Pin(dsl)
	if x.setLayout, err = l.CreateDescriptorSetLayout(d.handle, dsl); err != nil {
		return err
	}

	setLayout := x.setLayout
	pli := &vkPipelineLayoutCreateInfo{SType: stPipelineLayoutCreateInfo, SetLayoutCount: 1, PSetLayouts: ptr(&p, &setLayout)}
	if x.push.size > 0 {
		pli.PushConstantRangeCount = 1
		pli.PPushConstantRanges = ptr(&p, &vkPushConstantRange{StageFlags: shaderStageCompute, Size: uint32(x.push.size)})
	}
	p.Pin(pli)
	if x.layout, err = l.CreatePipelineLayout(d.handle, pli); err != nil {
		return err
	}

	cpi := []vkComputePipelineCreateInfo{{
		SType: stComputePipelineCreateInfo,
		Stage: vkPipelineShaderStageCreateInfo{
			SType: stPipelineShaderStageCreateInfo, Stage: shaderStageCompute, Module: x.module, PName: cstr(&p, entry),
		},
		Layout:            x.layout,
		BasePipelineIndex: -1,
	}}
	p.Pin(&cpi[0])
	pipelines := make([]vkPipeline, 1)
	if err := l.CreateComputePipelines(d.handle, d.pipelineCache, cpi, pipelines); err != nil {
		return compileFailure(err)
	}
	x.pipeline = pipelines[0]

	return nil
}

// descriptorFor returns a descriptor set that binds bufs, for use in the
// batch of serial: the set that binds them already, else one that no
// pending work uses, rewritten, else a new one. The caller holds the
// device's q.Mu.
func (x *executable) descriptorFor(bufs []*buffer, serial uint64) (*descSet, error) {
	same := func(s *descSet) bool {
		for i, b := range bufs {
			if s.key[i] != b.serial {
				return false
			}
		}
		return true
	}
	for _, s := range x.sets {
		if same(s) {
			s.lastUse = serial
			return s, nil
		}
	}
	var free *descSet
	done := x.dev.completed.Load()
	for _, s := range x.sets {
		if s.lastUse <= done {
			free = s
			break
		}
	}
	if free == nil {
		var err error
		if free, err = x.growSets(); err != nil {
			return nil, err
		}
	}
	x.bindBuffers(free, bufs)
	free.lastUse = serial
	return free, nil
}

// growSets makes a descriptor pool with as many sets again as there are
// (at least 4) and returns one of them.
func (x *executable) growSets() (*descSet, error) {
	d := x.dev
	l := d.l
	var p pins
	defer p.Unpin()
	n := max(len(x.sets), 4)
	size := &vkDescriptorPoolSize{Type: descriptorStorageBuffer, DescriptorCount: uint32(x.nbuf * n)}
	dpi := &vkDescriptorPoolCreateInfo{SType: stDescriptorPoolCreateInfo, MaxSets: uint32(n), PoolSizeCount: 1, PPoolSizes: ptr(&p, size)}
	p.Pin(dpi)
	pool, err := l.CreateDescriptorPool(d.handle, dpi)
	if err != nil {
		return nil, err
	}
	x.pools = append(x.pools, pool)
	layouts := make([]vkDescriptorSetLayout, n)
	for i := range layouts {
		layouts[i] = x.setLayout
	}
	dsa := &vkDescriptorSetAllocateInfo{SType: stDescriptorSetAllocateInfo, DescriptorPool: pool, DescriptorSetCount: uint32(n), PSetLayouts: slicePtr(&p, layouts)}
	p.Pin(dsa)
	sets := make([]vkDescriptorSet, n)
	if err := l.AllocateDescriptorSets(d.handle, dsa, sets); err != nil {
		return nil, err
	}
	first := len(x.sets)
	for _, set := range sets {
		x.sets = append(x.sets, &descSet{set: [1]vkDescriptorSet{set}, key: make([]uint64, x.nbuf)})
	}
	return x.sets[first], nil
}

// compileFailure marks a driver's refusal of a shader or pipeline as
// ErrCompile, keeping the call and result it names.
func compileFailure(err error) error {
	e := err.(*driver.Error)
	e.Err = fmt.Errorf("%w: %w", driver.ErrCompile, e.Err)
	return e
}

func (x *executable) destroy() {
	l, h := x.dev.l, x.dev.handle
	for _, p := range x.pools {
		l.DestroyDescriptorPool(h, p)
	}
	x.pools, x.sets = nil, nil
	l.DestroyPipeline(h, x.pipeline)
	l.DestroyPipelineLayout(h, x.layout)
	l.DestroyDescriptorSetLayout(h, x.setLayout)
	l.DestroyShaderModule(h, x.module)
}

// Launch is Submit and a wait for it.
func (x *executable) Launch(ctx context.Context, run *driver.Launch) error {
	ev, err := x.Submit(ctx, run)
	return driver.Wait(ctx, ev, err)
}

// Submit records the dispatch into the device's open batch after the
// events in after; the pipeline and the buffers are held until it has
// ended.
func (x *executable) Submit(ctx context.Context, run *driver.Launch, after ...driver.Event) (driver.Event, error) {
	l, err := x.prepare(ctx, run)
	if err != nil {
		return nil, err
	}
	w := &work{Item: gpuqueue.Item{Ctx: ctx, After: after, Done: l.release}, op: "launch", kind: launches, record: func(bool) error {
		if l.groups == [3]uint32{} {
			return nil // an empty grid runs nothing
		}
		bt, err := x.dev.openBatch()
		if err != nil {
			return err
		}
		return x.recordDispatch(bt, l.bufs, l.push, l.groups)
	}}
	return x.dev.submit(w)
}

// LaunchTimed dispatches the grid in a batch of its own between two
// timestamps and returns the time between them.
func (x *executable) LaunchTimed(ctx context.Context, run *driver.Launch) (time.Duration, error) {
	l, err := x.prepare(ctx, run)
	if err != nil {
		return 0, err
	}
	if l.groups == [3]uint32{} {
		l.release()
		return 0, nil // an empty grid runs nothing
	}
	var recErr error
	dt, err := x.dev.run(ctx, "launch_timed", launches, true, l.release, func(bt *batch) { recErr = x.recordDispatch(bt, l.bufs, l.push, l.groups) })
	if recErr != nil {
		return 0, recErr
	}
	return dt, err
}

// launch is a launch's push constants and groups, and what it holds.
type launch struct {
	bufs    []*buffer
	push    []byte
	groups  [3]uint32 // zero: an empty grid
	release func()
}

// prepare holds what a checked launch uses: a reference to every buffer
// and to the pipeline, given back when the work has ended. The groups were
// checked against MaxComputeWorkGroupCount (the device's
// MaxGlobalWorkDims).
func (x *executable) prepare(ctx context.Context, checked *driver.Launch) (*launch, error) {
	d := x.dev
	if err := d.q.CheckOpen(ctx, "launch"); err != nil {
		return nil, err
	}
	if err := driver.CheckReleased(Name, &x.mu, &x.released); err != nil {
		return nil, err
	}
	args := checked.Args
	l := &launch{push: make([]byte, x.push.size)}
	if !checked.Empty {
		l.groups = [3]uint32{uint32(checked.Grid[0]), uint32(checked.Grid[1]), uint32(checked.Grid[2])}
	}
	ids, err := driver.SplitArgs(Name, x.prog, args, scalarBytes, func(i int, val []byte) { copy(l.push[x.push.offsets[i]:], val) })
	if err != nil {
		return nil, err
	}
	bufs, release, err := gpupool.HoldLaunch(&d.pool.Base, ids, &x.mu, &x.released, &x.refs)
	if err != nil {
		return nil, err
	}
	l.bufs = bufs
	l.release = func() {
		release()
		x.unref()
	}
	return l, nil
}

// recordDispatch records the dispatch, after a full barrier, into bt (the
// open batch). The caller holds the device's q.Mu.
func (x *executable) recordDispatch(bt *batch, bufs []*buffer, push []byte, groups [3]uint32) error {
	d := x.dev
	l := d.l
	var set *descSet
	if len(bufs) > 0 {
		var err error
		if set, err = x.descriptorFor(bufs, bt.serial); err != nil {
			return err
		}
	}
	d.fullBarrier(bt.cmd)
	l.CmdBindPipeline(bt.cmd, pipelineBindCompute, x.pipeline)
	if set != nil {
		l.CmdBindDescriptorSets(bt.cmd, pipelineBindCompute, x.layout, 0, set.set[:])
	}
	if x.push.size > 0 {
		l.CmdPushConstants(bt.cmd, x.layout, shaderStageCompute, 0, push)
	}
	l.CmdDispatch(bt.cmd, groups[0], groups[1], groups[2])
	bt.n++
	return nil
}

// bindBuffers points binding i of s at the i-th buffer and keys s by
// them. No pending work uses s. The caller holds the device's q.Mu.
func (x *executable) bindBuffers(s *descSet, bufs []*buffer) {
	var p pins
	defer p.Unpin()
	maxRange := uint64(x.dev.props.Limits.MaxStorageBufferRange)
	infos := make([]vkDescriptorBufferInfo, len(bufs))
	writes := make([]vkWriteDescriptorSet, len(bufs))
	for i, b := range bufs {
		infos[i] = vkDescriptorBufferInfo{Buffer: b.buf, Range: min(uint64(b.size), maxRange)}
		s.key[i] = b.serial
	}
	for i := range bufs {
		writes[i] = vkWriteDescriptorSet{SType: stWriteDescriptorSet, DstSet: s.set[0], DstBinding: uint32(i), DescriptorCount: 1, DescriptorType: descriptorStorageBuffer, PBufferInfo: ptr(&p, &infos[i])}
	}
	p.Pin(&writes[0])
	x.dev.l.UpdateDescriptorSets(x.dev.handle, writes)
}

// unref drops one reference; the last destroys the pipeline, unless Close
// has destroyed it with the device.
func (x *executable) unref() {
	if x.refs.Add(-1) != 0 {
		return
	}
	d := x.dev
	d.execMu.Lock()
	defer d.execMu.Unlock()
	if !d.execsClosed {
		x.destroy()
		delete(d.execs, x)
	}
}

// Release drops the caller's reference: the pipeline and its objects are
// destroyed now, or when the last launch that holds them has ended.
// Releasing again does nothing.
func (x *executable) Release() error {
	return driver.ReleaseOnce(&x.mu, &x.released, func() error {
		x.unref()
		return nil
	})
}

// scalarBytes is a Variable's value as the shader reads it from the push
// constants: the dtype's own size, little endian, half floats as IEEE
// binary16 and bf16 as its 16 bits.
func scalarBytes(c driver.Constant) ([]byte, error) {
	if c.DType == driver.F8E4M3 || c.DType == driver.F8E5M2 {
		return nil, fmt.Errorf("%s scalars have no SPIR-V type", c.DType)
	}
	return c.NativeBytes(), nil
}
