// Package core holds the types every layer of zyx-tt shares and users see
// through package backends: buffer ids, the sentinel errors and the typed
// native-call error. It imports nothing outside the standard library, so the
// host pool, the runtime driver and every backend can depend on it.
package core

import (
	"errors"
	"fmt"
)

// BufferID names a buffer inside one pool. Ids are never reused, and every
// pool but the host pool draws them from one process-wide counter, so an id
// that one pool issued is unknown to every other pool.
type BufferID uint64

// Sentinel errors. Check them with errors.Is; every layer wraps them with %w.
var (
	// ErrNoDevice: no usable device (of a backend, or for a selector).
	ErrNoDevice = errors.New("no device")
	// ErrNoVariant: the program has no variant in a format the device accepts.
	ErrNoVariant = errors.New("no variant for this backend")
	// ErrDeviceLost: the device (or its runtime process, or its context)
	// is gone; the handle must not be used again.
	ErrDeviceLost = errors.New("device lost")
	// ErrOutOfMemory: a pool cannot hold the allocation.
	ErrOutOfMemory = errors.New("out of memory")
	// ErrUnknownBuffer: a buffer id that the pool never issued or has freed.
	ErrUnknownBuffer = errors.New("unknown buffer")
	// ErrInvalidArgument: bad input (sizes, args, ranges).
	ErrInvalidArgument = errors.New("invalid argument")
	// ErrCompile: a program failed to build; the error carries the log.
	ErrCompile = errors.New("compile failed")
	// ErrUnsupported: the device cannot do what was asked.
	ErrUnsupported = errors.New("unsupported")
	// ErrClosed: the device, pool, executable or runtime was closed.
	ErrClosed = errors.New("closed")
)

// Error is the typed error every backend returns for a failed native call:
// which backend, which operation, what the native layer said, and the
// sentinel it amounts to.
type Error struct {
	Backend string // "cuda", "opencl", "tt" …
	Op      string // "cuMemAlloc_v2", "compile", "write_buf" …
	Native  string // the native layer's words: status name, build log, stderr
	Err     error  // a sentinel above, or the underlying error
}

func (e *Error) Error() string {
	msg := e.Backend + ": " + e.Op
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Native != "" {
		msg += ": " + e.Native
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error whose Err wraps sentinel with a formatted detail.
func Errorf(backend, op string, sentinel error, format string, args ...any) *Error {
	err := sentinel
	if format != "" {
		err = fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
	}
	return &Error{Backend: backend, Op: op, Err: err}
}

// CheckSpan says whether bytes [off, off+n) lie inside buffer id of size
// bytes, without overflowing on hostile offsets. It returns nil, or an
// *Error of backend and op that wraps ErrInvalidArgument.
func CheckSpan(backend, op string, id BufferID, off, n, size int64) error {
	if off < 0 || n < 0 || off > size || n > size-off {
		return Errorf(backend, op, ErrInvalidArgument, "range [%d,+%d) outside buffer %d of %d bytes", off, n, id, size)
	}
	return nil
}
