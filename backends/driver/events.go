package driver

import (
	"context"

	"github.com/zyxtt/zyxtt/internal/core"
)

// SubmitNow is the asynchronous form of work that a backend does in the
// caller: it waits for every event in after (ctx bounds the wait) and then
// runs run, and returns run's result as an event that has already ended. A
// failed dependency or an ended ctx is the event's error, and run does not
// run. It gives no overlap; a backend with a queue submits there instead.
func SubmitNow(ctx context.Context, after []Event, run func() error) (Event, error) {
	err := core.WaitAll(ctx, after...)
	if err == nil {
		err = run()
	}
	return core.Completed(err), nil
}

// Wait is a submit-and-wait: it waits for the event that submit returns
// (Launch as Submit, Write as WriteAsync).
func Wait(ctx context.Context, ev Event, err error) error {
	if err != nil {
		return err
	}
	return ev.Wait(ctx)
}
