package core

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHostEventCompletesOnce(t *testing.T) {
	e := NewHostEvent()
	require.NoError(t, e.Err(), "a pending event has no error")
	select {
	case <-e.Done():
		t.Fatal("a new event is done")
	default:
	}
	boom := errors.New("boom")
	require.True(t, e.Complete(boom))
	require.False(t, e.Complete(nil), "only the first Complete counts")
	<-e.Done()
	require.ErrorIs(t, e.Err(), boom)
	require.ErrorIs(t, e.Wait(context.Background()), boom)
}

func TestHostEventWaitStopsWithCtx(t *testing.T) {
	e := NewHostEvent()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, e.Wait(ctx), context.DeadlineExceeded)
	require.NoError(t, e.Err(), "giving up a wait leaves the event pending")
	e.Complete(nil)
	require.NoError(t, e.Wait(context.Background()))
}

func TestHostEventConcurrentWaiters(t *testing.T) {
	e := NewHostEvent()
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			errs[i] = e.Wait(context.Background())
		})
	}
	boom := errors.New("boom")
	go e.Complete(boom)
	wg.Wait()
	for _, err := range errs {
		require.ErrorIs(t, err, boom)
	}
}

func TestWaitAllWrapsTheFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	ok, bad := Completed(nil), Completed(boom)
	require.NoError(t, WaitAll(context.Background(), ok, nil, ok))
	err := WaitAll(context.Background(), ok, bad, Completed(errors.New("later")))
	require.ErrorIs(t, err, ErrDependency)
	require.ErrorIs(t, err, boom, "the original error is kept")
	require.ErrorContains(t, err, "event 1")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = WaitAll(ctx, NewHostEvent())
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, ErrDependency, "a cancelled wait is not a failed dependency")
}

func TestAfterRunsAfterItsDependencies(t *testing.T) {
	ctx := context.Background()
	ran := 0
	ev, err := After(ctx, []Event{Completed(nil)}, nil, nil, func() error { ran++; return nil })
	require.NoError(t, err)
	require.Equal(t, 1, ran, "nothing to wait for: f runs at once, in the caller")
	require.NoError(t, ev.Err())

	first := NewHostEvent()
	held, released := 0, make(chan struct{})
	done := make(chan struct{})
	ev, err = After(ctx, []Event{first}, func() error { held++; return nil }, func() { close(released) },
		func() error { close(done); return nil })
	require.NoError(t, err)
	require.Equal(t, 1, held)
	select {
	case <-done:
		t.Fatal("ran before its dependency")
	case <-time.After(10 * time.Millisecond):
	}
	first.Complete(nil)
	require.NoError(t, ev.Wait(ctx))
	<-done
	<-released

	boom := errors.New("boom")
	ev, err = After(ctx, []Event{Completed(boom)}, nil, nil, func() error { t.Error("ran after a failed dependency"); return nil })
	require.NoError(t, err)
	require.ErrorIs(t, ev.Err(), boom, "a dependency that has already failed decides the event at once")
	require.ErrorIs(t, ev.Err(), ErrDependency)

	pending := NewHostEvent()
	released = make(chan struct{})
	ev, err = After(ctx, []Event{pending}, nil, func() { close(released) }, func() error { t.Error("ran after a failed dependency"); return nil })
	require.NoError(t, err)
	pending.Complete(boom)
	require.ErrorIs(t, ev.Wait(ctx), boom)
	<-released // released even when f never ran

	holdErr := errors.New("buffer gone")
	_, err = After(ctx, []Event{NewHostEvent()}, func() error { return holdErr }, nil, func() error { return nil })
	require.ErrorIs(t, err, holdErr, "a failed hold queues nothing")

	cctx, cancel := context.WithCancel(ctx)
	ev, err = After(cctx, []Event{NewHostEvent()}, nil, nil, func() error { t.Error("ran after its ctx ended"); return nil })
	require.NoError(t, err)
	cancel()
	require.ErrorIs(t, ev.Wait(ctx), context.Canceled)
}

func TestReady(t *testing.T) {
	boom := errors.New("boom")
	done, err := Ready(nil)
	require.True(t, done)
	require.NoError(t, err)
	done, _ = Ready([]Event{Completed(nil), NewHostEvent()})
	require.False(t, done)
	done, err = Ready([]Event{NewHostEvent(), Completed(boom)})
	require.True(t, done, "a failure decides at once, pending or not")
	require.ErrorIs(t, err, boom)
}

func TestEnded(t *testing.T) {
	boom := errors.New("boom")
	e := NewHostEvent()
	ended, err := Ended(e)
	require.False(t, ended)
	require.NoError(t, err)
	ended, err = Ended(Completed(nil))
	require.True(t, ended)
	require.NoError(t, err)
	require.True(t, e.Complete(boom))
	ended, err = Ended(e)
	require.True(t, ended)
	require.ErrorIs(t, err, boom)
}
