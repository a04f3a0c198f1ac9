package driver

import (
	"context"
	"sync"
	"sync/atomic"
)

// ReleaseOnce is the body of an executable's Release as the executable
// contract has it: the first call marks *released and runs free, both
// under mu (the lock the executable's launches hold, so that none is
// halfway through); every later call does nothing and returns nil.
func ReleaseOnce(mu sync.Locker, released *bool, free func() error) error {
	mu.Lock()
	defer mu.Unlock()
	if *released {
		return nil
	}
	*released = true
	return free()
}

// ErrReleased is the error of a launch of a released executable: ErrClosed,
// for backend's "launch".
func ErrReleased(backend string) error {
	return Errorf(backend, "launch", ErrClosed, "executable released")
}

// CheckReleased is ErrReleased once *released is set (read under mu), else
// nil: a launch's check, before it looks at its args, that its executable
// is still there.
func CheckReleased(backend string, mu sync.Locker, released *bool) error {
	mu.Lock()
	defer mu.Unlock()
	if *released {
		return ErrReleased(backend)
	}
	return nil
}

// HoldExecutable adds a launch's reference to an executable's refs unless
// it has been released (*released read under mu, so that Release cannot
// free it in between): ErrReleased then, and refs is left alone.
func HoldExecutable(backend string, mu sync.Locker, released *bool, refs *atomic.Int32) error {
	mu.Lock()
	defer mu.Unlock()
	if *released {
		return ErrReleased(backend)
	}
	refs.Add(1)
	return nil
}

// CheckOpen is what a device's operation checks first: ctx's error, then
// ErrClosed for backend's op once *closed is set (read under mu), naming
// the device; else nil.
func CheckOpen(ctx context.Context, backend, op, device string, mu sync.Locker, closed *bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if *closed {
		return Errorf(backend, op, ErrClosed, "%s", device)
	}
	return nil
}
