package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrDependency: the work did not run because an event it was submitted
// after failed. The error wraps the failed event's own error as well, so
// errors.Is finds both this and the original cause.
var ErrDependency = errors.New("a dependency failed")

// Event is the completion of work submitted to a device (a launch, an
// asynchronous transfer or copy) or of host work (HostEvent). Any device's
// event may be passed as an `after` dependency to work on any other.
// Every method is safe for concurrent use, and an event may be waited on
// any number of times.
type Event interface {
	// Done is closed once the work has ended, successfully or not.
	Done() <-chan struct{}
	// Err is the work's error once Done is closed, and nil before.
	Err() error
	// Wait blocks until the work ends or ctx is done and returns the
	// work's error, or ctx's. Giving up on a wait does not cancel the work.
	Wait(ctx context.Context) error
}

// HostEvent is an Event that the host completes by calling Complete: device
// work submitted after it waits for something the host does. Drivers use it
// for the events of work they run on host goroutines.
type HostEvent struct {
	once sync.Once
	done chan struct{}
	err  error
}

// NewHostEvent returns a pending HostEvent.
func NewHostEvent() *HostEvent { return &HostEvent{done: make(chan struct{})} }

// Complete ends the event with err (nil for success). Only the first call
// counts; it reports whether this call was it.
func (e *HostEvent) Complete(err error) bool {
	first := false
	e.once.Do(func() {
		e.err = err
		close(e.done)
		first = true
	})
	return first
}

// Done is closed once Complete has been called.
func (e *HostEvent) Done() <-chan struct{} { return e.done }

// Err is the error Complete was given, nil before it.
func (e *HostEvent) Err() error {
	select {
	case <-e.done:
		return e.err
	default:
		return nil
	}
}

// Wait blocks until Complete or until ctx is done.
func (e *HostEvent) Wait(ctx context.Context) error {
	select {
	case <-e.done:
		return e.err
	default:
	}
	select {
	case <-e.done:
		return e.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Completed returns an event that has already ended with err: what an
// asynchronous call returns for work it did at once.
func Completed(err error) Event {
	e := NewHostEvent()
	e.Complete(err)
	return e
}

// WaitAll waits for every event in turn. It returns nil when all of them
// succeeded, ctx's error when ctx ends first, and otherwise the first failed
// event's error wrapped as a dependency failure (DependencyFailed). Nil
// events are skipped.
func WaitAll(ctx context.Context, events ...Event) error {
	for i, e := range events {
		if e == nil {
			continue
		}
		if err := e.Wait(ctx); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
				return err
			}
			return DependencyFailed(i, err)
		}
	}
	return nil
}

// DependencyFailed is the error of work that did not run because its i-th
// `after` event failed with err. It wraps both ErrDependency and err.
func DependencyFailed(i int, err error) error {
	return fmt.Errorf("%w (event %d): %w", ErrDependency, i, err)
}

// Ready reports, without blocking, whether work submitted after events may
// be decided now: done is true when every event has succeeded (err nil) or
// one has already failed (err is DependencyFailed of the first such).
// Asynchronous calls use it to do work at once when there is nothing to
// wait for.
func Ready(events []Event) (done bool, err error) {
	done = true
	for i, e := range events {
		if e == nil {
			continue
		}
		ended, err := Ended(e)
		if err != nil {
			return true, DependencyFailed(i, err)
		}
		done = done && ended
	}
	return done, nil
}

// Ended reports, without waiting, whether e has ended, and its error then
// (nil while it has not).
func Ended(e Event) (ended bool, err error) {
	select {
	case <-e.Done():
		return true, e.Err()
	default:
		return false, nil
	}
}

// After runs f once every event in events has succeeded, and returns the
// event of f's result. When nothing is left to wait for, f runs at once in
// the caller; otherwise as Go. It is the asynchronous form of short host
// work that has no queue of its own (host memory copies).
func After(ctx context.Context, events []Event, hold func() error, release func(), f func() error) (Event, error) {
	if done, err := Ready(events); done {
		if err == nil {
			err = f()
		}
		return Completed(err), nil
	}
	return Go(ctx, events, hold, release, f)
}

// Go runs f on a goroutine of its own once every event in events has
// succeeded, and returns the event of f's result. hold (when not nil) is
// called first, and an error of it is returned with nothing started;
// release (when not nil) is called after f, or in its place when f does not
// run, and the event completes last. When an event fails, or ctx ends
// first, f does not run and the event carries that error. hold and release
// keep the memory f touches alive.
func Go(ctx context.Context, events []Event, hold func() error, release func(), f func() error) (Event, error) {
	if hold != nil {
		if err := hold(); err != nil {
			return nil, err
		}
	}
	e := NewHostEvent()
	go func() {
		err := WaitAll(ctx, events...)
		if err == nil {
			err = f()
		}
		if release != nil {
			release()
		}
		e.Complete(err)
	}()
	return e, nil
}
