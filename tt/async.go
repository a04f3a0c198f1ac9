package tt

// Asynchronous work (docs/api.md, "Events"; docs/tt.md, "Queued work"). A
// device's requests go to its runtime in submission order through the
// submitter: a submission whose events have all succeeded and that has
// nothing queued before it is sent at once, by the caller; otherwise it
// waits in the submitter's queue, whose goroutine (running only while the
// queue holds work) waits on the host for each submission's events and
// sends it in turn. Once sent, a request is in flight on the runtime's
// pipe (ttruntime.Client.Send): the runtime runs requests in order, and
// the reply of each completes its event.

import (
	"context"
	"errors"
	"sync"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// op is one submission.
type op struct {
	ctx   context.Context
	after []driver.Event
	// own marks the events of after that are this device's (their requests
	// are in its pipe, ahead of the op's): they are not waited for on the
	// host but named in the op's requests (`after`), and the runtime skips
	// the op when one of them failed. hostWait makes the op wait for them on
	// the host like the others (its work is not one request that can name
	// them).
	own      []bool
	hostWait bool
	// send sends the op's requests once every other event in after has
	// succeeded, deps being the tickets of the own events still in flight;
	// the op's event completes from their replies.
	send func(deps []*ttruntime.Ticket)
	// cancel is called in send's place when the op will not be sent (an
	// event it waits for failed, its ctx ended, the device closed or was
	// lost): it gives back what the op holds and fails its event with err.
	cancel func(err error)
	ev     *event // nil for cleanups
}

// event is the event of work submitted to a device: a host event that the
// work's replies complete, with the tickets of its requests, recorded as
// they are sent, so that later work on the same device can name them.
type event struct {
	*core.HostEvent
	dev      *Device
	mu       sync.Mutex
	tickets  []*ttruntime.Ticket
	gaveUp   bool          // a synchronous caller stopped waiting (abandon)
	sent     chan struct{} // closed once every request has been sent, or none will be
	sentOnce sync.Once
}

func (d *Device) newEvent() *event {
	return &event{HostEvent: core.NewHostEvent(), dev: d, sent: make(chan struct{})}
}

// record notes a ticket of the event's requests.
func (e *event) record(t *ttruntime.Ticket) {
	e.mu.Lock()
	e.tickets = append(e.tickets, t)
	if e.gaveUp {
		t.Abandon()
	}
	e.mu.Unlock()
}

// markSent records that no more requests will be sent for the event.
func (e *event) markSent() { e.sentOnce.Do(func() { close(e.sent) }) }

func (e *event) inFlight() []*ttruntime.Ticket {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*ttruntime.Ticket(nil), e.tickets...)
}

// newOp is a submission of this device's work with ctx after events.
func (d *Device) newOp(ctx context.Context, after []driver.Event, ev *event) *op {
	o := &op{ctx: ctx, after: after, ev: ev, own: make([]bool, len(after))}
	for i, a := range after {
		if e, ok := a.(*event); ok && e.dev == d {
			o.own[i] = true
		}
	}
	return o
}

// ownDeps are the tickets of o's own events still in flight, or the
// dependency error of an own event that has failed. The caller has seen
// every own event sent.
func (o *op) ownDeps() ([]*ttruntime.Ticket, error) {
	var deps []*ttruntime.Ticket
	for i, a := range o.after {
		if a == nil || !o.own[i] {
			continue
		}
		e := a.(*event)
		ended, err := core.Ended(e)
		if err != nil {
			return nil, core.DependencyFailed(i, err)
		}
		if !ended {
			deps = append(deps, e.inFlight()...)
		}
	}
	return deps, nil
}

// depErr is the error of the op when err says the runtime skipped it (or
// the client refused to send it) because a request it named failed: the
// dependency error of the first own event that failed.
func (o *op) depErr(err error) error {
	if err == nil || !errors.Is(err, core.ErrDependency) {
		return err
	}
	for i, a := range o.after {
		if a == nil || !o.own[i] {
			continue
		}
		if derr := a.Err(); derr != nil {
			return core.DependencyFailed(i, derr)
		}
	}
	return err
}

// ready reports, without waiting, whether o can be decided now: every
// other event done and every own one sent (or done); err is the first
// failure among those done.
func (o *op) ready() (bool, error) {
	done := true
	for i, a := range o.after {
		if a == nil {
			continue
		}
		ended, err := core.Ended(a)
		if err != nil {
			return true, core.DependencyFailed(i, err)
		}
		if ended {
			continue
		}
		if o.own[i] && !o.hostWait {
			select {
			case <-a.(*event).sent:
				continue
			default:
			}
		}
		done = false
	}
	return done, nil
}

// dispatch sends o now: its own events' tickets are its deps.
func (o *op) dispatch() {
	deps, err := o.ownDeps()
	if err != nil {
		cancelOp(o, err)
		return
	}
	if o.hostWait {
		deps = nil // waited for: all succeeded
	}
	o.send(deps)
	if o.ev != nil {
		o.ev.markSent()
	}
}

// submitter sends one device's requests in submission order.
type submitter struct {
	name string
	rt   *ttruntime.Client

	mu      sync.Mutex
	ops     []*op // waiting; ops[0] is the one the worker handles
	running bool  // the worker goroutine runs
	closed  bool
	stop    chan struct{} // closed by close: the worker stops waiting
	wg      sync.WaitGroup
}

func newSubmitter(name string, rt *ttruntime.Client) *submitter {
	return &submitter{name: name, rt: rt, stop: make(chan struct{})}
}

// submit queues o behind what was submitted before it, or sends it at once
// when nothing is queued and nothing is left to wait for.
func (s *submitter) submit(o *op) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancelOp(o, s.closedErr())
		return
	}
	if len(s.ops) == 0 {
		if done, err := o.ready(); done {
			s.mu.Unlock()
			if err != nil {
				cancelOp(o, err)
				return
			}
			if err := o.ctx.Err(); err != nil {
				cancelOp(o, err)
				return
			}
			o.dispatch()
			return
		}
	}
	s.ops = append(s.ops, o)
	if !s.running {
		s.running = true
		s.wg.Add(1)
		go s.work()
	}
	s.mu.Unlock()
}

// idle reports whether nothing waits in the queue: a synchronous call may
// then go straight to the runtime and still be in submission order.
func (s *submitter) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.ops) == 0
}

// inOrder is the cleanup (free, release) of something that queued work
// may still use: with nothing queued, now is its turn, and now runs in the
// caller (its error returned: the runtime answers it after what is in
// flight); otherwise later is queued behind the work and nil returned.
func (s *submitter) inOrder(now func() error, later func()) error {
	s.mu.Lock()
	if len(s.ops) == 0 || s.closed {
		s.mu.Unlock()
		return now()
	}
	s.ops = append(s.ops, &op{ctx: context.Background(), send: func([]*ttruntime.Ticket) { later() }, cancel: func(error) {}})
	s.mu.Unlock()
	return nil
}

func (s *submitter) work() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if len(s.ops) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		o := s.ops[0]
		s.mu.Unlock()
		if err := s.wait(o); err != nil {
			cancelOp(o, err)
		} else {
			o.dispatch()
		}
		s.mu.Lock()
		s.ops[0] = nil
		s.ops = s.ops[1:]
		s.mu.Unlock()
	}
}

// wait waits for o's events (own ones only until they are sent), its ctx,
// the device's close or its loss.
func (s *submitter) wait(o *op) error {
	for i, e := range o.after {
		if e == nil {
			continue
		}
		var sent <-chan struct{}
		if o.own[i] && !o.hostWait {
			sent = e.(*event).sent
		}
		select {
		case <-e.Done():
		case <-sent:
			continue
		case <-o.ctx.Done():
			return o.ctx.Err()
		case <-s.stop:
			return s.closedErr()
		case <-s.rt.Lost():
			return s.lostErr()
		}
		if err := e.Err(); err != nil {
			return core.DependencyFailed(i, err)
		}
	}
	return o.ctx.Err()
}

// lostErr is the error of work that waited when the runtime was lost.
func (s *submitter) lostErr() error {
	if err := s.rt.LostErr("submit"); err != nil {
		return err
	}
	return driver.Errorf(ttruntime.Backend, "submit", driver.ErrDeviceLost, "device %s: the runtime is gone", s.name)
}

func (s *submitter) closedErr() error {
	return driver.Errorf(ttruntime.Backend, "submit", driver.ErrClosed, "device %s was closed before the work was sent", s.name)
}

// close refuses new work, fails what waits in the queue with ErrClosed and
// waits for the worker (a send it has begun ends first). What was sent is
// left to the runtime, whose exit drains it.
// cancelOp is cancel for ops whose event others may wait to see sent.
func cancelOp(o *op, err error) {
	o.cancel(err)
	if o.ev != nil {
		o.ev.markSent()
	}
}

func (s *submitter) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return
	}
	s.closed = true
	var dropped []*op
	if len(s.ops) > 1 {
		dropped = append(dropped, s.ops[1:]...)
		s.ops = s.ops[:1]
	}
	close(s.stop)
	s.mu.Unlock()
	err := s.closedErr()
	for _, o := range dropped {
		cancelOp(o, err)
	}
	s.wg.Wait()
}

// replies collects the outcome of an op's requests: the op ends once every
// request sent has been answered and no more will be sent (seal), with the
// first error (a dependency the runtime reported named as o's); end then
// runs (its copy-out and cleanup) and completes the event.
type replies struct {
	mu      sync.Mutex
	pending int
	sealed  bool
	err     error
	o       *op
	end     func(err error) error // may be nil
}

func newReplies(o *op, end func(error) error) *replies { return &replies{o: o, end: end} }

// sent records a request's ticket, sent with r.done as its callback.
func (r *replies) sent(t *ttruntime.Ticket) { r.o.ev.record(t) }

func (r *replies) add() {
	r.mu.Lock()
	r.pending++
	r.mu.Unlock()
}

// done is a request's outcome (a ticket's onReply).
func (r *replies) done(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.pending--
	last := r.sealed && r.pending == 0
	r.mu.Unlock()
	if last {
		r.finish()
	}
}

// seal records that no more requests will be added (err: why sending
// stopped early, or nil).
func (r *replies) seal(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.sealed = true
	last := r.pending == 0
	r.mu.Unlock()
	if last {
		r.finish()
	}
}

func (r *replies) finish() {
	err := r.o.depErr(r.err)
	if r.end != nil {
		err = r.end(err)
	}
	r.o.ev.Complete(err)
}

// Submit runs the program after the events in after and returns the run's
// event. The runtime program for this launch's grid is built now if it is
// new (an error queues nothing); the
// run request goes to the runtime in submission order and its reply, the
// run's completion, ends the event. Events of this device are not waited
// for: the run request names their requests, and the runtime does not run
// it when one of them failed.
func (x *Executable) Submit(ctx context.Context, l *driver.Launch, after ...driver.Event) (driver.Event, error) {
	req, err := x.prepare(ctx, l, false)
	if err != nil {
		return nil, err
	}
	d := x.dev
	ev := d.newEvent()
	o := d.newOp(ctx, after, ev)
	o.send = func(deps []*ttruntime.Ticket) { d.sendRun(ctx, o, req, nil, deps) }
	o.cancel = func(err error) { ev.Complete(err) }
	d.sub.submit(o)
	return ev, nil
}

// sendRun sends o's run, whose reply (decoded into out, when not nil)
// ends its event.
func (d *Device) sendRun(ctx context.Context, o *op, req ttruntime.RunRequest, out *ttruntime.RunReply, deps []*ttruntime.Ticket) {
	r := newReplies(o, nil)
	r.add()
	t, err := d.rt.SendRun(ctx, req, out, deps, r.done)
	if err != nil {
		r.done(nil)
		r.seal(err) // not sent: ctx ended first
		return
	}
	r.sent(t)
	r.seal(nil)
}

// queuedRun is a synchronous launch behind queued work: submitted, then
// waited for; a wait that ctx ends marks the run abandoned (see
// ttruntime.Ticket.Abandon) and returns ctx's error.
func (x *Executable) queuedRun(ctx context.Context, req ttruntime.RunRequest) (uint64, error) {
	var out ttruntime.RunReply
	d := x.dev
	ev := d.newEvent()
	o := d.newOp(ctx, nil, ev)
	o.send = func(deps []*ttruntime.Ticket) { d.sendRun(ctx, o, req, &out, deps) }
	o.cancel = func(err error) { ev.Complete(err) }
	d.sub.submit(o)
	if err := ev.Wait(ctx); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			ev.abandon()
			return 0, &driver.Error{Backend: ttruntime.Backend, Op: ttruntime.CmdRun, Err: err}
		}
		return 0, err
	}
	x.noteWarnings(out.Warnings)
	return out.ElapsedNS, nil
}

// abandon marks the event's requests abandoned (a synchronous caller gave
// up waiting), now and as they are sent.
func (e *event) abandon() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gaveUp = true
	for _, t := range e.tickets {
		t.Abandon()
	}
}

// transfer is one request of an asynchronous write or read.
type transfer struct {
	rid    uint64
	off    int64 // in the device buffer
	seg    string
	segOff int64
	n      int
}

// WriteAsync copies src into the buffer at off after the events in after.
// The range is checked now. src is staged now, into a shm region of the
// host pool's arena (tilized and packed for a tile-layout buffer), unless
// it lies in host-pool memory, which the runtime reads in place when the
// write runs (it must not change until the event has ended). When the
// arena cannot give a region, the write goes through the pool's staging
// region at its turn instead (waiting on the host for this device's
// events too). Events of this device are named in the request, as Submit's.
func (p *Pool) WriteAsync(ctx context.Context, dst driver.BufferID, off int64, src []byte, after ...driver.Event) (driver.Event, error) {
	return p.transferAsync(ctx, ttruntime.CmdWrite, dst, off, src, after, p.write)
}

// transferAsync is the course of WriteAsync (cmd write) and ReadAsync (cmd
// read) of data at off in buffer id: the range is checked and the op made
// now; an empty transfer ends at its turn; otherwise stage makes the
// request and its region, and when the arena cannot give one, direct does
// the transfer through the pool's staging region at its turn. The region
// is freed when the reply comes (after its copy into data, for a read) or
// when the op is cancelled.
func (p *Pool) transferAsync(ctx context.Context, cmd string, id driver.BufferID, off int64, data []byte, after []driver.Event,
	direct func(context.Context, *devBuf, int64, []byte) error) (driver.Event, error) {
	b, ev, o, err := p.transferOp(ctx, cmd, id, off, len(data), after)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return p.onHost(o, ev, func() error { return nil }), nil
	}
	x, region, copyOut, err := p.stage(b, off, data, cmd == ttruntime.CmdWrite)
	if err != nil { // no shm to stage into now: copy at the transfer's turn
		return p.onHost(o, ev, func() error { return direct(ctx, b, off, data) }), nil
	}
	freeRegion := func() { _ = p.host.Arena().Free(region) }
	o.send = func(deps []*ttruntime.Ticket) {
		p.sendTransfer(ctx, cmd, x, deps, newReplies(o, func(err error) error {
			if err == nil && copyOut != nil {
				copyOut()
			}
			freeRegion()
			return err
		}))
	}
	o.cancel = func(err error) { freeRegion(); ev.Complete(err) }
	p.dev.sub.submit(o)
	return ev, nil
}

// transferOp checks an asynchronous transfer's range and makes its event
// and its op, which a cancel before it is sent completes with the error.
func (p *Pool) transferOp(ctx context.Context, name string, id driver.BufferID, off int64, n int, after []driver.Event) (*devBuf, *event, *op, error) {
	b, err := p.span(name, id, off, n)
	if err != nil {
		return nil, nil, nil, err
	}
	ev := p.dev.newEvent()
	o := p.dev.newOp(ctx, after, ev)
	o.cancel = func(err error) { ev.Complete(err) }
	return b, ev, o, nil
}

// onHost submits o as work done on the host at its turn, once every event
// it waits for has ended (this device's too): run runs then and ends ev.
func (p *Pool) onHost(o *op, ev *event, run func() error) driver.Event {
	o.hostWait = true
	o.send = func([]*ttruntime.Ticket) { ev.Complete(run()) }
	p.dev.sub.submit(o)
	return ev
}

// ReadAsync copies the buffer's bytes at off into dst after the events in
// after. The range is checked now. The runtime reads into dst in place
// when it is host-pool memory; otherwise into a shm region of the arena,
// from which the bytes are copied (untilized and unpacked for a
// tile-layout buffer) into dst when the reply comes, before the event
// ends. When the arena cannot give a region, the read goes through the
// pool's staging region at its turn instead. Events of this device are
// named in the request, as Submit's.
func (p *Pool) ReadAsync(ctx context.Context, src driver.BufferID, off int64, dst []byte, after ...driver.Event) (driver.Event, error) {
	return p.transferAsync(ctx, ttruntime.CmdRead, src, off, dst, after, p.read)
}

// stage is the request of an asynchronous transfer of data at off (a
// write when write is set, else a read), the region it stages data in or
// reads into (zero when data is host-pool memory, which the runtime uses in
// place), and the copy from the region into data that a read makes when
// its reply comes (nil when there is none). A tile-layout buffer's data is
// tilized and packed into the region for a write, and untilized and
// unpacked from it for a read.
func (p *Pool) stage(b *devBuf, off int64, data []byte, write bool) (transfer, shm.Region, func(), error) {
	n, devOff := int64(len(data)), off
	if b.host.converts() {
		hr, dr := b.host.hostRowBytes(), b.host.devRowBytes()
		n, devOff = int64(len(data))/hr*dr, off/hr*dr
	} else if seg, soff, ok := p.host.Arena().Locate(data); ok {
		return transfer{rid: b.rid, off: off, seg: seg, segOff: soff, n: len(data)}, shm.Region{}, nil, nil
	}
	region, err := p.host.Arena().Alloc(n)
	if err != nil {
		return transfer{}, shm.Region{}, nil, err
	}
	mem := region.Bytes()[:n]
	var copyOut func()
	switch {
	case write && b.host.converts():
		b.host.toDevice(mem, data)
	case write:
		copy(mem, data)
	case b.host.converts():
		copyOut = func() { b.host.toHost(data, mem) }
	default:
		copyOut = func() { copy(data, mem) }
	}
	return transfer{rid: b.rid, off: devOff, seg: region.Segment(), segOff: region.Offset(), n: int(n)}, region, copyOut, nil
}

// sendTransfer sends an asynchronous write or read named after deps,
// after unmaps of the segments the arena has dropped since the last
// transfer; r collects the replies.
func (p *Pool) sendTransfer(ctx context.Context, cmd string, x transfer, deps []*ttruntime.Ticket, r *replies) {
	for _, s := range p.droppedSegments() {
		r.add()
		t, err := p.rt.SendUnmap(ctx, ttruntime.SegmentRequest{Segment: s}, r.done)
		if err != nil {
			r.done(nil)
			r.seal(err)
			return
		}
		r.sent(t)
	}
	p.markMapped(x.seg)
	req := ttruntime.TransferRequest{Buffer: x.rid, Offset: uint64(x.off), Segment: x.seg, SegmentOffset: uint64(x.segOff), Length: uint64(x.n)}
	send := p.rt.SendRead
	if cmd == ttruntime.CmdWrite {
		send = p.rt.SendWrite
	}
	r.add()
	t, err := send(ctx, req, deps, r.done)
	if err != nil {
		r.done(nil)
		r.seal(err)
		return
	}
	r.sent(t)
	r.seal(nil)
}
