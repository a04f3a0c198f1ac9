package driver_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/zyxtt/zyxtt/backends/driver"
)

func TestQueueRunsInSubmissionOrder(t *testing.T) {
	q := driver.NewQueue()
	defer q.Close()
	var order []int
	var last driver.Event
	for i := range 100 {
		ev, err := q.Submit(context.Background(), nil, func() error { order = append(order, i); return nil }, nil)
		require.NoError(t, err)
		last = ev
	}
	require.NoError(t, last.Wait(context.Background()))
	want := make([]int, 100)
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, order)
}

func TestQueueWaitsForForeignEvents(t *testing.T) {
	q := driver.NewQueue()
	defer q.Close()
	host := driver.NewHostEvent()
	var ran atomic.Int32
	first, err := q.Submit(context.Background(), []driver.Event{host}, func() error { ran.Add(1); return nil }, nil)
	require.NoError(t, err)
	second, err := q.Submit(context.Background(), nil, func() error { ran.Add(10); return nil }, nil)
	require.NoError(t, err)
	time.Sleep(10 * time.Millisecond)
	require.Zero(t, ran.Load(), "nothing runs before the host event, not even later jobs (the queue is in order)")
	host.Complete(nil)
	require.NoError(t, second.Wait(context.Background()))
	require.NoError(t, first.Err())
	require.EqualValues(t, 11, ran.Load())
}

func TestQueueErrors(t *testing.T) {
	q := driver.NewQueue()
	defer q.Close()
	boom := errors.New("kernel failed")
	failed, err := q.Submit(context.Background(), nil, func() error { return boom }, nil)
	require.NoError(t, err)
	dependent, err := q.Submit(context.Background(), []driver.Event{failed}, func() error { t.Error("ran after a failed dependency"); return nil }, nil)
	require.NoError(t, err)
	independent, err := q.Submit(context.Background(), nil, func() error { return nil }, nil)
	require.NoError(t, err)

	require.ErrorIs(t, failed.Wait(context.Background()), boom)
	err = dependent.Wait(context.Background())
	require.ErrorIs(t, err, driver.ErrDependency)
	require.ErrorIs(t, err, boom)
	require.NoError(t, independent.Wait(context.Background()), "a failure does not fail work that does not depend on it")

	ctx, cancel := context.WithCancel(context.Background())
	block := driver.NewHostEvent()
	blocked, err := q.Submit(context.Background(), []driver.Event{block}, func() error { return nil }, nil)
	require.NoError(t, err)
	cancelled, err := q.Submit(ctx, nil, func() error { t.Error("ran after its ctx ended"); return nil }, nil)
	require.NoError(t, err)
	cancel()
	block.Complete(nil)
	require.NoError(t, blocked.Wait(context.Background()))
	require.ErrorIs(t, cancelled.Wait(context.Background()), context.Canceled)
}

func TestQueueFailEndsPendingWork(t *testing.T) {
	q := driver.NewQueue()
	defer q.Close()
	started, release := make(chan struct{}), make(chan struct{})
	running, err := q.Submit(context.Background(), nil, func() error { close(started); <-release; return nil }, nil)
	require.NoError(t, err)
	<-started
	var pending []driver.Event
	for range 8 {
		ev, err := q.Submit(context.Background(), nil, func() error { t.Error("ran after the device was lost"); return nil }, nil)
		require.NoError(t, err)
		pending = append(pending, ev)
	}
	q.Fail(driver.ErrDeviceLost)
	close(release)
	require.NoError(t, running.Wait(context.Background()), "the running job ends on its own")
	for _, ev := range pending {
		require.ErrorIs(t, ev.Wait(context.Background()), driver.ErrDeviceLost)
	}
}

func TestQueueCloseWaitsForSubmittedWork(t *testing.T) {
	q := driver.NewQueue()
	var done atomic.Int32
	var events []driver.Event
	for range 50 {
		ev, err := q.Submit(context.Background(), nil, func() error { time.Sleep(100 * time.Microsecond); done.Add(1); return nil }, nil)
		require.NoError(t, err)
		events = append(events, ev)
	}
	q.Close()
	require.EqualValues(t, 50, done.Load())
	for _, ev := range events {
		require.NoError(t, ev.Err())
	}
	_, err := q.Submit(context.Background(), nil, func() error { return nil }, nil)
	require.ErrorIs(t, err, driver.ErrClosed)
	q.Close() // again: nothing more
}

func TestQueueSubmitWaitsForRoom(t *testing.T) {
	q := driver.NewQueue()
	started, release := make(chan struct{}), make(chan struct{})
	_, err := q.Submit(context.Background(), nil, func() error { close(started); <-release; return nil }, nil)
	require.NoError(t, err)
	<-started // the worker holds this job, so the queue has QueueDepth free places
	for range driver.QueueDepth {
		_, err := q.Submit(context.Background(), nil, func() error { return nil }, nil)
		require.NoError(t, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	_, err = q.Submit(ctx, nil, func() error { return nil }, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a full queue holds the producer back")

	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := q.Submit(context.Background(), nil, func() error { return nil }, nil)
		require.NoError(t, err)
	})
	close(release)
	wg.Wait()
	q.Close()
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
