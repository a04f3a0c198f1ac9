package cuda

import (
	"runtime"
	"time"
)

// Queued launches are issued aside. A kernel launch that nobody waits for
// yet, with nothing on another stream to wait for, is not put on the
// compute stream by its submitter: Submit does the bookkeeping (its place
// on the stream, its buffers' hazards, the FIFO) and appends the launch to
// the device's issue ring; the issuer, a goroutine on its own locked
// thread, makes the driver calls (cuLaunchKernel, and cuEventRecord every
// recordEvery launches) in submission order. A submitter queueing back to
// back then pays for its Go work alone and the driver's launch cost runs
// beside it, on another core, instead of after it: on the H200 the Go
// work and the driver's launch on one thread cost about a microsecond more
// than the bare launch (docs/cuda.md), while each alone is cheaper.
//
// Order is kept by one rule: whoever puts anything else on a stream, or
// records or waits for an event on one, first flushes the ring under the
// submission lock (flushLocked), issuing what is left itself. tailSeq of
// the compute stream is the newest launch the driver has been given, so a
// waiter that finds its event still in the ring flushes it (recordFor) and
// a stream that a query finds idle has ended everything through tailSeq.

// issueAside says queued launches go through the issue ring. A variable so
// that a benchmark can compare both paths.
var issueAside = true

// issuerLinger is how long an idle issuer waits for more launches before
// its goroutine exits.
const issuerLinger = 5 * time.Millisecond

// asideLaunch is a launch in the issue ring: what issue needs, copied from
// the event's op, which the issuer must not read (a lost device's work is
// retired, and its op reused, while the ring may still hold it).
type asideLaunch struct {
	e      *event
	k      *kernelExec
	grid   [3]uint32
	n      int
	inline [6]uint64
	more   []uint64 // the values when there are more than inline holds
	// record, when set, is the work since the stream's last CUDA event,
	// this launch last: one is recorded after it and given to them.
	record []*event
}

func (a *asideLaunch) vals() []uint64 {
	if a.more != nil {
		return a.more
	}
	return a.inline[:a.n]
}

// asideEligible says e, a submission that the gate lets through, can be
// issued aside: a plain kernel launch that nobody waits for yet and that
// needs no wait on the GPU for work on another stream. The submission lock
// is held.
func (d *Device) asideEligible(e *event) bool {
	o := e.op
	if !issueAside || o.waited || o.kernel.k == nil || o.kernel.timed || o.issue != nil {
		return false
	}
	for _, dep := range o.after {
		if needsWait(d.own(dep), e.stream) {
			return false
		}
	}
	waits := false
	_ = hazards(o.acc, e.stream, func(*event) error { waits = true; return nil })
	return !waits
}

// issueAsideLocked is enqueueLocked for a launch issued aside: the
// bookkeeping now, the driver calls on the issuer. The submission lock is
// held.
func (d *Device) issueAsideLocked(e *event) {
	s := e.stream
	a := asideLaunch{e: e, k: e.op.kernel.k, grid: e.op.kernel.grid, n: len(e.op.vals)}
	if a.n <= len(a.inline) {
		copy(a.inline[:], e.op.vals)
	} else {
		a.more = append([]uint64(nil), e.op.vals...)
	}
	d.placeLocked(e, false)
	if u := d.unrecorded[s]; len(u) >= recordEvery {
		// The issuer records the event after this launch, for them all.
		a.record = u
		d.unrecorded[s] = make([]*event, 0, recordEvery)
	}

	d.asidePending.Add(1)
	d.ringMu.Lock()
	if d.ringKick == nil {
		d.ringKick = make(chan struct{}, 1)
	}
	d.ring = append(d.ring, a)
	start, wake := !d.issuing, d.issuerIdle
	d.issuing = true
	d.issuerIdle = false
	d.ringMu.Unlock()
	switch {
	case start:
		d.workers.Add(1)
		go d.issuer()
	case wake:
		select {
		case d.ringKick <- struct{}{}:
		default:
		}
	}
}

// flushLocked issues what the ring holds, on this thread, after what the
// issuer is issuing now: from then on, work put on the compute stream
// follows every launch submitted before it. The submission lock is held,
// the thread locked and the context current. Nothing to do costs one
// atomic load.
func (d *Device) flushLocked() {
	if d.asidePending.Load() == 0 {
		return
	}
	d.issueMu.Lock()
	d.issueRing()
	d.issueMu.Unlock()
}

// issuer issues the ring's launches until it has been empty for
// issuerLinger.
func (d *Device) issuer() {
	defer d.workers.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	linger := time.NewTimer(issuerLinger)
	defer linger.Stop()
	for {
		d.issueMu.Lock()
		d.drv.cuCtxSetCurrent(d.ctx)
		issued := d.issueRing()
		d.issueMu.Unlock()
		if issued {
			continue
		}
		d.ringMu.Lock()
		if len(d.ring) > 0 {
			d.ringMu.Unlock()
			continue
		}
		if d.closed.Load() {
			d.issuing = false
			d.ringMu.Unlock()
			return
		}
		d.issuerIdle = true
		d.ringMu.Unlock()
		linger.Reset(issuerLinger)
		select {
		case <-d.ringKick:
			continue
		case <-linger.C:
		}
		d.ringMu.Lock()
		if len(d.ring) == 0 {
			d.issuing, d.issuerIdle = false, false
			d.ringMu.Unlock()
			return
		}
		d.ringMu.Unlock()
	}
}

// issueRing takes the ring's launches and issues them in order; it reports
// whether there were any. issueMu is held, the thread locked and the
// context current.
func (d *Device) issueRing() bool {
	d.ringMu.Lock()
	batch := d.ring
	d.ring, d.ringSpare = d.ringSpare[:0], nil
	d.ringMu.Unlock()
	if len(batch) == 0 {
		d.ringMu.Lock()
		d.ringSpare = batch
		d.ringMu.Unlock()
		return false
	}
	s := d.streams[streamCompute]
	for i := range batch {
		d.issueOne(s, &batch[i], i%tailEvery == tailEvery-1 || i == len(batch)-1)
	}
	// Once per batch: the count shares its cache line with what the
	// submitter writes on every push.
	d.asidePending.Add(-int32(len(batch)))
	clear(batch)
	d.ringMu.Lock()
	if d.ringSpare == nil {
		d.ringSpare = batch[:0]
	}
	d.ringMu.Unlock()
	return true
}

// tailEvery is how often the issuer advances the stream's tailSeq within a
// batch (and at its end): a waiter that finds its launch past tailSeq
// issues the ring itself, which is correct but waits for the batch.
const tailEvery = 16

// issueOne puts a on stream s, then records the CUDA event it carries;
// tail says it advances the stream's tailSeq to a (a waiter reads it). A
// launch the driver refuses fails its event (a refusal that loses the
// context loses the device, and the reaper fails the rest); on a lost
// device nothing is issued.
func (d *Device) issueOne(s uintptr, a *asideLaunch, tail bool) {
	e := a.e
	if d.lost.Load() != nil {
		return // the reaper fails it
	}
	if err := a.k.launch(s, a.vals(), a.grid); err != nil {
		e.finishWith(e.failure(err))
	}
	if tail || a.record != nil {
		d.tailSeq[e.stream].Store(e.seq)
	}
	if a.record != nil {
		d.recordAside(e.stream, a.record)
	}
}

// recordAside records a CUDA event after batch (recordAfter), unless the
// device is lost: the reaper then fails its work. issueMu is held.
func (d *Device) recordAside(stream int, batch []*event) {
	if d.lost.Load() == nil {
		_ = d.recordAfter(stream, batch)
	}
}
