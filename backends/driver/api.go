// Package backends is the device API that every zyx-tt user sees: devices,
// their memory pools and buffers, programs and their launch, the backend
// registry with lazy initialisation, device selection with fallback, the
// config file, and copies between pools.
package driver

import (
	"context"
	"fmt"
	"time"

	"github.com/zyxtt/zyxtt/hostpool"
	"github.com/zyxtt/zyxtt/internal/core"
)

// BufferID names a buffer inside one pool.
type BufferID = core.BufferID

// Pool is a device's memory. Buffers are refcounted: Alloc starts the count
// at one and the last Release frees the buffer. Every method is safe for
// concurrent use; an unknown, freed or foreign id is ErrUnknownBuffer.
// Package backends checks transfer ranges against the buffer's Size before
// it calls Write, Read, WriteAsync or ReadAsync, and sizes before Alloc.
type Pool interface {
	// Name identifies the pool ("host", "cuda:0", "tt:1").
	Name() string
	Alloc(ctx context.Context, bytes int64) (BufferID, error)
	Retain(id BufferID) error
	Release(id BufferID) error
	Size(id BufferID) (int64, error)
	// FreeBytes is how many more bytes the pool can hand out.
	FreeBytes() int64
	// Write copies src into the buffer at off. When src lies in host-pool
	// memory a backend may read it in place (the Tenstorrent runtime does).
	Write(ctx context.Context, dst BufferID, off int64, src []byte) error
	// Read copies the buffer's bytes at off into dst.
	Read(ctx context.Context, src BufferID, off int64, dst []byte) error
	// WriteAsync queues Write's copy after every event in after and
	// returns its event; src must stay unchanged until the event is done.
	// The range and the buffer are checked at once (an error, nothing
	// queued); a failure while the copy runs is the event's.
	WriteAsync(ctx context.Context, dst BufferID, off int64, src []byte, after ...Event) (Event, error)
	// ReadAsync queues Read's copy after every event in after and returns
	// its event; dst holds the bytes once the event has succeeded.
	ReadAsync(ctx context.Context, src BufferID, off int64, dst []byte, after ...Event) (Event, error)
}

// HostMemory is a pool whose buffers are addressable host memory (the host
// pool, the disk pool). Copies use it to skip staging.
type HostMemory interface {
	Bytes(id BufferID) ([]byte, error)
}

// PeerCopier is a pool that can copy from another pool of its own backend
// without host staging (CUDA peer copies, a runtime's device-to-device copy).
// It returns ErrUnsupported when it cannot handle that pair, and Copy then
// stages through the host pool.
type PeerCopier interface {
	CopyFrom(ctx context.Context, dst BufferID, dstOff int64, src Pool, srcID BufferID, srcOff, n int64) error
}

// TransferUnitPool is a pool whose buffers move in whole units: a
// Tenstorrent tile-layout buffer converts whole tile rows, so a transfer of
// part of it must start and end on a row. Copy makes its chunks whole units
// of both pools.
type TransferUnitPool interface {
	TransferUnit(id BufferID) (int64, error)
}

// Device runs programs on the memory of its Pool.
type Device interface {
	// Name is the selector that names this device ("cuda:0", "c", "tt:1").
	Name() string
	// Backend is the registered backend name ("cuda", "c", "tt").
	Backend() string
	Info() *DeviceInfo
	Pool() Pool
	// Compile builds the program's variant for this backend. Package
	// backends has checked that p is valid and has a variant in one of
	// Info().Formats, and that ctx has not ended.
	Compile(ctx context.Context, p *Program) (Executable, error)
	// Close releases the device; its pool's buffers become invalid unless
	// the pool is shared (the host pool).
	Close() error
}

// Executable is a compiled program on one device. The launch it is given
// was checked by package backends: its args match the program's params (the
// buffers are of the device's pool, the scalars of their params' dtypes) and
// its grid was evaluated within the device's MaxGlobalWorkDims.
type Executable interface {
	// Launch runs the program and waits for it to finish.
	Launch(ctx context.Context, l *Launch) error
	// Submit queues a run of the program on the device's queue, after every
	// event in after (of any device, or HostEvents), and returns its event
	// at once. A failed run is the event's error, and work submitted after
	// that event fails with ErrDependency wrapping it. The buffers and the
	// program stay alive until the run has ended, whatever is released
	// meanwhile. When ctx ends before the run starts, the run is cancelled
	// where the backend can (docs/api.md, "Events").
	Submit(ctx context.Context, l *Launch, after ...Event) (Event, error)
	// LaunchTimed runs the program once, uncontended, and returns the run
	// time the device measured.
	LaunchTimed(ctx context.Context, l *Launch) (time.Duration, error)
	// Release frees the compiled program once the runs that use it have
	// ended; package backends calls it once.
	Release() error
}

// Warner is an Executable that reports what the device noticed during its
// runs and did not stop for (the Tenstorrent emulator's watcher warnings).
type Warner interface {
	// Warnings returns the warnings of the synchronous launches (Launch,
	// LaunchTimed) that ended since the last call, and forgets them.
	Warnings() []string
}

// Launch is a checked launch: its args, and what they come to.
type Launch struct {
	Args []LaunchArg
	// Grid is the number of work groups on each axis; the axes the program
	// leaves out are 1.
	Grid [3]uint64
	// Empty says an axis is 0: the launch runs nothing and succeeds.
	Empty bool
	// Sizes are the buffer args' sizes in bytes, by param ordinal (0 for a
	// scalar).
	Sizes []int64
}

// ParamAllocator is an optional Executable capability: it allocates the
// buffer for param i as the program declares it (a Tenstorrent program's L1
// or sharded placement, page size, tile layout or block-float storage), for
// hostBytes of host data (the param's elements in its dtype, row-major).
// The buffer belongs to the device's pool; Write and Read move host data and
// the pool converts. Callers that allocate a program's buffers (the bundle
// pipeline) use it when the executable has it, and Pool.Alloc otherwise.
type ParamAllocator interface {
	AllocParam(ctx context.Context, param int, hostBytes int64) (BufferID, error)
}

// LaunchArg is one launch argument: a buffer of the device's pool or a
// scalar value for a Variable param.
type LaunchArg struct {
	Buffer BufferID
	Value  Constant
	isVar  bool
}

// BufArg is a buffer argument.
func BufArg(id BufferID) LaunchArg { return LaunchArg{Buffer: id} }

// VarArg is a scalar argument.
func VarArg(c Constant) LaunchArg { return LaunchArg{Value: c, isVar: true} }

// IsVar reports whether the argument is a scalar.
func (a LaunchArg) IsVar() bool { return a.isVar }

func (a LaunchArg) String() string {
	if a.isVar {
		return "var " + a.Value.String()
	}
	return fmt.Sprintf("buffer %d", a.Buffer)
}

// The host pool is an ordinary pool whose memory the host addresses.
var (
	_ Pool       = (*hostpool.Pool)(nil)
	_ HostMemory = (*hostpool.Pool)(nil)
)
