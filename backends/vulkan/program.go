package vulkan

import (
	"context"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// executable is a compute pipeline with its layout and one descriptor set.
type executable struct {
	dev       *device
	prog      *backends.Program
	module    vkShaderModule
	setLayout vkDescriptorSetLayout
	layout    vkPipelineLayout
	pipeline  vkPipeline
	descPool  vkDescriptorPool
	nbuf      int
	push      pushLayout

	mu       sync.Mutex
	released bool
	// descSets and pushData are what a dispatch hands the driver, kept
	// here (under mu) so that a launch allocates nothing for them.
	descSets [1]vkDescriptorSet
	pushData []byte
}

// pushLayout places each Variable param in the push-constant block: in
// param order, each at an offset aligned to its size.
type pushLayout struct {
	offsets []int // by param ordinal; -1 for buffers
	size    int   // rounded up to 4, as Vulkan requires
}

func layoutPush(params []backends.Param) pushLayout {
	pl := pushLayout{offsets: make([]int, len(params))}
	off := 0
	for i, p := range params {
		if p.Kind != backends.Variable {
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
func (d *device) Compile(ctx context.Context, p *backends.Program) (backends.Executable, error) {
	if err := d.checkOpen(ctx, "compile"); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, &backends.Error{Backend: Name, Op: "compile", Err: err}
	}
	v := p.SPIRV()
	if v == nil {
		return nil, backends.Errorf(Name, "compile", backends.ErrNoVariant, "program %q has no Vulkan variant", p.Name)
	}
	p = p.WithVariant(p.Variant(backends.FormatSPIRV))
	entry := v.Entry
	if entry == "" {
		entry = "main"
	}
	mod, err := parseSPIRV(v.Code)
	if err != nil {
		return nil, &backends.Error{Backend: Name, Op: "compile", Native: err.Error(), Err: fmt.Errorf("%w: program %q: %w", backends.ErrCompile, p.Name, err)}
	}
	local, ok := mod.Entries[entry]
	if !ok {
		return nil, backends.Errorf(Name, "compile", backends.ErrCompile, "program %q: no GLCompute entry point %q in the SPIR-V", p.Name, entry)
	}
	nbuf := 0
	for _, prm := range p.Params {
		if prm.Kind.IsBuffer() {
			nbuf++
		}
	}
	for id, b := range mod.Bindings {
		if b[0] != 0 || int(b[1]) >= nbuf {
			return nil, backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: variable %%%d is bound at set %d binding %d; the program has %d buffer params at set 0, bindings 0..%d", p.Name, id, b[0], b[1], nbuf, nbuf-1)
		}
	}
	if err := d.checkLocal(p.Name, local, v.Local); err != nil {
		return nil, err
	}
	push := layoutPush(p.Params)
	if lim := d.props.Limits.MaxPushConstantsSize; push.size > int(lim) {
		return nil, backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: %d bytes of push constants, %s allows %d", p.Name, push.size, d.name, lim)
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed { // closed since checkOpen: the device handle is gone
		return nil, backends.Errorf(Name, "compile", backends.ErrClosed, "%s", d.name)
	}
	x := &executable{dev: d, prog: p, nbuf: nbuf, push: push, pushData: make([]byte, max(push.size, 4))}
	if err := x.build(v.Code, entry); err != nil {
		x.destroy()
		return nil, err
	}
	d.execs[x] = struct{}{}
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
			return backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: variant local %v disagrees with the shader's local_size %v", name, stated, shader)
		}
	}
	lim := &d.props.Limits
	total := uint64(1)
	for i, s := range shader {
		if s > lim.MaxComputeWorkGroupSize[i] {
			return backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: local size %d on axis %d exceeds %s's limit of %d", name, s, i, d.name, lim.MaxComputeWorkGroupSize[i])
		}
		total *= uint64(max(s, 1))
	}
	if total > uint64(lim.MaxComputeWorkGroupInvocations) {
		return backends.Errorf(Name, "compile", backends.ErrInvalidArgument, "program %q: local size %v (%d invocations) exceeds %s's limit of %d", name, shader, total, d.name, lim.MaxComputeWorkGroupInvocations)
	}
	return nil
}

// build creates the Vulkan objects; the caller holds d.mu.
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

	if x.nbuf > 0 {
		size := &vkDescriptorPoolSize{Type: descriptorStorageBuffer, DescriptorCount: uint32(x.nbuf)}
		dpi := &vkDescriptorPoolCreateInfo{SType: stDescriptorPoolCreateInfo, MaxSets: 1, PoolSizeCount: 1, PPoolSizes: ptr(&p, size)}
		p.Pin(dpi)
		if x.descPool, err = l.CreateDescriptorPool(d.handle, dpi); err != nil {
			return err
		}
		dsa := &vkDescriptorSetAllocateInfo{SType: stDescriptorSetAllocateInfo, DescriptorPool: x.descPool, DescriptorSetCount: 1, PSetLayouts: ptr(&p, &setLayout)}
		p.Pin(dsa)
		if err := l.AllocateDescriptorSets(d.handle, dsa, x.descSets[:]); err != nil {
			return err
		}
	}
	return nil
}

// compileFailure marks a driver's refusal of a shader or pipeline as
// ErrCompile, keeping the call and result it names.
func compileFailure(err error) error {
	e := err.(*backends.Error)
	e.Err = fmt.Errorf("%w: %w", backends.ErrCompile, e.Err)
	return e
}

func (x *executable) destroy() {
	l, h := x.dev.l, x.dev.handle
	l.DestroyDescriptorPool(h, x.descPool)
	l.DestroyPipeline(h, x.pipeline)
	l.DestroyPipelineLayout(h, x.layout)
	l.DestroyDescriptorSetLayout(h, x.setLayout)
	l.DestroyShaderModule(h, x.module)
}

// Launch dispatches the grid and waits for it.
func (x *executable) Launch(ctx context.Context, args []backends.LaunchArg) error {
	_, err := x.run(ctx, args, false)
	return err
}

// LaunchTimed dispatches the grid between two timestamps and returns the
// time between them.
func (x *executable) LaunchTimed(ctx context.Context, args []backends.LaunchArg) (time.Duration, error) {
	return x.run(ctx, args, true)
}

func (x *executable) run(ctx context.Context, args []backends.LaunchArg, timed bool) (time.Duration, error) {
	d := x.dev
	if err := d.checkOpen(ctx, "launch"); err != nil {
		return 0, err
	}
	if err := driver.CheckReleased(Name, &x.mu, &x.released); err != nil {
		return 0, err
	}
	lim := d.props.Limits.MaxComputeWorkGroupCount
	launch, err := driver.CheckLaunch(x.prog, d.pool, args, []uint64{uint64(lim[0]), uint64(lim[1]), uint64(lim[2])})
	if err != nil {
		return 0, &backends.Error{Backend: Name, Op: "launch", Err: err}
	}
	if launch.Empty {
		return 0, nil // an empty grid runs nothing
	}
	groups := [3]uint32{uint32(launch.Grid[0]), uint32(launch.Grid[1]), uint32(launch.Grid[2])}
	var ids []backends.BufferID
	for i, a := range args {
		if x.prog.Params[i].Kind.IsBuffer() {
			ids = append(ids, a.Buffer)
		} else if _, err := scalarBytes(a.Value); err != nil {
			return 0, backends.Errorf(Name, "launch", backends.ErrUnsupported, "param %d: %v", i, err)
		}
	}
	bufs, release, err := d.pool.bufs.Acquire("launch", ids...)
	if err != nil {
		return 0, err
	}
	defer release()

	x.mu.Lock()
	defer x.mu.Unlock()
	if x.released {
		return 0, driver.ErrReleased(Name)
	}
	for i, a := range args {
		if !x.prog.Params[i].Kind.IsBuffer() {
			val, _ := scalarBytes(a.Value) // checked above
			copy(x.pushData[x.push.offsets[i]:], val)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return 0, backends.Errorf(Name, "launch", backends.ErrClosed, "%s", d.name)
	}
	if len(bufs) > 0 {
		x.bindBuffers(bufs)
	}
	l := d.l
	return d.run(timed, func(cmd vkCommandBuffer) {
		l.CmdBindPipeline(cmd, pipelineBindCompute, x.pipeline)
		if len(bufs) > 0 {
			l.CmdBindDescriptorSets(cmd, pipelineBindCompute, x.layout, 0, x.descSets[:])
		}
		if x.push.size > 0 {
			l.CmdPushConstants(cmd, x.layout, shaderStageCompute, 0, x.pushData[:x.push.size])
		}
		l.CmdDispatch(cmd, groups[0], groups[1], groups[2])
	})
}

// bindBuffers points binding i of the descriptor set at the i-th buffer.
// The previous launch has finished (every submission waits), so the set
// is not in use. The caller holds d.mu.
func (x *executable) bindBuffers(bufs []*buffer) {
	var p pins
	defer p.Unpin()
	maxRange := uint64(x.dev.props.Limits.MaxStorageBufferRange)
	infos := make([]vkDescriptorBufferInfo, len(bufs))
	writes := make([]vkWriteDescriptorSet, len(bufs))
	for i, b := range bufs {
		infos[i] = vkDescriptorBufferInfo{Buffer: b.buf, Range: min(uint64(b.size), maxRange)}
	}
	for i := range bufs {
		writes[i] = vkWriteDescriptorSet{SType: stWriteDescriptorSet, DstSet: x.descSets[0], DstBinding: uint32(i), DescriptorCount: 1, DescriptorType: descriptorStorageBuffer, PBufferInfo: ptr(&p, &infos[i])}
	}
	p.Pin(&writes[0])
	x.dev.l.UpdateDescriptorSets(x.dev.handle, writes)
}

// Release destroys the pipeline and its objects. Releasing again does
// nothing.
func (x *executable) Release() error {
	return driver.ReleaseOnce(&x.mu, &x.released, func() error {
		d := x.dev
		d.mu.Lock()
		defer d.mu.Unlock()
		if !d.closed { // else Close has destroyed it with the device
			x.destroy()
			delete(d.execs, x)
		}
		return nil
	})
}

// scalarBytes is a Variable's value as the shader reads it from the push
// constants: the dtype's own size, little endian, half floats as IEEE
// binary16 and bf16 as its 16 bits.
func scalarBytes(c backends.Constant) ([]byte, error) {
	if c.DType == backends.F8E4M3 || c.DType == backends.F8E5M2 {
		return nil, fmt.Errorf("%s scalars have no SPIR-V type", c.DType)
	}
	return c.NativeBytes(), nil
}
