package driver

import (
	"context"

	"github.com/zyxtt/zyxtt/internal/core"
)

// Event is the completion of submitted work: Executable.Submit,
// Pool.WriteAsync and ReadAsync, CopyAsync, or a HostEvent. Wait for it, or
// pass it as an `after` dependency of more work on any device. docs/api.md
// describes the event model.
type Event = core.Event

// HostEvent is an Event the host completes (Complete): device work
// submitted after it waits until then.
type HostEvent = core.HostEvent

// ErrDependency: the work did not run because an event it waited on failed;
// the error wraps that event's error too.
var ErrDependency = core.ErrDependency

// NewHostEvent returns a pending HostEvent.
func NewHostEvent() *HostEvent { return core.NewHostEvent() }

// Completed returns an event that has already ended with err.
func Completed(err error) Event { return core.Completed(err) }

// WaitAll waits for every event and returns nil when all succeeded, ctx's
// error when it ends first, or the first failure wrapped in ErrDependency.
func WaitAll(ctx context.Context, events ...Event) error { return core.WaitAll(ctx, events...) }
