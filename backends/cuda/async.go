package cuda

import (
	"context"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
)

// The asynchronous calls run synchronously in the caller (driver.SubmitNow)
// until this backend submits to a queue of its own.

// WriteAsync is Write after the events in after.
func (p *Pool) WriteAsync(ctx context.Context, dst backends.BufferID, off int64, src []byte, after ...backends.Event) (backends.Event, error) {
	return driver.SubmitNow(ctx, after, func() error { return p.Write(ctx, dst, off, src) })
}

// ReadAsync is Read after the events in after.
func (p *Pool) ReadAsync(ctx context.Context, src backends.BufferID, off int64, dst []byte, after ...backends.Event) (backends.Event, error) {
	return driver.SubmitNow(ctx, after, func() error { return p.Read(ctx, src, off, dst) })
}

// Submit is Launch after the events in after.
func (x *kernelExec) Submit(ctx context.Context, args []backends.LaunchArg, after ...backends.Event) (backends.Event, error) {
	return driver.SubmitNow(ctx, after, func() error { return x.Launch(ctx, args) })
}

// Submit is Launch after the events in after.
func (x *gemmExec) Submit(ctx context.Context, args []backends.LaunchArg, after ...backends.Event) (backends.Event, error) {
	return driver.SubmitNow(ctx, after, func() error { return x.Launch(ctx, args) })
}
