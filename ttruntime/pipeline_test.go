package ttruntime_test

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/internal/rtbin"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// waitIdle waits until the client has nothing in flight and its reader
// goroutine has ended.
func waitIdle(t *testing.T, c *ttruntime.Client) {
	t.Helper()
	require.Eventually(t, func() bool { return c.InFlight() == 0 && !c.Reading() }, patience(t), time.Millisecond,
		"the reader ends once nothing is in flight")
}

// Pipelined writes and reads of one buffer run in the order they were
// sent: every read sees the write just before it, and the replies are
// handed to their tickets in order. The runtime holds the first write
// (request 3: init 1, alloc 2) until all are sent.
func TestPipelinedRequestsRunInOrder(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=3"))
	ctx := context.Background()
	a, err := c.Alloc(ctx, ttruntime.AllocRequest{Size: 8})
	require.NoError(t, err)
	const k = ttruntime.MaxInFlight / 2 // all in flight at once
	seg := newSegment(t, 16*k)
	mem := seg.Bytes()
	var mu sync.Mutex
	var order []int
	peak := 0
	tickets := make([]*ttruntime.Ticket, 0, 2*k)
	for i := range k {
		src, dst := uint64(16*i), uint64(16*i+8)
		binary.LittleEndian.PutUint64(mem[src:], uint64(1000+i))
		w, err := c.SendWrite(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), SegmentOffset: src, Length: 8}, nil,
			func(err error) { mu.Lock(); order = append(order, 2*i); mu.Unlock() })
		require.NoError(t, err)
		r, err := c.SendRead(ctx, ttruntime.TransferRequest{Buffer: a.Buffer, Segment: seg.Name(), SegmentOffset: dst, Length: 8}, nil,
			func(err error) { mu.Lock(); order = append(order, 2*i+1); mu.Unlock() })
		require.NoError(t, err)
		tickets = append(tickets, w, r)
		peak = max(peak, c.InFlight())
	}
	require.Equal(t, 2*k, peak, "every request was in flight at once")
	release(t, c)
	for _, tk := range tickets {
		require.NoError(t, tk.Wait(ctx))
	}
	for i := range k {
		require.Equal(t, uint64(1000+i), binary.LittleEndian.Uint64(mem[16*i+8:]), "read %d sees the write before it", i)
	}
	for i, v := range order {
		require.Equal(t, i, v, "replies are handled in request order")
	}
	waitIdle(t, c)
	// Back on the fast path: a ping allocates nothing again.
	require.NoError(t, c.Ping(ctx))
	require.Zero(t, testing.AllocsPerRun(50, func() {
		if err := c.Ping(ctx); err != nil {
			t.Fatal(err)
		}
	}))
	require.NoError(t, c.Close())
}

// A sender waits for room beyond MaxInFlight; everything sent is answered.
// The runtime holds the first ping (request 2) until MaxInFlight are in
// flight.
func TestPipelineBoundsWhatIsInFlight(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=2"))
	ctx := context.Background()
	var peak atomic.Int32
	released := make(chan struct{})
	go func() {
		defer close(released)
		for end := time.Now().Add(patience(t)); c.InFlight() < ttruntime.MaxInFlight && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		_ = rtbin.Release(c.Pid())
	}()
	var last *ttruntime.Ticket
	for range ttruntime.MaxInFlight + 40 {
		tk, err := c.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
		require.NoError(t, err)
		last = tk
		if n := int32(c.InFlight()); n > peak.Load() {
			peak.Store(n)
		}
	}
	require.NoError(t, last.Wait(ctx))
	<-released
	require.EqualValues(t, ttruntime.MaxInFlight, peak.Load(), "the sender filled the queue and went no further")

	// A sender waiting for room still honours its context.
	held := start(t, mockConfig(t, "hold-at=2"))
	for range ttruntime.MaxInFlight {
		_, err := held.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
		require.NoError(t, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err := held.Send(cctx, ttruntime.CmdPing, nil, nil, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	release(t, held)
	require.NoError(t, held.Close(), "Close drains what is in flight")
}

// An error reply in the middle of a pipeline is that request's answer; the
// requests around it succeed and the client lives on.
func TestPipelineErrorInTheMiddle(t *testing.T) {
	c := start(t, mockConfig(t, "error-at=5,error-code=run_error")) // init 1, pings 2-9
	ctx := context.Background()
	rtbin.RequireRunErrorAt(t, ctx, sendPings(t, c, 8, nil), 3)
	require.True(t, c.Alive())
	require.NoError(t, c.Ping(ctx))
}

// The runtime dying with 8 requests in flight fails every one of them with
// ErrDeviceLost and the runtime's stderr; later calls fail at once, and the
// reader goroutine ends (TestMain checks for leaks). The runtime holds the
// first ping (request 2) until all 8 are sent, then crashes on it.
func TestPipelineCrashFailsEveryTicket(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=2,crash-at=2"))
	ctx := context.Background()
	var calls atomic.Int32
	ts := sendPings(t, c, 8, func(error) { calls.Add(1) })
	require.Equal(t, 8, c.InFlight())
	release(t, c)
	for i, tk := range ts {
		err := tk.Wait(ctx)
		require.ErrorIs(t, err, backends.ErrDeviceLost, "ticket %d", i)
		require.ErrorContains(t, err, "crashing on request 2", "the error quotes the runtime's stderr")
	}
	require.EqualValues(t, 8, calls.Load(), "every callback ran")
	waitIdle(t, c)
	tk, err := c.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
	require.NoError(t, err)
	select {
	case <-tk.Done():
	default:
		t.Fatal("a send after the loss must fail at once")
	}
	require.ErrorIs(t, tk.Err(), backends.ErrDeviceLost)
	require.ErrorIs(t, c.Ping(ctx), backends.ErrDeviceLost)
}

// A runtime that hangs with requests in flight is killed once the head's
// reply is overdue, and every ticket fails; one that answers out of order
// breaks the pipe the same way. The fault comes on the first of 8 pings
// (request 2).
func TestPipelineHangAndWrongIDFailEveryTicket(t *testing.T) {
	for _, tc := range []struct {
		spec    string
		timeout time.Duration // for a reply that never comes
		msg     string
	}{
		{"hang-at=2", 300 * time.Millisecond, "no reply to ping within 300ms; the runtime is presumed hung"},
		{"wrong-id-at=2", 0, "reply id 1002 to request 2 (ping)"},
	} {
		t.Run(tc.spec, func(t *testing.T) {
			cfg := mockConfig(t, tc.spec)
			if tc.timeout > 0 {
				cfg.Timeout = tc.timeout
			}
			c := start(t, cfg)
			ctx := context.Background()
			ts := sendPings(t, c, 8, nil)
			for i, tk := range ts {
				err := tk.Wait(ctx)
				require.ErrorIs(t, err, backends.ErrDeviceLost, "ticket %d", i)
				require.ErrorContains(t, err, tc.msg)
			}
			require.False(t, c.Alive())
			waitIdle(t, c)
		})
	}
}

// A send whose context ended before it was written sends nothing; a wait
// given up leaves the request to run, and its reply is still handled.
func TestPipelineCancellation(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=2,error-at=3")) // init 1
	ctx := context.Background()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := c.Send(cctx, ttruntime.CmdPing, nil, nil, nil)
	require.ErrorIs(t, err, context.Canceled)

	tk, err := c.Send(ctx, ttruntime.CmdPing, nil, nil, nil) // request 2: held
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer wcancel()
	require.ErrorIs(t, tk.Wait(wctx), context.DeadlineExceeded)
	release(t, c)
	// Request 3 is the injected error: the cancelled send was not counted.
	err = c.Ping(ctx)
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re, "the ping is request 3: nothing went out for the cancelled send")
	require.NoError(t, tk.Err(), "the given-up wait's request ran and was answered")
	select {
	case <-tk.Done():
	default:
		t.Fatal("the given-up ticket was not handled")
	}
	require.True(t, c.Alive())
}

// Synchronous calls and pipelined sends from many goroutines interleave on
// one client without losing step.
func TestPipelineMixedWithCalls(t *testing.T) {
	c := start(t, mockConfig(t, ""))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if (g+i)%3 == 0 {
					errs <- c.Ping(ctx)
					continue
				}
				tk, err := c.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
				if err != nil {
					errs <- err
					continue
				}
				errs <- tk.Wait(ctx)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	waitIdle(t, c)
	require.NoError(t, c.Close())
}

// Close answers what is in flight before it asks the runtime to exit (every
// reply comes 30 ms late, so Close finds them in flight).
func TestCloseDrainsThePipeline(t *testing.T) {
	c := start(t, mockConfig(t, "slow=30ms"))
	ts := sendPings(t, c, 8, nil)
	require.NoError(t, c.Close())
	rtbin.RequireAnswered(t, ts)
}

// sendPings sends n pings without waiting, each with the callback done, and
// gives their tickets.
func sendPings(t *testing.T, c *ttruntime.Client, n int, done func(error)) []*ttruntime.Ticket {
	t.Helper()
	var ts []*ttruntime.Ticket
	for range n {
		tk, err := c.Send(context.Background(), ttruntime.CmdPing, nil, nil, done)
		require.NoError(t, err)
		ts = append(ts, tk)
	}
	return ts
}

// A ticket named twice in after is named once on the wire (the runtime
// refuses an id given twice); a ticket of another client still in flight
// is refused before anything is sent. The runtimes hold their first ping
// (request 2), so the tickets named are still in flight when the dependent
// request is sent.
func TestSendAfterNamesEachTicketOnce(t *testing.T) {
	c := start(t, mockConfig(t, "hold-at=2"))
	ctx := context.Background()
	first, err := c.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
	require.NoError(t, err)
	dep, err := c.SendAfter(ctx, ttruntime.CmdPing, nil, nil, []*ttruntime.Ticket{first, nil, first}, nil)
	require.NoError(t, err)
	require.Equal(t, 2, c.InFlight(), "the first ping was still in flight when the dependent one was sent")
	release(t, c)
	require.NoError(t, first.Wait(ctx))
	require.NoError(t, dep.Wait(ctx), "the runtime took the dependency named once")

	other := start(t, mockConfig(t, "hold-at=2"))
	foreign, err := other.Send(ctx, ttruntime.CmdPing, nil, nil, nil)
	require.NoError(t, err)
	_, err = c.SendAfter(ctx, ttruntime.CmdPing, nil, nil, []*ttruntime.Ticket{foreign}, nil)
	require.ErrorIs(t, err, backends.ErrInvalidArgument)
	require.ErrorContains(t, err, "after[0] is request 2 (ping) of another runtime process")
	require.Zero(t, c.InFlight(), "nothing was sent")
	release(t, other)
	require.NoError(t, foreign.Wait(ctx))
	// Once it has succeeded it names nothing and is no longer refused.
	later, err := c.SendAfter(ctx, ttruntime.CmdPing, nil, nil, []*ttruntime.Ticket{foreign}, nil)
	require.NoError(t, err)
	require.NoError(t, later.Wait(ctx))
}
