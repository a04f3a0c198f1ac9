package cuda

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// These tests of the event machinery need no GPU: they drive the states
// that the driver calls would set.

// fakeDevice is a device with no driver: closed, so that a buffer freed by
// its pool does not reach the driver (a closed device's memory is gone).
func fakeDevice() *Device {
	d := &Device{name: "cuda:test"}
	d.closed.Store(true)
	d.pool = newPool(d)
	return d
}

// enqueued is an event of d on stream, as enqueueLocked leaves it.
func enqueued(d *Device, stream int) *event {
	e := d.newEvent(stream, context.Background(), "launch", "test")
	e.cu.Store(1)
	e.markEnqueued()
	return e
}

func TestEventFIFO(t *testing.T) {
	var q eventFIFO
	require.Nil(t, q.front())
	require.Zero(t, q.len())
	evs := make([]*event, 3000)
	for i := range evs {
		evs[i] = &event{stream: i}
		q.push(evs[i])
	}
	for i := range 2500 {
		require.Same(t, evs[i], q.front())
		q.pop()
		require.Equal(t, len(evs)-i-1, q.len())
	}
	require.Equal(t, evs[2500:], q.all(), "what is left, oldest first, after compaction")
	for range 500 {
		q.pop()
	}
	require.Nil(t, q.front())
	require.Zero(t, q.head, "an emptied queue starts over")
}

func TestVarBitsMatchConstantBytes(t *testing.T) {
	for _, c := range []driver.Constant{
		driver.UintConst(driver.U32, 77),
		driver.IntConst(driver.I8, -2),
		driver.IntConst(driver.I16, -300),
		driver.IntConst(driver.I32, -1),
		driver.IntConst(driver.I64, -5),
		driver.UintConst(driver.U64, math.MaxUint64),
		driver.FloatConst(driver.F32, 1.5),
		driver.FloatConst(driver.F64, -2.25),
		driver.FloatConst(driver.F16, 3),
		driver.FloatConst(driver.BF16, -7),
		driver.UintConst(driver.Bool, 1),
	} {
		want := make([]byte, 8)
		copy(want, c.Bytes())
		var got [8]byte
		v := varBits(c)
		for i := range got {
			got[i] = byte(v >> (8 * i))
		}
		require.Equal(t, want, got[:], "%s", c)
	}
}

// packSlots lays out the same parameter array as packParams.
func TestPackSlotsMatchesPackParams(t *testing.T) {
	vals := []driver.Constant{driver.UintConst(driver.U32, 9), driver.FloatConst(driver.F32, -0.5), driver.IntConst(driver.I8, -1)}
	bytes := [][]byte{{1, 2, 3, 4, 5, 6, 7, 8}}
	slots := []uint64{0x0807060504030201}
	for _, c := range vals {
		bytes = append(bytes, c.Bytes())
		slots = append(slots, varBits(c))
	}
	a := make([]byte, paramBlockSize(len(slots)))
	b := make([]byte, len(a))
	for i := range b {
		b[i] = 0xee // stale bytes from an earlier launch
	}
	base := uintptr(0x10000)
	require.NoError(t, packParams(a, base, bytes))
	require.NoError(t, packSlots(b, base, slots))
	require.Equal(t, a, b)
	require.ErrorContains(t, packSlots(b[:10], base, slots), "too small")
}

func TestSortDeps(t *testing.T) {
	d, other := fakeDevice(), fakeDevice()
	boom := errors.New("boom")
	gated := d.newEvent(streamCompute, context.Background(), "launch", "")
	failed := d.newEvent(streamCompute, context.Background(), "launch", "")
	failed.complete(boom)
	ok := d.newEvent(streamH2D, context.Background(), "write", "")
	ok.complete(nil)
	onStream := enqueued(d, streamH2D)
	foreign := enqueued(other, streamCompute) // another device's: waited for on the host

	for _, tc := range []struct {
		name   string
		after  []driver.Event
		gate   bool
		failed bool
	}{
		{"none", nil, false, false},
		{"nil entries", []driver.Event{nil, (*event)(nil)}, false, false},
		{"done", []driver.Event{ok, driver.Completed(nil)}, false, false},
		{"own on a stream: a GPU wait", []driver.Event{onStream}, false, false},
		{"own still gated", []driver.Event{ok, gated}, true, false},
		{"pending host event", []driver.Event{driver.NewHostEvent()}, true, false},
		{"another device's", []driver.Event{foreign}, true, false},
		{"own failed", []driver.Event{onStream, failed}, false, true},
		{"host failed, pending first", []driver.Event{driver.NewHostEvent(), driver.Completed(boom)}, false, true},
	} {
		gate, err := d.sortDeps(tc.after)
		require.Equal(t, tc.gate, gate, tc.name)
		if tc.failed {
			require.ErrorIs(t, err, driver.ErrDependency, tc.name)
			require.ErrorIs(t, err, boom, tc.name)
			require.ErrorContains(t, err, "event 1", tc.name)
		} else {
			require.NoError(t, err, tc.name)
		}
	}
}

func TestDecided(t *testing.T) {
	d := fakeDevice()
	ok := d.newEvent(streamH2D, context.Background(), "write", "")
	ok.complete(nil)
	require.True(t, d.decided(nil))
	require.True(t, d.decided([]driver.Event{nil, (*event)(nil), ok, driver.Completed(errors.New("x"))}))
	require.False(t, d.decided([]driver.Event{ok, enqueued(d, streamD2H)}), "own work on a stream")
	require.False(t, d.decided([]driver.Event{driver.NewHostEvent()}))
}

func TestHazards(t *testing.T) {
	d := fakeDevice()
	b := &devBuf{}
	waits := func(acc []access, stream int) []*event {
		var out []*event
		require.NoError(t, hazards(acc, stream, func(e *event) error { out = append(out, e); return nil }))
		return out
	}
	read, write := []access{{buf: b}}, []access{{buf: b, write: true}}
	require.Empty(t, waits(write, streamH2D), "a fresh buffer")

	w := enqueued(d, streamH2D)
	w.op.acc = write
	recordAccess(w)
	require.Same(t, w, b.lastWrite)
	require.Empty(t, waits(read, streamH2D), "the same stream keeps the order")
	require.Equal(t, []*event{w}, waits(read, streamD2H), "a read on another stream waits for the write")
	require.Equal(t, []*event{w}, waits(write, streamCompute), "so does a write")

	r := enqueued(d, streamD2H)
	r.op.acc = read
	recordAccess(r)
	require.Same(t, r, b.reads[streamD2H])
	require.Equal(t, []*event{w}, waits(read, streamCompute), "readers do not wait for readers")
	require.Equal(t, []*event{w, r}, waits(write, streamCompute), "a write waits for the reads since the last write")
	require.Equal(t, []*event{r}, waits(write, streamH2D), "but not for what is on its own stream")

	r.complete(nil)
	require.Equal(t, []*event{w}, waits(write, streamCompute), "nor for what has ended")
	w2 := enqueued(d, streamCompute)
	w2.op.acc = write
	recordAccess(w2)
	require.Same(t, w2, b.lastWrite)
	require.Equal(t, [numStreams]*event{}, b.reads, "a write starts a new round of reads")
	require.Equal(t, []*event{w2}, waits(read, streamD2H))

	stop := errors.New("stop")
	require.ErrorIs(t, hazards(read, streamD2H, func(*event) error { return stop }), stop)
}

func TestGatedEventStates(t *testing.T) {
	d := fakeDevice()
	ctx := context.Background()
	e := d.newEvent(streamCompute, ctx, "launch", "vadd")
	e.enq = make(chan struct{})
	require.NoError(t, e.Err(), "pending")
	select {
	case <-e.Done():
		t.Fatal("a pending event is done")
	default:
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	start := time.Now()
	require.ErrorIs(t, e.Wait(wctx), context.DeadlineExceeded)
	require.Less(t, time.Since(start), time.Second, "a Wait whose ctx ends returns promptly")

	boom := errors.New("boom")
	done := make(chan error)
	go func() { done <- e.Wait(ctx) }()
	time.Sleep(5 * time.Millisecond)
	e.cancel(boom)
	require.ErrorIs(t, <-done, boom)
	require.ErrorIs(t, e.Err(), boom)
	<-e.Done()
	e.cancel(errors.New("later"))
	e.complete(nil)
	require.ErrorIs(t, e.Err(), boom, "only the first end counts")

	// Once the worker has taken an event, a cancellation does nothing.
	taken := d.newEvent(streamCompute, ctx, "launch", "vadd")
	taken.enq = make(chan struct{})
	require.True(t, taken.claim.CompareAndSwap(claimFree, claimTaken))
	taken.cancel(boom)
	require.NoError(t, taken.Err())
	taken.markEnqueued()
	select {
	case <-taken.enq:
	default:
		t.Fatal("enq stays open after the event left the gate")
	}
}

// The host step of an enqueued event runs once, by the caller that claims
// it; the event completes after it.
func TestFinishRunsOnce(t *testing.T) {
	d := fakeDevice()
	e := enqueued(d, streamD2H)
	var runs atomic.Int32
	var sawDone atomic.Bool
	e.op.finish = func() {
		runs.Add(1)
		time.Sleep(time.Millisecond)
		sawDone.Store(e.Err() != nil || e.state.Load() == evDone)
	}
	var wg sync.WaitGroup
	won := make([]bool, 8)
	for i := range won {
		wg.Go(func() {
			won[i] = e.finishWith(nil)
			if !won[i] {
				<-e.Done()
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, 1, runs.Load())
	require.False(t, sawDone.Load(), "the event completes after its host step")
	n := 0
	for _, w := range won {
		if w {
			n++
		}
	}
	require.Equal(t, 1, n)
	require.NoError(t, e.Err())

	// A failed event skips the host step.
	f := enqueued(d, streamD2H)
	f.op.finish = func() { t.Error("the host step ran for failed work") }
	boom := errors.New("boom")
	require.True(t, f.finishWith(boom))
	require.ErrorIs(t, f.Err(), boom)
}

func TestHoldsGiveBack(t *testing.T) {
	d := fakeDevice()
	p := d.pool
	id := p.bufs.Insert(&devBuf{size: 64}, 64)
	b, err := p.retain("launch", id)
	require.NoError(t, err)
	require.EqualValues(t, 64, b.size)
	_, err = p.retain("launch", id+12345)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer)
	require.ErrorContains(t, err, "launch")

	var h holds
	h.add(p, id)
	var ended atomic.Int32
	h.run = endFunc(func() { ended.Add(1) })
	require.NoError(t, p.Release(id), "the caller's reference")
	_, err = p.Size(id)
	require.NoError(t, err, "the pending work's reference keeps the buffer")
	h.drop()
	h.drop()
	_, err = p.Size(id)
	require.ErrorIs(t, err, driver.ErrUnknownBuffer, "freed with the work's reference")
	require.EqualValues(t, 1, ended.Load(), "the executable's run ends once")
}

type endFunc func()

func (f endFunc) endRun() { f() }

func TestRunsUnloadAfterTheLastRun(t *testing.T) {
	var r runs
	unloads := 0
	unload := func() error { unloads++; return nil }
	require.True(t, r.begin(unload))
	require.True(t, r.begin(unload))
	require.NoError(t, r.release(unload))
	require.Zero(t, unloads, "runs are pending")
	require.False(t, r.begin(unload), "no run after Release")
	require.Zero(t, unloads, "a refused run does not unload while others are pending")
	require.NoError(t, r.release(unload), "a second Release")
	require.False(t, r.end())
	require.True(t, r.end(), "the last run of a released executable")
	r.unload(unload)
	r.unload(unload)
	require.Equal(t, 1, unloads, "unloaded once")

	var idle runs
	boom := errors.New("unload failed")
	require.ErrorIs(t, idle.release(func() error { return boom }), boom, "nothing pending: Release unloads and reports")
}

// TestRunsBeginRacesRelease: runs that begin while Release happens either
// start before the unload or are refused; the executable is unloaded once,
// after the last run that started has ended.
func TestRunsBeginRacesRelease(t *testing.T) {
	for range 200 {
		var r runs
		var unloaded, running atomic.Int32
		unload := func() error {
			assert.Zero(t, running.Load(), "unloaded under a run")
			unloaded.Add(1)
			return nil
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 50 {
					if !r.begin(unload) {
						assert.True(t, r.gone.Load(), "refused before Release")
						continue
					}
					running.Add(1)
					assert.Zero(t, unloaded.Load(), "a run started after the unload")
					running.Add(-1)
					if r.end() {
						r.unload(unload)
					}
				}
			}()
		}
		require.NoError(t, r.release(unload))
		wg.Wait()
		require.EqualValues(t, 1, unloaded.Load(), "unloaded once")
	}
}

func TestWaitTransferWaitsForTheCopy(t *testing.T) {
	ev := driver.NewHostEvent()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	go func() {
		time.Sleep(20 * time.Millisecond)
		ev.Complete(nil)
	}()
	start := time.Now()
	err := waitTransfer(ctx, ev, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.GreaterOrEqual(t, time.Since(start), 15*time.Millisecond, "it returned while the copy could still touch the caller's memory")
	select {
	case <-ev.Done():
	default:
		t.Fatal("returned before the copy ended")
	}
	boom := errors.New("boom")
	require.ErrorIs(t, waitTransfer(context.Background(), driver.Completed(boom), nil), boom)
	require.ErrorIs(t, waitTransfer(context.Background(), nil, boom), boom)
}

func TestPollBackoff(t *testing.T) {
	start := time.Now()
	for polls := 1; polls <= 2*yieldEvery; polls++ {
		pause(time.Microsecond, polls, waitMaxSleep) // spins: returns at once
	}
	require.Less(t, time.Since(start), spinFor, "the spin phase does not sleep")
	require.Equal(t, minSleep, sleepFor(20*time.Microsecond, reaperMaxSleep), "at least minSleep")
	require.Equal(t, 250*time.Microsecond, sleepFor(4*time.Millisecond, time.Millisecond), "a sixteenth of the wait so far")
	require.Equal(t, reaperMaxSleep, sleepFor(time.Second, reaperMaxSleep))
}

func TestBounceBudget(t *testing.T) {
	d := fakeDevice()
	d.cfg.StagingChunk = 16 << 20
	require.EqualValues(t, 64<<20, d.bounceBudget())
	d.bounceBytes.Store(d.bounceBudget() - 10)
	require.Nil(t, d.bounce(11), "over the budget: staged instead")
	require.Equal(t, d.bounceBudget()-10, d.bounceBytes.Load(), "a refused bounce takes nothing")
	d.bounceBytes.Store(0)
	bb := d.bounce(4096)
	require.NotNil(t, bb)
	require.Len(t, bb.mem, 4096)
	require.True(t, d.inHostPool(bb.mem), "a bounce buffer lies in the host pool")
	require.EqualValues(t, 4096, d.bounceBytes.Load())
	bb.release()
	require.Zero(t, d.bounceBytes.Load())
	require.False(t, d.inHostPool(make([]byte, 16)), "Go memory is not host-pool memory")
}

// onStream puts n events of d on stream as enqueueLocked does (numbered,
// in the FIFO, none recorded) and returns them.
func onStream(d *Device, stream, n int) []*event {
	evs := make([]*event, n)
	for i := range evs {
		e := d.newEvent(stream, context.Background(), "launch", "test")
		d.seqs[stream]++
		e.seq = d.seqs[stream]
		e.markEnqueued()
		d.unrecorded[stream] = append(d.unrecorded[stream], e)
		d.fifo[stream].push(e)
		d.tailSeq[stream].Store(e.seq)
		d.inflight.Add(1)
		evs[i] = e
	}
	return evs
}

func TestCompleteThroughRetiresInOrder(t *testing.T) {
	d := fakeDevice()
	evs := onStream(d, streamH2D, 3)
	other := onStream(d, streamD2H, 1)
	var finished []int
	for i, e := range evs {
		e.op.finish = func() { finished = append(finished, i) }
	}
	d.completeThrough(streamH2D, evs[1].seq)
	require.Equal(t, []int{0, 1}, finished, "oldest first, up to the one seen ended")
	for _, e := range evs[:2] {
		require.NoError(t, e.Wait(context.Background()), "ended: Wait needs no driver")
		require.Nil(t, e.op, "retired: its op is back in the pool")
	}
	require.Equal(t, evEnqueued, evs[2].state.Load())
	require.Same(t, evs[2], d.fifo[streamH2D].front())
	require.Equal(t, int32(2), d.inflight.Load(), "the other stream's work and the third are pending")
	require.Equal(t, evEnqueued, other[0].state.Load())

	// A waiter that completed an event and has yet to retire it: the next
	// retirement takes it without completing it again.
	require.True(t, evs[2].finishWith(nil))
	d.completeThrough(streamH2D, evs[2].seq)
	require.Nil(t, d.fifo[streamH2D].front())
	require.Equal(t, []int{0, 1, 2}, finished)
}

func TestEndedBatchNeedsNoEvent(t *testing.T) {
	d := fakeDevice() // no driver: recording an event would crash
	evs := onStream(d, streamCompute, 2)
	d.completeThrough(streamCompute, evs[1].seq)
	require.NoError(t, d.recordTailLocked(streamCompute), "the batch has ended: nothing to record")
	require.Empty(t, d.unrecorded[streamCompute])
	require.Zero(t, evs[1].cu.Load())
}
