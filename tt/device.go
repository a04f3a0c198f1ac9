package tt

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zyxtt/zyxtt/backends"
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
	info     *backends.DeviceInfo
	pool     *Pool

	closed    atomic.Bool // set before Close ends the runtime
	closeOnce sync.Once
	closeErr  error
}

func newDevice(name string, emulated bool, rt *ttruntime.Client, lock *ttruntime.ChipLock, host *hostpool.Pool, card *Card) *Device {
	d := &Device{name: name, emulated: emulated, rt: rt, lock: lock}
	d.pool = newPool(name, rt, host)
	d.info = deviceInfo(rt.Info(), emulated, card)
	return d
}

// deviceInfo describes a chip from what its runtime reported.
func deviceInfo(ri ttruntime.InitReply, emulated bool, card *Card) *backends.DeviceInfo {
	cores := int(ri.Grid.Rows) * int(ri.Grid.Cols)
	arch := map[string]string{ArchWormhole: "Wormhole", ArchBlackhole: "Blackhole"}[ri.Arch]
	if arch == "" {
		arch = ri.Arch
	}
	info := &backends.DeviceInfo{
		Formats:             []backends.Format{backends.FormatTT},
		Name:                fmt.Sprintf("%s %s chip %d", arch, ri.Board, ri.Chip),
		Kind:                backends.KindAccelerator,
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
		Tenstorrent:         true,
		Emulated:            emulated,
		Tile:                [2]uint64{TileDim, TileDim},
		TileSizes:           [][2]uint64{{TileDim, TileDim}},
		MMALayouts: []backends.MMADims{
			{M: TileDim, N: TileDim, K: TileDim, In: backends.BF16, Acc: backends.F32},
			{M: TileDim, N: TileDim, K: TileDim, In: backends.BF16, Acc: backends.BF16},
		},
		NumCircularBuffers: NumCBs,
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
		info.Kind = backends.KindCPU
		info.Compute = uint64(cores) * 1_000_000_000 // host threads, not Tensix math
	}
	if card != nil {
		info.Extra["pci"] = strings.Join(card.PCIAddresses, ",")
		if card.Serial != "" {
			info.Extra["serial"] = card.Serial
		}
	}
	for _, f := range Formats {
		info.DTypeCaps[f] = backends.CapFloatOps
		if !f.IsFloat() {
			info.DTypeCaps[f] = backends.CapIntOps
		}
	}
	return info
}

// Name is "tt:N" or "tt-emu:N".
func (d *Device) Name() string { return d.name }

// Backend is "tt".
func (d *Device) Backend() string { return ttruntime.Backend }

// Info describes the chip as its runtime reported it.
func (d *Device) Info() *backends.DeviceInfo { return d.info }

// Pool is the chip's DRAM.
func (d *Device) Pool() backends.Pool { return d.pool }

// Runtime is what the chip's runtime reported at the handshake.
func (d *Device) Runtime() ttruntime.InitReply { return d.rt.Info() }

// Compile validates the program's Tenstorrent variant against the chip and
// builds it in the runtime.
func (d *Device) Compile(ctx context.Context, p *backends.Program) (backends.Executable, error) {
	if p != nil {
		p = p.WithVariant(p.Variant(backends.FormatTT))
	}
	if err := ValidateProgram(p, d.rt.Info()); err != nil {
		return nil, err
	}
	r, err := d.rt.Compile(ctx, compileRequest(p))
	if err != nil {
		return nil, err
	}
	return &Executable{dev: d, prog: p, id: r.Program}, nil
}

// Close ends the runtime (gracefully), gives the chip back and invalidates
// the pool and every executable. It is safe to call more than once. When
// the runtime had to be stopped with SIGTERM or SIGKILL, the error says so
// (a *ttruntime.ShutdownError); the chip is given back all the same.
func (d *Device) Close() error {
	d.closeOnce.Do(func() {
		d.closed.Store(true)
		d.closeErr = errors.Join(d.pool.close(), d.rt.Close(), d.lock.Unlock())
	})
	return d.closeErr
}

// cleanupTimeout is the runtime client's CleanupTimeout for every chip: how
// long the cleanup calls (the pool's free on a buffer's last Release, an
// executable's Release) wait for their reply once sent, in place of the
// call timeout (120 s, config timeout_s). These calls are cheap in the
// runtime, so when this expires the runtime is presumed hung and killed,
// as the client does on any call's timeout: the device is lost, and the
// cleanups after it fail at once instead of waiting in turn.
const cleanupTimeout = 5 * time.Second

// Executable is a program compiled on one chip. Release is idempotent;
// Launch and LaunchTimed after Release, or after the device's Close, fail
// with an error wrapping backends.ErrClosed.
type Executable struct {
	dev      *Device
	prog     *backends.Program
	id       uint64
	released atomic.Bool
}

// Launch runs the program on the grid evaluated from args and waits.
func (e *Executable) Launch(ctx context.Context, args []backends.LaunchArg) error {
	_, err := e.run(ctx, args, false)
	return err
}

// LaunchTimed runs the program once and returns the run time the device
// (or emulator) measured.
func (e *Executable) LaunchTimed(ctx context.Context, args []backends.LaunchArg) (time.Duration, error) {
	ns, err := e.run(ctx, args, true)
	if ns > uint64(1<<63-1) {
		ns = 1<<63 - 1
	}
	return time.Duration(ns), err
}

func (e *Executable) run(ctx context.Context, args []backends.LaunchArg, timed bool) (uint64, error) {
	if e.released.Load() {
		return 0, backends.Errorf(ttruntime.Backend, "launch", backends.ErrClosed, "program %q was released", e.prog.Name)
	}
	if e.dev.closed.Load() {
		return 0, backends.Errorf(ttruntime.Backend, "launch", backends.ErrClosed, "program %q: device %s is closed", e.prog.Name, e.dev.name)
	}
	grid, err := LaunchGrid(e.prog, args, e.dev.rt.Info().Grid)
	if err != nil {
		return 0, err
	}
	if _, err := driver.CheckArgs(e.prog, e.dev.pool, args); err != nil {
		return 0, &backends.Error{Backend: ttruntime.Backend, Op: "launch", Err: err}
	}
	req := ttruntime.RunRequest{Program: e.id, Grid: grid, Timed: timed, Args: make([]ttruntime.RunArg, len(args))}
	for i, a := range args {
		if a.IsVar() {
			req.Args[i] = ttruntime.ValueArg(a.Value.Bits)
			continue
		}
		rid, err := e.dev.pool.runtimeID(a.Buffer)
		if err != nil {
			return 0, err
		}
		req.Args[i] = ttruntime.BufferArg(rid)
	}
	r, err := e.dev.rt.Run(ctx, req)
	if err != nil {
		return 0, err
	}
	return r.ElapsedNS, nil
}

// Release drops the compiled program. A second Release, or one after the
// device's Close (whose runtime exit dropped every program), does nothing
// and returns nil.
//
// Release has no context. Its request waits for the call slot as long as
// the call in flight takes (that call has its own bounds); once sent, its
// reply is bounded by cleanupTimeout (5 s), not the 120 s call timeout: a runtime
// that does not answer a release that long is presumed hung (typically
// still inside a kernel whose launch was abandoned) and killed, as on any
// call's timeout, so the device is lost and every later call fails at once.
func (e *Executable) Release() error {
	if e.released.Swap(true) || e.dev.closed.Load() {
		return nil
	}
	return e.dev.rt.Release(context.Background(), ttruntime.ProgramRequest{Program: e.id})
}

var (
	_ backends.Device     = (*Device)(nil)
	_ backends.Executable = (*Executable)(nil)
)
