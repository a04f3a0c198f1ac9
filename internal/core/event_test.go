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
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.Wait(context.Background())
		}()
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

func TestGoRunsAfterItsDependencies(t *testing.T) {
	first := NewHostEvent()
	ran := make(chan struct{})
	ev := Go(context.Background(), []Event{first}, func() error { close(ran); return nil })
	select {
	case <-ran:
		t.Fatal("ran before its dependency")
	case <-time.After(10 * time.Millisecond):
	}
	first.Complete(nil)
	require.NoError(t, ev.Wait(context.Background()))
	<-ran

	boom := errors.New("boom")
	ev = Go(context.Background(), []Event{Completed(boom)}, func() error { t.Error("ran after a failed dependency"); return nil })
	require.ErrorIs(t, ev.Wait(context.Background()), boom)
	require.ErrorIs(t, ev.Err(), ErrDependency)

	ctx, cancel := context.WithCancel(context.Background())
	pending := NewHostEvent()
	ev = Go(ctx, []Event{pending}, func() error { t.Error("ran after its ctx ended"); return nil })
	cancel()
	require.ErrorIs(t, ev.Wait(context.Background()), context.Canceled)
}
