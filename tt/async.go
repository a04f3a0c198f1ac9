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
	"sync/atomic"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/shm"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// op is one submission.
type op struct {
	ctx   context.Context
	after []backends.Event
	// send sends the op's requests, once every event in after has
	// succeeded; the op's event completes from their replies.
	send func()
	// cancel is called in send's place when the op will not be sent (an
	// event it waits for failed, its ctx ended, the device closed or was
	// lost): it gives back what the op holds and fails its event with err.
	cancel func(err error)
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
		o.cancel(s.closedErr())
		return
	}
	if len(s.ops) == 0 {
		if done, err := core.Ready(o.after); done {
			s.mu.Unlock()
			if err != nil {
				o.cancel(err)
				return
			}
			if err := o.ctx.Err(); err != nil {
				o.cancel(err)
				return
			}
			o.send()
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
	s.ops = append(s.ops, &op{ctx: context.Background(), send: later, cancel: func(error) {}})
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
			o.cancel(err)
		} else {
			o.send()
		}
		s.mu.Lock()
		s.ops[0] = nil
		s.ops = s.ops[1:]
		s.mu.Unlock()
	}
}

// wait waits for o's events, its ctx, the device's close or its loss.
func (s *submitter) wait(o *op) error {
	for i, e := range o.after {
		if e == nil {
			continue
		}
		select {
		case <-e.Done():
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
	return backends.Errorf(ttruntime.Backend, "submit", backends.ErrDeviceLost, "device %s: the runtime is gone", s.name)
}

func (s *submitter) closedErr() error {
	return backends.Errorf(ttruntime.Backend, "submit", backends.ErrClosed, "device %s was closed before the work was sent", s.name)
}

// close refuses new work, fails what waits in the queue with ErrClosed and
// waits for the worker (a send it has begun ends first). What was sent is
// left to the runtime, whose exit drains it.
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
		o.cancel(err)
	}
	s.wg.Wait()
}

// replies collects the outcome of an op's requests: the op ends once every
// request sent has been answered and no more will be sent (seal), with the
// first error; end then runs (its copy-out and cleanup) and completes ev.
type replies struct {
	mu      sync.Mutex
	pending int
	sealed  bool
	err     error
	end     func(err error) error // may be nil
	ev      *core.HostEvent
}

func newReplies(ev *core.HostEvent, end func(error) error) *replies {
	return &replies{ev: ev, end: end}
}

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
	err := r.err
	if r.end != nil {
		err = r.end(err)
	}
	r.ev.Complete(err)
}

// Submit runs the program after the events in after and returns the run's
// event. The arguments are checked now (an error queues nothing), and the
// runtime program for this launch's grid is built now if it is new; the
// run request goes to the runtime in submission order and its reply, the
// run's completion, ends the event.
func (x *Executable) Submit(ctx context.Context, args []backends.LaunchArg, after ...backends.Event) (backends.Event, error) {
	req, err := x.prepare(ctx, args, false)
	if err != nil {
		return nil, err
	}
	ev := core.NewHostEvent()
	x.dev.sub.submit(&op{ctx: ctx, after: after,
		send:   func() { x.dev.sendRun(ctx, req, nil, ev, nil) },
		cancel: func(err error) { ev.Complete(err) },
	})
	return ev, nil
}

// sendRun sends a run whose reply (decoded into out, when not nil) ends
// ev; sent, when not nil, is told the ticket.
func (d *Device) sendRun(ctx context.Context, req ttruntime.RunRequest, out *ttruntime.RunReply, ev *core.HostEvent, sent func(*ttruntime.Ticket)) {
	t, err := d.rt.SendRun(ctx, req, out, func(err error) { ev.Complete(err) })
	if err != nil {
		ev.Complete(err) // not sent: ctx ended first
		return
	}
	if sent != nil {
		sent(t)
	}
}

// queuedRun is a synchronous launch behind queued work: submitted, then
// waited for; a wait that ctx ends marks the run abandoned (see
// ttruntime.Ticket.Abandon) and returns ctx's error.
func (x *Executable) queuedRun(ctx context.Context, req ttruntime.RunRequest) (uint64, error) {
	var out ttruntime.RunReply
	ev := core.NewHostEvent()
	var ticket atomic.Pointer[ttruntime.Ticket]
	var gaveUp atomic.Bool
	x.dev.sub.submit(&op{ctx: ctx,
		send: func() {
			x.dev.sendRun(ctx, req, &out, ev, func(t *ttruntime.Ticket) {
				ticket.Store(t)
				if gaveUp.Load() {
					t.Abandon()
				}
			})
		},
		cancel: func(err error) { ev.Complete(err) },
	})
	if err := ev.Wait(ctx); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			gaveUp.Store(true)
			if t := ticket.Load(); t != nil {
				t.Abandon()
			}
			return 0, &backends.Error{Backend: ttruntime.Backend, Op: ttruntime.CmdRun, Err: err}
		}
		return 0, err
	}
	return out.ElapsedNS, nil
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
// region at its turn instead.
func (p *Pool) WriteAsync(ctx context.Context, dst backends.BufferID, off int64, src []byte, after ...backends.Event) (backends.Event, error) {
	b, err := p.span("write", dst, off, len(src))
	if err != nil {
		return nil, err
	}
	ev := core.NewHostEvent()
	if len(src) == 0 {
		p.sub.submit(&op{ctx: ctx, after: after, send: func() { ev.Complete(nil) }, cancel: func(err error) { ev.Complete(err) }})
		return ev, nil
	}
	x, region, err := p.stageWrite(b, off, src)
	if err != nil { // no shm to stage into now: copy at the write's turn
		p.sub.submit(&op{ctx: ctx, after: after,
			send:   func() { ev.Complete(p.write(ctx, b, off, src)) },
			cancel: func(err error) { ev.Complete(err) },
		})
		return ev, nil
	}
	freeRegion := func() { _ = p.host.Arena().Free(region) }
	p.sub.submit(&op{ctx: ctx, after: after,
		send: func() {
			p.sendTransfer(ctx, ttruntime.CmdWrite, x, newReplies(ev, func(err error) error { freeRegion(); return err }))
		},
		cancel: func(err error) { freeRegion(); ev.Complete(err) },
	})
	return ev, nil
}

// stageWrite is the request of an asynchronous write of src at off, and
// the region (zero when none) it was staged into.
func (p *Pool) stageWrite(b *devBuf, off int64, src []byte) (transfer, shm.Region, error) {
	if b.host.converts() {
		hr, dr := b.host.hostRowBytes(), b.host.devRowBytes()
		rows := int64(len(src)) / hr
		region, err := p.host.Arena().Alloc(rows * dr)
		if err != nil {
			return transfer{}, shm.Region{}, err
		}
		b.host.toDevice(region.Bytes()[:rows*dr], src)
		return transfer{rid: b.rid, off: off / hr * dr, seg: region.Segment(), segOff: region.Offset(), n: int(rows * dr)}, region, nil
	}
	if seg, soff, ok := p.host.Arena().Locate(src); ok {
		return transfer{rid: b.rid, off: off, seg: seg, segOff: soff, n: len(src)}, shm.Region{}, nil
	}
	region, err := p.host.Arena().Alloc(int64(len(src)))
	if err != nil {
		return transfer{}, shm.Region{}, err
	}
	copy(region.Bytes(), src)
	return transfer{rid: b.rid, off: off, seg: region.Segment(), segOff: region.Offset(), n: len(src)}, region, nil
}

// ReadAsync copies the buffer's bytes at off into dst after the events in
// after. The range is checked now. The runtime reads into dst in place
// when it is host-pool memory; otherwise into a shm region of the arena,
// from which the bytes are copied (untilized and unpacked for a
// tile-layout buffer) into dst when the reply comes, before the event
// ends. When the arena cannot give a region, the read goes through the
// pool's staging region at its turn instead.
func (p *Pool) ReadAsync(ctx context.Context, src backends.BufferID, off int64, dst []byte, after ...backends.Event) (backends.Event, error) {
	b, err := p.span("read", src, off, len(dst))
	if err != nil {
		return nil, err
	}
	ev := core.NewHostEvent()
	if len(dst) == 0 {
		p.sub.submit(&op{ctx: ctx, after: after, send: func() { ev.Complete(nil) }, cancel: func(err error) { ev.Complete(err) }})
		return ev, nil
	}
	x, region, copyOut, err := p.stageRead(b, off, dst)
	if err != nil {
		p.sub.submit(&op{ctx: ctx, after: after,
			send:   func() { ev.Complete(p.read(ctx, b, off, dst)) },
			cancel: func(err error) { ev.Complete(err) },
		})
		return ev, nil
	}
	freeRegion := func() { _ = p.host.Arena().Free(region) }
	p.sub.submit(&op{ctx: ctx, after: after,
		send: func() {
			p.sendTransfer(ctx, ttruntime.CmdRead, x, newReplies(ev, func(err error) error {
				if err == nil && copyOut != nil {
					copyOut()
				}
				freeRegion()
				return err
			}))
		},
		cancel: func(err error) { freeRegion(); ev.Complete(err) },
	})
	return ev, nil
}

// stageRead is the request of an asynchronous read into dst, the region it
// reads into (zero: dst itself) and the copy from there into dst.
func (p *Pool) stageRead(b *devBuf, off int64, dst []byte) (transfer, shm.Region, func(), error) {
	if b.host.converts() {
		hr, dr := b.host.hostRowBytes(), b.host.devRowBytes()
		rows := int64(len(dst)) / hr
		region, err := p.host.Arena().Alloc(rows * dr)
		if err != nil {
			return transfer{}, shm.Region{}, nil, err
		}
		copyOut := func() { b.host.toHost(dst, region.Bytes()[:rows*dr]) }
		return transfer{rid: b.rid, off: off / hr * dr, seg: region.Segment(), segOff: region.Offset(), n: int(rows * dr)}, region, copyOut, nil
	}
	if seg, soff, ok := p.host.Arena().Locate(dst); ok {
		return transfer{rid: b.rid, off: off, seg: seg, segOff: soff, n: len(dst)}, shm.Region{}, nil, nil
	}
	region, err := p.host.Arena().Alloc(int64(len(dst)))
	if err != nil {
		return transfer{}, shm.Region{}, nil, err
	}
	copyOut := func() { copy(dst, region.Bytes()) }
	return transfer{rid: b.rid, off: off, seg: region.Segment(), segOff: region.Offset(), n: len(dst)}, region, copyOut, nil
}

// sendTransfer sends an asynchronous write or read, after unmaps of the
// segments the arena has dropped since the last transfer; r collects the
// replies.
func (p *Pool) sendTransfer(ctx context.Context, cmd string, x transfer, r *replies) {
	for _, s := range p.droppedSegments() {
		r.add()
		if _, err := p.rt.SendUnmap(ctx, ttruntime.SegmentRequest{Segment: s}, r.done); err != nil {
			r.done(nil)
			r.seal(err)
			return
		}
	}
	p.markMapped(x.seg)
	req := ttruntime.TransferRequest{Buffer: x.rid, Offset: uint64(x.off), Segment: x.seg, SegmentOffset: uint64(x.segOff), Length: uint64(x.n)}
	send := p.rt.SendRead
	if cmd == ttruntime.CmdWrite {
		send = p.rt.SendWrite
	}
	r.add()
	if _, err := send(ctx, req, r.done); err != nil {
		r.done(nil)
		r.seal(err)
		return
	}
	r.seal(nil)
}
