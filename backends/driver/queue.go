package driver

import (
	"context"
	"sync"

	"github.com/zyxtt/zyxtt/internal/core"
)

// QueueDepth is how many jobs a Queue holds before Submit waits for room:
// enough to keep a device busy, few enough that a runaway producer is held
// back rather than growing memory.
const QueueDepth = 1024

// Queue runs a device's work in submission order on one goroutine of its
// own. It is the hardware queue of a backend whose native calls block (C,
// CBLAS): Submit returns at once with the job's event, and a job starts
// once every earlier job has ended and every event it was submitted after
// has succeeded.
type Queue struct {
	jobs chan *job
	done chan struct{} // closed when the worker has returned

	mu      sync.Mutex
	closed  bool
	stop    sync.Once      // closes jobs
	failed  error          // set by Fail: every job not yet started ends with it
	sending sync.WaitGroup // Submits between their check of closed and their send
}

type job struct {
	ctx   context.Context
	after []Event
	run   func() error
	drop  func()
	ev    *core.HostEvent
}

// NewQueue starts a queue's worker. Close stops it.
func NewQueue() *Queue {
	q := &Queue{jobs: make(chan *job, QueueDepth), done: make(chan struct{})}
	go q.work()
	return q
}

func (q *Queue) work() {
	defer close(q.done)
	for j := range q.jobs {
		j.ev.Complete(q.runJob(j))
	}
}

func (q *Queue) runJob(j *job) error {
	q.mu.Lock()
	err := q.failed
	q.mu.Unlock()
	if err == nil {
		err = j.ctx.Err()
	}
	if err == nil {
		err = core.WaitAll(j.ctx, j.after...)
	}
	if err != nil {
		if j.drop != nil {
			j.drop()
		}
		return err
	}
	return j.run()
}

// Submit queues run after every job submitted before it and after every
// event in after, and returns its event. The event fails without run
// running when an event in after fails (wrapping ErrDependency and its
// error), when ctx ends before the job starts, or when the queue has
// failed; drop (when not nil) is then called in run's place, to give back
// what the job holds. Submit waits for room while the queue is full; it
// fails with ErrClosed once Close or Abandon has been called, and then
// neither run nor drop is called.
func (q *Queue) Submit(ctx context.Context, after []Event, run func() error, drop func()) (Event, error) {
	j := &job{ctx: ctx, after: after, run: run, drop: drop, ev: core.NewHostEvent()}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, ErrClosed
	}
	q.sending.Add(1)
	q.mu.Unlock()
	defer q.sending.Done()
	select {
	case q.jobs <- j:
		return j.ev, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Fail ends every job that has not started, and every later one, with err
// (ErrDeviceLost when the device is gone). The running job, if any, runs
// to its end.
func (q *Queue) Fail(err error) {
	q.mu.Lock()
	if q.failed == nil {
		q.failed = err
	}
	q.mu.Unlock()
}

// Close refuses new jobs, waits for every submitted job to end and stops
// the worker. Calling it again does nothing more.
func (q *Queue) Close() {
	q.shut()
	<-q.done
}

// Abandon ends every job that has not started with err, refuses new jobs
// and returns without waiting for the running job: the worker stops once
// that job returns. It is Close for a device whose running work cannot be
// stopped (a native call that may never return).
func (q *Queue) Abandon(err error) {
	q.Fail(err)
	q.shut()
}

func (q *Queue) shut() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.stop.Do(func() {
		q.sending.Wait()
		close(q.jobs)
	})
}
