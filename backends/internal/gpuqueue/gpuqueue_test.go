package gpuqueue_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/backends/internal/gpuqueue"
	"github.com/zyxtt/zyxtt/internal/core"
)

// fakeEvent is an event of the fake device: queued once Admit has put its
// work on the device's (pretend) queue.
type fakeEvent struct {
	*core.HostEvent
	dev    *fakeDevice
	queued atomic.Bool
}

// job is one piece of the fake device's work.
type job struct {
	name     string
	ctx      context.Context
	after    []driver.Event
	ev       *fakeEvent
	releases atomic.Int32
}

func (j *job) Context() context.Context { return j.ctx }
func (j *job) Events() []driver.Event   { return j.after }
func (j *job) Release()                 { j.releases.Add(1) }
func (j *job) End(err error)            { j.ev.Complete(err) }

// fakeDevice admits work by noting its name, in order; its work never
// ends by itself.
type fakeDevice struct {
	q        gpuqueue.Queue[*job]
	admitted []string // under q.Mu
	admitErr error    // under q.Mu: what Admit returns (and then releases the job)
}

func newDevice() *fakeDevice {
	d := &fakeDevice{}
	d.q.Init("fake", "fake:0", gpuqueue.Lists, gpuqueue.Lists, gpuqueue.Hooks[*job]{
		Covered: func(e driver.Event) bool {
			o, ok := e.(*fakeEvent)
			return ok && o.dev == d && o.queued.Load()
		},
		Own: func(e driver.Event) (<-chan struct{}, bool) {
			o, ok := e.(*fakeEvent)
			if !ok || o.dev != d {
				return nil, false
			}
			return o.Done(), true
		},
		Admit: func(_ int, j *job) error {
			if d.admitErr != nil {
				j.Release()
				return d.admitErr
			}
			d.admitted = append(d.admitted, j.name)
			j.ev.queued.Store(true)
			d.q.Cond.Broadcast()
			return nil
		},
	})
	return d
}

func (d *fakeDevice) submit(t *testing.T, ctx context.Context, kind int, name string, after ...driver.Event) *job {
	t.Helper()
	j := &job{name: name, ctx: ctx, after: after, ev: &fakeEvent{HostEvent: core.NewHostEvent(), dev: d}}
	require.NoError(t, d.q.Submit(j, kind, "op"))
	return j
}

func (d *fakeDevice) order() []string {
	d.q.Mu.Lock()
	defer d.q.Mu.Unlock()
	return append([]string(nil), d.admitted...)
}

func (d *fakeDevice) deferred(k int) int {
	d.q.Mu.Lock()
	defer d.q.Mu.Unlock()
	return d.q.Deferred(k)
}

func ended(t *testing.T, j *job) error {
	t.Helper()
	select {
	case <-j.ev.Done():
		return j.ev.Err()
	case <-time.After(10 * time.Second):
		require.Fail(t, "the work never ended", j.name)
		return nil
	}
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

// Work waiting for nothing is admitted at once; a launch waiting for a
// host event holds back every launch after it, in order, but not a
// transfer waiting for nothing.
func TestDeferredLaunchesKeepTheirOrder(t *testing.T) {
	ctx := context.Background()
	d := newDevice()
	d.submit(t, ctx, gpuqueue.Launches, "l0")
	require.Equal(t, []string{"l0"}, d.order(), "work waiting for nothing is admitted in Submit")

	host := core.NewHostEvent()
	d.submit(t, ctx, gpuqueue.Launches, "l1", host)
	d.submit(t, ctx, gpuqueue.Launches, "l2")
	d.submit(t, ctx, gpuqueue.Transfers, "t0")
	require.Equal(t, []string{"l0", "t0"}, d.order(), "l2 waits behind l1; t0 goes ahead")
	require.Equal(t, 2, d.deferred(gpuqueue.Launches))

	host.Complete(nil)
	eventually(t, func() bool { return len(d.order()) == 4 }, "the held-back launches are admitted once the host event has ended")
	require.Equal(t, []string{"l0", "t0", "l1", "l2"}, d.order())
	require.Zero(t, d.deferred(gpuqueue.Launches))
}

// An own event that is not on the queue yet holds the work back until it
// is; one that is on the queue does not.
func TestOwnEventsAreWaitedForUntilQueued(t *testing.T) {
	ctx := context.Background()
	d := newDevice()
	l0 := d.submit(t, ctx, gpuqueue.Launches, "l0")
	d.submit(t, ctx, gpuqueue.Transfers, "t0", l0.ev)
	require.Equal(t, []string{"l0", "t0"}, d.order(), "a queued own event needs no waiting")

	host := core.NewHostEvent()
	t1 := d.submit(t, ctx, gpuqueue.Transfers, "t1", host)
	l1 := d.submit(t, ctx, gpuqueue.Launches, "l1", t1.ev)
	require.Equal(t, []string{"l0", "t0"}, d.order(), "l1 waits for t1, itself held back")
	host.Complete(nil)
	eventually(t, func() bool { return len(d.order()) == 4 }, "l1 follows t1 onto the queue")
	require.Equal(t, []string{"l0", "t0", "t1", "l1"}, d.order())
	select {
	case <-l1.ev.Done():
		require.Fail(t, "the queue ended work it had admitted: that is the device's")
	default:
	}
}

// A failed event fails the work as its dependent: at once in Submit, or
// when it fails while the work is held back; the work's hold is given
// back once, it never reaches the device, and the launch after it does.
func TestFailedDependencies(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	d := newDevice()

	failed := core.NewHostEvent()
	failed.Complete(boom)
	j := d.submit(t, ctx, gpuqueue.Launches, "now", nil, failed)
	err := ended(t, j)
	require.ErrorIs(t, err, driver.ErrDependency)
	require.ErrorIs(t, err, boom)
	require.Contains(t, err.Error(), "event 1")
	require.EqualValues(t, 1, j.releases.Load())

	host := core.NewHostEvent()
	late := d.submit(t, ctx, gpuqueue.Launches, "late", host)
	next := d.submit(t, ctx, gpuqueue.Launches, "next")
	host.Complete(boom)
	err = ended(t, late)
	require.ErrorIs(t, err, driver.ErrDependency)
	require.ErrorIs(t, err, boom)
	require.EqualValues(t, 1, late.releases.Load())
	eventually(t, func() bool { return len(d.order()) == 1 }, "the launch after the failed one is admitted")
	require.Equal(t, []string{"next"}, d.order())
	require.Zero(t, next.releases.Load())
}

// Held-back work whose ctx ends fails with the ctx's error.
func TestDeferredWorkFailsWithItsContext(t *testing.T) {
	d := newDevice()
	ctx, cancel := context.WithCancel(context.Background())
	j := d.submit(t, ctx, gpuqueue.Transfers, "t", core.NewHostEvent())
	cancel()
	require.ErrorIs(t, ended(t, j), context.Canceled)
	require.EqualValues(t, 1, j.releases.Load())
	require.Empty(t, d.order())
}

// Held-back work that waits for an own event not yet queued fails with
// the ctx's error when the ctx ends first.
func TestWaitForOwnEventEndsWithContext(t *testing.T) {
	d := newDevice()
	held := d.submit(t, context.Background(), gpuqueue.Transfers, "held", core.NewHostEvent())
	ctx, cancel := context.WithCancel(context.Background())
	j := d.submit(t, ctx, gpuqueue.Launches, "l", held.ev)
	time.Sleep(10 * time.Millisecond)
	cancel()
	require.ErrorIs(t, ended(t, j), context.Canceled)
	require.Empty(t, d.order())
}

// An Admit error fails held-back work with it.
func TestAdmitErrorFailsDeferredWork(t *testing.T) {
	d := newDevice()
	refused := errors.New("refused")
	host := core.NewHostEvent()
	j := d.submit(t, context.Background(), gpuqueue.Launches, "l", host)
	d.q.Mu.Lock()
	d.admitErr = refused
	d.q.Mu.Unlock()
	host.Complete(nil)
	require.ErrorIs(t, ended(t, j), refused)
	require.EqualValues(t, 1, j.releases.Load())

	j2 := &job{name: "now", ctx: context.Background(), ev: &fakeEvent{HostEvent: core.NewHostEvent(), dev: d}}
	require.ErrorIs(t, d.q.Submit(j2, gpuqueue.Launches, "op"), refused, "Submit returns Admit's error")
}

// A lost device fails its held-back work and refuses more with the first
// cause's error.
func TestLostDevice(t *testing.T) {
	d := newDevice()
	require.NoError(t, d.q.LostErr())
	j := d.submit(t, context.Background(), gpuqueue.Launches, "l", core.NewHostEvent())
	first := errors.New("first")
	err := d.q.MarkLost(first)
	require.ErrorIs(t, err, driver.ErrDeviceLost)
	require.ErrorIs(t, err, first)
	require.Contains(t, err.Error(), "fake:0")
	require.ErrorIs(t, d.q.MarkLost(errors.New("second")), first, "the first cause is kept")

	got := ended(t, j)
	require.ErrorIs(t, got, driver.ErrDeviceLost)
	require.EqualValues(t, 1, j.releases.Load())

	j2 := &job{name: "after", ctx: context.Background(), ev: &fakeEvent{HostEvent: core.NewHostEvent(), dev: d}}
	require.ErrorIs(t, d.q.Submit(j2, gpuqueue.Launches, "op"), driver.ErrDeviceLost)
	require.EqualValues(t, 1, j2.releases.Load())
	require.Empty(t, d.order())
}

// Shut hands back the held-back work of every list once, stops the
// drains, and the queue refuses work after it with ErrClosed.
func TestShut(t *testing.T) {
	ctx := context.Background()
	d := newDevice()
	require.NoError(t, d.q.CheckOpen(ctx, "op"))
	l := d.submit(t, ctx, gpuqueue.Launches, "l", core.NewHostEvent())
	tr := d.submit(t, ctx, gpuqueue.Transfers, "t", core.NewHostEvent())

	d.q.Mu.Lock()
	held, ok := d.q.Shut()
	d.q.Mu.Unlock()
	require.True(t, ok)
	require.ElementsMatch(t, []*job{l, tr}, held)
	d.q.Mu.Lock()
	_, again := d.q.Shut()
	d.q.Mu.Unlock()
	require.False(t, again, "a second Shut finds the queue closed")

	require.ErrorIs(t, d.q.CheckOpen(ctx, "op"), driver.ErrClosed)
	j := &job{name: "after", ctx: ctx, ev: &fakeEvent{HostEvent: core.NewHostEvent(), dev: d}}
	require.ErrorIs(t, d.q.Submit(j, gpuqueue.Transfers, "op"), driver.ErrClosed)
	require.EqualValues(t, 1, j.releases.Load())

	time.Sleep(10 * time.Millisecond)
	require.Zero(t, l.releases.Load(), "the drains leave the work Shut took to its caller")
	require.Zero(t, tr.releases.Load())
	require.Empty(t, d.order())
}

// Submissions from many goroutines each end up admitted exactly once.
func TestConcurrentSubmissions(t *testing.T) {
	ctx := context.Background()
	d := newDevice()
	host := core.NewHostEvent()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for k := range 50 {
				var after []driver.Event
				if k%3 == 0 {
					after = []driver.Event{host}
				}
				j := &job{name: "j", ctx: ctx, after: after, ev: &fakeEvent{HostEvent: core.NewHostEvent(), dev: d}}
				if err := d.q.Submit(j, i%2, "op"); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	host.Complete(nil)
	eventually(t, func() bool { return len(d.order()) == 8*50 }, "every submission is admitted once")
}

// An Item gives back its hold once, however often Release is called, and
// hands the queue the ctx and events it was made with.
func TestItem(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ev := core.NewHostEvent()
	gave := 0
	it := &gpuqueue.Item{Ctx: ctx, After: []driver.Event{ev}, Done: func() { gave++ }}
	var w gpuqueue.Work = struct {
		*gpuqueue.Item
		endFunc
	}{it, func(error) {}}
	require.Equal(t, ctx, w.Context())
	require.Equal(t, []driver.Event{ev}, w.Events())
	w.Release()
	w.Release()
	require.Equal(t, 1, gave, "the hold is given back once")

	var empty gpuqueue.Item
	empty.Release() // no hold: nothing to give back
	require.Nil(t, empty.Events())
}

// endFunc is a Work's End.
type endFunc func(error)

func (f endFunc) End(err error) { f(err) }
