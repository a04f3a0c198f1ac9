package tt

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// Device is one chip, driven by its own runtime process.
type Device struct {
	name     string
	emulated bool
	rt       *ttruntime.Client
	lock     *ttruntime.ChipLock
	info     *driver.DeviceInfo
	pool     *Pool
	sub      *submitter // the device's requests, in submission order

	closed    atomic.Bool // set before Close ends the runtime
	closeOnce sync.Once
}

func newDevice(name string, emulated bool, rt *ttruntime.Client, lock *ttruntime.ChipLock, host *hostpool.Pool, card *Card) *Device {
	d := &Device{name: name, emulated: emulated, rt: rt, lock: lock, sub: newSubmitter(name, rt)}
	d.pool = newPool(name, rt, d.sub, host)
	d.pool.dev = d
	d.info = deviceInfo(rt.Info(), emulated, card)
	return d
}

// deviceInfo describes a chip from what its runtime reported.
func deviceInfo(ri ttruntime.InitReply, emulated bool, card *Card) *driver.DeviceInfo {
	cores := int(ri.Grid.Rows) * int(ri.Grid.Cols)
	arch := map[string]string{ArchWormhole: "Wormhole", ArchBlackhole: "Blackhole"}[ri.Arch]
	if arch == "" {
		arch = ri.Arch
	}
	info := &driver.DeviceInfo{
		Formats:             []driver.Format{VariantFormat},
		Name:                fmt.Sprintf("%s %s chip %d", arch, ri.Board, ri.Chip),
		Kind:                driver.KindAccelerator,
		Compute:             uint64(cores) * 1_000_000_000_000, // ~1 TFLOP/s bf16 per Tensix core
		ComputeEstimated:    true,
		MaxGlobalWorkDims:   []uint64{uint64(ri.Grid.Rows), uint64(ri.Grid.Cols)},
		MaxLocalThreads:     1,
		MaxLocalWorkDims:    []uint32{1, 1},
		PreferredVectorSize: 32,
		LocalMemSize:        ri.L1.Usable(),
		MaxRegisterBytes:    128,
		TensorCores:         true,
		WarpSize:            1,
		SupportedVecLens:    []uint8{32},
		Emulated:            emulated,
		Tile:                [2]uint64{TileDim, TileDim},
		TileSizes:           [][2]uint64{{TileDim, TileDim}},
		MMALayouts: []driver.MMADims{
			{M: TileDim, N: TileDim, K: TileDim, In: driver.BF16, Acc: driver.F32},
			{M: TileDim, N: TileDim, K: TileDim, In: driver.BF16, Acc: driver.BF16},
		},
		NumCircularBuffers: ttruntime.CircularBuffersPerCore,
		Cores:              cores,
		Memory:             ri.DRAM.Total(),
		Extra: map[string]string{
			"arch":            ri.Arch,
			"board":           ri.Board,
			"chip":            strconv.Itoa(ri.Chip),
			"runtime":         ri.Runtime,
			"runtime_version": ri.Version,
			"grid":            fmt.Sprintf("%dx%d", ri.Grid.Rows, ri.Grid.Cols),
			"harvest_mask":    fmt.Sprintf("0x%x", ri.Grid.HarvestMask),
			"dram":            fmt.Sprintf("%d banks × %s", ri.DRAM.Banks, FormatBytes(int64(min(ri.DRAM.BankSize, 1<<62)))),
			"l1":              fmt.Sprintf("%d bytes, %d usable", ri.L1.Size, ri.L1.Usable()),
		},
	}
	if emulated {
		info.Name = fmt.Sprintf("Tensix emulator (%s chip %d)", ri.Board, ri.Chip)
		info.Kind = driver.KindCPU
		info.Compute = uint64(cores) * 1_000_000_000 // host threads, not Tensix math
	}
	if card != nil {
		info.Extra["pci"] = strings.Join(card.PCIAddresses, ",")
		if card.Serial != "" {
			info.Extra["serial"] = card.Serial
		}
	}
	for _, f := range Formats {
		info.DTypeCaps[f] = driver.CapFloatOps
		if !f.IsFloat() {
			info.DTypeCaps[f] = driver.CapIntOps
		}
	}
	return info
}

// Name is "tt:N" or "tt-emu:N".
func (d *Device) Name() string { return d.name }

// Backend is "tt".
func (d *Device) Backend() string { return ttruntime.Backend }

// Info describes the chip as its runtime reported it.
func (d *Device) Info() *driver.DeviceInfo { return d.info }

// Pool is the chip's DRAM.
func (d *Device) Pool() driver.Pool { return d.pool }

// Runtime is what the chip's runtime reported at the handshake.
func (d *Device) Runtime() ttruntime.InitReply { return d.rt.Info() }

// Compile validates the program's Tenstorrent variant against the chip.
// A program whose core sets and argument values read no Variable param
// and whose grid is constant is built in the runtime now (so a kernel
// that does not build fails here); others are built at their first
// launch, once per distinct launch grid and values of the Variable params
// their expressions read.
func (d *Device) Compile(ctx context.Context, p *driver.Program) (driver.Executable, error) {
	if p != nil {
		p = p.WithVariant(p.Variant(VariantFormat))
	}
	if !d.rt.Alive() {
		// A closed or lost device: the client says how it ended.
		if err := d.rt.Ping(ctx); err != nil {
			return nil, err
		}
	}
	info := d.rt.Info()
	if err := checkProgram(p, info); err != nil {
		return nil, err
	}
	e := &Executable{dev: d, prog: p, vars: exprVars(p), progs: map[string]*runtimeProgram{}}
	if len(e.vars) == 0 {
		grid, err := LaunchGrid(p, nil, info.Grid)
		if err != nil {
			return nil, err
		}
		if _, err := e.program(ctx, nil, grid); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Close ends the runtime (gracefully), gives the chip back and invalidates
// the pool and every executable. Work submitted and not yet sent (waiting
// for its events) is cancelled: its events fail with ErrClosed. Work sent
// to the runtime is drained: the runtime answers it, its events end, and
// then it exits. When the runtime had to be stopped with
// SIGTERM or SIGKILL, the error says so (a *ttruntime.ShutdownError); the
// chip is given back all the same. While a launch whose caller gave up is
// unanswered (a hung kernel), the runtime gets the client's
// AbandonedGrace (1 s) to exit and is then killed, so that a program
// exiting during a hung kernel exits promptly. It is safe to call more
// than once; later calls return nil, as the client's Close does.
func (d *Device) Close() error {
	var err error
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		d.sub.close()
		err = errors.Join(d.pool.close(), d.rt.Close(), d.lock.Unlock())
	})
	return err
}

// cleanupTimeout is the runtime client's CleanupTimeout for every chip: how
// long the cleanup calls (the pool's free on a buffer's last Release, an
// executable's Release) wait for their reply once sent, in place of the
// call timeout (120 s, config timeout_s). These calls are cheap in the
// runtime, so when this expires the runtime is presumed hung and killed,
// as the client does on any call's timeout: the device is lost, and the
// cleanups after it fail at once instead of waiting in turn.
const cleanupTimeout = 5 * time.Second

// Executable is a program compiled on one chip: the runtime programs
// built for it so far, one per launch grid and values of the Variable
// params its expressions read. Release is idempotent and releases them
// all; Launch and LaunchTimed after Release, or after the device's Close,
// fail with an error wrapping driver.ErrClosed.
type Executable struct {
	dev      *Device
	prog     *driver.Program
	vars     []int // the Variable params its expressions read
	released atomic.Bool

	mu    sync.Mutex // held while a runtime program is made, so each is made once
	progs map[string]*runtimeProgram

	warnMu   sync.Mutex
	warnings []string // of synchronous runs, until Warnings takes them
}

// noteWarnings keeps a run reply's warnings for Warnings.
func (e *Executable) noteWarnings(w []string) {
	if len(w) == 0 {
		return
	}
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	for _, m := range w { // a repeated run warns again: keep one of each
		if !slices.Contains(e.warnings, m) {
			e.warnings = append(e.warnings, m)
		}
	}
}

// Warnings implements driver.Warner: the runtime's warnings of the
// synchronous runs since the last call.
func (e *Executable) Warnings() []string {
	e.warnMu.Lock()
	defer e.warnMu.Unlock()
	w := e.warnings
	e.warnings = nil
	return w
}

// program is the runtime program for a launch with args on grid, made and
// compiled in the runtime on first use.
func (e *Executable) program(ctx context.Context, args []driver.LaunchArg, grid [2]uint32) (*runtimeProgram, error) {
	key := cacheKey(grid, e.vars, args)
	e.mu.Lock()
	defer e.mu.Unlock()
	if rp, ok := e.progs[key]; ok {
		return rp, nil
	}
	if e.released.Load() {
		return nil, driver.Errorf(ttruntime.Backend, "launch", driver.ErrClosed, "program %q was released", e.prog.Name)
	}
	info := e.dev.rt.Info()
	rp, err := resolve(e.prog, args, grid, &info)
	if err != nil {
		return nil, err
	}
	r, err := e.dev.rt.Compile(ctx, rp.req)
	if err != nil {
		return nil, err
	}
	rp.id = r.Program
	e.progs[key] = rp
	return rp, nil
}

// CheckLaunch checks a program's Tenstorrent variant for a launch with
// args on the chip info describes (a device's Runtime()), as Compile and
// Launch do before they send anything: the program's own rules, the launch
// grid and the runtime program for those args (core sets, semaphore ids).
// It returns the compile request the driver would send; the runtime checks
// that request against the device at compile (docs/protocol.md). args may
// be nil for a program whose expressions read no Variable.
func CheckLaunch(p *driver.Program, args []driver.LaunchArg, info ttruntime.InitReply) (ttruntime.CompileRequest, error) {
	if p != nil {
		p = p.WithVariant(p.Variant(VariantFormat))
	}
	if err := checkProgram(p, info); err != nil {
		return ttruntime.CompileRequest{}, err
	}
	grid, err := LaunchGrid(p, args, info.Grid)
	if err != nil {
		return ttruntime.CompileRequest{}, err
	}
	rp, err := resolve(p, args, grid, &info)
	if err != nil {
		return ttruntime.CompileRequest{}, err
	}
	return rp.req, nil
}

// Launch runs the program on the launch's grid and waits.
func (e *Executable) Launch(ctx context.Context, l *driver.Launch) error {
	_, err := e.run(ctx, l, false)
	return err
}

// LaunchTimed runs the program once and returns the run time the device
// (or emulator) measured.
func (e *Executable) LaunchTimed(ctx context.Context, l *driver.Launch) (time.Duration, error) {
	ns, err := e.run(ctx, l, true)
	if ns > uint64(1<<63-1) {
		ns = 1<<63 - 1
	}
	return time.Duration(ns), err
}

func (e *Executable) closedErr() error {
	if e.released.Load() {
		return driver.Errorf(ttruntime.Backend, "launch", driver.ErrClosed, "program %q was released", e.prog.Name)
	}
	if e.dev.closed.Load() {
		return driver.Errorf(ttruntime.Backend, "launch", driver.ErrClosed, "program %q: device %s is closed", e.prog.Name, e.dev.name)
	}
	return nil
}

// run is a synchronous launch: straight to the runtime when nothing is
// queued on the device, else behind what is (queuedRun).
func (e *Executable) run(ctx context.Context, l *driver.Launch, timed bool) (uint64, error) {
	req, err := e.prepare(ctx, l, timed)
	if err != nil {
		return 0, err
	}
	if !e.dev.sub.idle() {
		return e.queuedRun(ctx, req)
	}
	r, err := e.dev.rt.Run(ctx, req)
	if err != nil {
		return 0, err
	}
	e.noteWarnings(r.Warnings)
	return r.ElapsedNS, nil
}

// prepare makes a checked launch's run request, building the runtime
// program for its grid first when it is new.
func (e *Executable) prepare(ctx context.Context, l *driver.Launch, timed bool) (ttruntime.RunRequest, error) {
	fail := func(err error) (ttruntime.RunRequest, error) { return ttruntime.RunRequest{}, err }
	if err := e.closedErr(); err != nil {
		return fail(err)
	}
	info := e.dev.rt.Info()
	grid, err := launchGrid(e.prog, l, info.Grid)
	if err != nil {
		return fail(err)
	}
	args := l.Args
	rp, err := e.program(ctx, args, grid)
	if err != nil {
		return fail(err)
	}
	req := ttruntime.RunRequest{Program: rp.id, Timed: timed, Args: make([]ttruntime.RunArg, len(args))}
	for i, a := range args {
		if a.IsVar() {
			req.Args[i] = ttruntime.ValueArg(a.Value.Bits)
			continue
		}
		b, err := e.dev.pool.layoutOf(a.Buffer)
		if err != nil {
			return fail(err)
		}
		prm := e.prog.Params[i]
		if d := rp.decls[i]; d != nil && !d.matches(b.spec, b.host) {
			got := (&paramDecl{spec: b.spec, host: b.host}).describe()
			return fail(driver.Errorf(ttruntime.Backend, "launch", driver.ErrInvalidArgument,
				"param %d (%s): the buffer is %s, but the program declares %s (allocate it with the executable's AllocParam)", i, prm.Name, got, d.describe()))
		}
		req.Args[i] = ttruntime.BufferArg(b.rid)
	}
	return req, nil
}

// AllocParam allocates the buffer for buffer param param as the program
// declares it (driver.ParamAllocator): its placement, interleaving or
// shard spec and page size, and its tile layout and storage format, for
// hostBytes of host data (the param's elements, row-major). The pool
// converts on Write and Read. A param without a declaration gets a plain
// buffer (DRAM, 2 KiB pages). A shard grid that reads a Variable param
// cannot be evaluated here and is an error.
func (e *Executable) AllocParam(ctx context.Context, param int, hostBytes int64) (driver.BufferID, error) {
	if err := e.closedErr(); err != nil {
		return 0, err
	}
	p := e.prog
	if param < 0 || param >= len(p.Params) || !p.Params[param].Kind.IsBuffer() {
		return 0, driver.Errorf(ttruntime.Backend, "alloc", driver.ErrInvalidArgument, "program %q: param %d is not a buffer param", p.Name, param)
	}
	d := defaultDecl(p.Params[param].DType)
	for _, b := range ProgramOf(p).Buffers {
		if b.Param != param {
			continue
		}
		var err error
		if d, err = declOf(p, b, nil); err != nil {
			return 0, err
		}
	}
	return e.dev.pool.allocSpec(ctx, hostBytes, d.spec, d.host)
}

// Release drops every runtime program of the executable. A second
// Release, or one after the device's Close (whose runtime exit dropped
// every program), does nothing and returns nil. Later launches and
// submissions fail with ErrClosed; runs already submitted still run: with
// work queued on the device (waiting for its events) the release requests
// go to the runtime behind it and Release returns nil at once; otherwise
// they are sent now, behind the runs in flight (the runtime runs requests
// in order), and their errors returned.
//
// Release has no context. Each request waits for the call slot as long as
// the call in flight takes (that call has its own bounds); once sent, its
// reply is bounded by cleanupTimeout (5 s) after the requests before it
// have been answered, not the 120 s call timeout: a
// runtime that does not answer a release that long is presumed hung
// (typically still inside a kernel whose launch was abandoned) and killed,
// as on any call's timeout, so the device is lost and every later call
// fails at once.
func (e *Executable) Release() error {
	if e.released.Swap(true) {
		return nil
	}
	e.mu.Lock()
	progs := e.progs
	e.progs = map[string]*runtimeProgram{}
	e.mu.Unlock()
	if e.dev.closed.Load() {
		return nil
	}
	keys := slices.Sorted(maps.Keys(progs))
	return e.dev.sub.inOrder(func() error {
		var errs []error
		for _, key := range keys {
			if err := e.dev.rt.Release(context.Background(), ttruntime.ProgramRequest{Program: progs[key].id}); err != nil {
				errs = append(errs, err)
				if errors.Is(err, driver.ErrDeviceLost) {
					break // the rest went with the runtime
				}
			}
		}
		return errors.Join(errs...)
	}, func() {
		for _, key := range keys {
			_, _ = e.dev.rt.SendRelease(context.Background(), ttruntime.ProgramRequest{Program: progs[key].id}, nil)
		}
	})
}

// Programs is how many runtime programs the executable holds.
func (e *Executable) Programs() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.progs)
}

var (
	_ driver.Device         = (*Device)(nil)
	_ driver.Executable     = (*Executable)(nil)
	_ driver.ParamAllocator = (*Executable)(nil)
)
