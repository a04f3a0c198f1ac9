package driver

import "github.com/zyxtt/zyxtt/internal/core"

// Sentinel errors. Check them with errors.Is; backends wrap them with %w.
// They are the same values in every package of zyx-tt (internal/core).
var (
	// ErrNoDevice: no usable device (of a backend, or for a selector).
	ErrNoDevice = core.ErrNoDevice
	// ErrNoVariant: the program has no variant in a format the device accepts.
	ErrNoVariant = core.ErrNoVariant
	// ErrDeviceLost: the device (or its runtime process, or its context)
	// is gone; the handle must not be used again.
	ErrDeviceLost = core.ErrDeviceLost
	// ErrOutOfMemory: a pool cannot hold the allocation.
	ErrOutOfMemory = core.ErrOutOfMemory
	// ErrUnknownBuffer: a buffer id that the pool never issued or has freed,
	// or that another pool issued.
	ErrUnknownBuffer = core.ErrUnknownBuffer
	// ErrInvalidArgument: bad input (sizes, args, ranges).
	ErrInvalidArgument = core.ErrInvalidArgument
	// ErrCompile: a program failed to build; the error carries the log.
	ErrCompile = core.ErrCompile
	// ErrUnsupported: the device cannot do what was asked.
	ErrUnsupported = core.ErrUnsupported
	// ErrClosed: the device, pool, executable or runtime was closed.
	ErrClosed = core.ErrClosed
)

// Error is the typed error every backend returns for a failed native call:
// which backend, which operation, what the native layer said, and the
// sentinel it amounts to.
type Error = core.Error

// Errorf builds an *Error whose Err wraps sentinel with a formatted detail.
func Errorf(backend, op string, sentinel error, format string, args ...any) *Error {
	return core.Errorf(backend, op, sentinel, format, args...)
}
