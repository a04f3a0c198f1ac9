package cuda

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// queryScript scripts the fake cuEventQuery: it answers not ready busy
// times (each taking pause), then result.
type queryScript struct {
	mu     sync.Mutex
	busy   int
	pause  time.Duration
	result cuResult
	calls  int
}

var testQueries queryScript

var fakeEventQuery = purego.NewCallback(func(cu uintptr) uintptr {
	testQueries.mu.Lock()
	defer testQueries.mu.Unlock()
	testQueries.calls++
	if testQueries.busy > 0 {
		testQueries.busy--
		time.Sleep(testQueries.pause)
		return uintptr(cudaErrorNotReady)
	}
	return uintptr(testQueries.result)
})

// aloneDevice is fakeLaunchDevice with the scripted cuEventQuery.
func aloneDevice(t *testing.T, busy int, pause time.Duration, result cuResult) (*Device, *kernelExec) {
	d, k := fakeLaunchDevice(t)
	d.drv.eventQuery = fakeEventQuery
	testLaunches = launchLog{}
	testQueries = queryScript{busy: busy, pause: pause, result: result}
	return d, k
}

// placed is how much work has taken a place on the compute stream, and
// what is still in flight.
func placed(d *Device) (seq uint64, inflight int32, fifo int) {
	d.subMu.Lock()
	defer d.subMu.Unlock()
	d.fifoMu.Lock()
	defer d.fifoMu.Unlock()
	return d.seqs[streamCompute], d.inflight.Load(), d.fifo[streamCompute].len()
}

// TestLaunchAlone: a synchronous launch on an idle device runs alone: it
// takes no place on the stream, and every launch is waited for before
// Launch returns; one whose work outlasts aloneSpin takes its place and is
// waited for as any submission.
func TestLaunchAlone(t *testing.T) {
	ctx := context.Background()
	t.Run("ends within the spin", func(t *testing.T) {
		defer func(s time.Duration) { aloneSpin = s }(aloneSpin)
		aloneSpin = time.Minute // the fake driver's calls are slow under -race
		d, k := aloneDevice(t, 1000, 0, cudaSuccess)
		for i := range uint64(3) {
			require.NoError(t, k.Launch(ctx, scalarLaunch(i)))
		}
		seq, inflight, fifo := placed(d)
		require.Zero(t, seq, "no launch took a place on the stream")
		require.Zero(t, inflight)
		require.Zero(t, fifo)
		require.Equal(t, []uint64{0, 1, 2}, testLaunches.seen)
		require.Equal(t, 1003, testQueries.calls, "polled until the scripted end")
	})
	t.Run("polling the stream", func(t *testing.T) {
		defer func(s time.Duration, w aloneWaitMode) { aloneSpin, aloneWait = s, w }(aloneSpin, aloneWait)
		aloneSpin, aloneWait = time.Minute, aloneWaitStream
		d, k := aloneDevice(t, 50, 0, cudaSuccess)
		d.drv.eventQuery, d.drv.streamQuery = d.drv.streamQuery, fakeEventQuery
		require.NoError(t, k.Launch(ctx, scalarLaunch(5)))
		seq, _, _ := placed(d)
		require.Zero(t, seq)
		require.Equal(t, 51, testQueries.calls, "the stream polled until the scripted end")
	})
	t.Run("outlasts the spin", func(t *testing.T) {
		defer func(s time.Duration) { aloneSpin = s }(aloneSpin)
		aloneSpin = time.Microsecond
		d, k := aloneDevice(t, 400, 5*time.Microsecond, cudaSuccess)
		// (waitStream then polls for syncSpin and blocks in
		// cuEventSynchronize, which the fake driver ends at once.)
		require.NoError(t, k.Launch(ctx, scalarLaunch(7)))
		seq, inflight, fifo := placed(d)
		require.Equal(t, uint64(1), seq, "the launch took its place on the stream")
		require.Zero(t, inflight, "and was retired by its wait")
		require.Zero(t, fifo)
		require.Greater(t, testQueries.calls, 128, "polled alone, then as any wait")
	})
}

// wordScript scripts the fake stream memory operations: the fake
// cuStreamWriteValue32 stores each value it is given in the word (the
// device address is the host address here) unless lost, from the
// (lostFrom)th write on (0: none lost).
type wordScript struct {
	mu       sync.Mutex
	writes   int
	lostFrom int
}

var testWords wordScript

var (
	fakeSuccess = purego.NewCallback(func(uintptr) uintptr { return 0 })
	// fakeDevicePointer is cuMemHostGetDevicePointer: the device address
	// is the host one.
	fakeDevicePointer = purego.NewCallback(func(out *uint64, host, flags uintptr) uintptr {
		*out = uint64(host)
		return 0
	})
	fakeWriteValue = purego.NewCallback(func(stream uintptr, addr *uint32, v, flags uintptr) uintptr {
		testWords.mu.Lock()
		defer testWords.mu.Unlock()
		testWords.writes++
		if testWords.lostFrom == 0 || testWords.writes < testWords.lostFrom {
			atomic.StoreUint32(addr, uint32(v))
		}
		return 0
	})
)

// wordDevice is aloneDevice with stream memory operations, the fake
// cuStreamWriteValue32 scripted by lostFrom.
func wordDevice(t *testing.T, lostFrom int) (*Device, *kernelExec) {
	d, k := aloneDevice(t, 0, 0, cudaSuccess)
	d.drv.memHostRegister, d.drv.memHostUnregister = fakeSuccess, fakeSuccess
	d.drv.memHostGetDevicePointer, d.drv.streamWriteValue32 = fakeDevicePointer, fakeWriteValue
	testWords = wordScript{lostFrom: lostFrom}
	t.Cleanup(func() { d.done.close(d, true) })
	return d, k
}

// TestLaunchAloneWord: where the driver has stream memory operations, a
// launch that runs alone waits for the completion word the GPU writes
// after its work, with no driver call while it waits; a word that does
// not arrive within the spin (work still running, or failed) leaves the
// launch to take its place and be waited for as any submission.
func TestLaunchAloneWord(t *testing.T) {
	ctx := context.Background()
	t.Run("the word arrives", func(t *testing.T) {
		defer func(s time.Duration) { aloneSpin = s }(aloneSpin)
		aloneSpin = time.Minute
		d, k := wordDevice(t, 0)
		for i := range uint64(3) {
			require.NoError(t, k.Launch(ctx, scalarLaunch(i)))
		}
		seq, inflight, fifo := placed(d)
		require.Zero(t, seq, "no launch took a place on the stream")
		require.Zero(t, inflight)
		require.Zero(t, fifo)
		require.Equal(t, []uint64{0, 1, 2}, testLaunches.seen)
		require.Zero(t, testQueries.calls, "no event was polled")
		require.Equal(t, 4, testWords.writes, "the probe's write and one per launch")
		require.Equal(t, uint32(4), atomic.LoadUint32(d.done.word))
	})
	t.Run("the word does not arrive", func(t *testing.T) {
		defer func(s time.Duration) { aloneSpin = s }(aloneSpin)
		aloneSpin = time.Microsecond
		d, k := wordDevice(t, 3) // the probe's and the first launch's arrive
		require.NoError(t, k.Launch(ctx, scalarLaunch(1)))
		require.NoError(t, k.Launch(ctx, scalarLaunch(2)))
		seq, inflight, fifo := placed(d)
		require.Equal(t, uint64(1), seq, "the second launch took its place on the stream")
		require.Zero(t, inflight, "and was retired by its wait")
		require.Zero(t, fifo)
		require.Positive(t, testQueries.calls, "its wait polled an event")
		require.Equal(t, []uint64{1, 2}, testLaunches.seen)
	})
	t.Run("the probe's write does not arrive", func(t *testing.T) {
		d, k := wordDevice(t, 1)
		require.NoError(t, k.Launch(ctx, scalarLaunch(1)))
		require.Nil(t, d.done.word, "no word: the driver's writes do not arrive")
		require.Positive(t, testQueries.calls, "the launch polled an event")
		require.Equal(t, 1, testWords.writes, "the probe's alone")
	})
}

// TestLaunchAloneFailure: a launch whose work fails while it runs alone
// fails with the device's and the program's names; a sticky error loses
// the device, another leaves it usable.
func TestLaunchAloneFailure(t *testing.T) {
	ctx := context.Background()
	d, k := aloneDevice(t, 3, 0, cudaErrorInvalidValue)
	err := k.Launch(ctx, scalarLaunch(1))
	require.Error(t, err)
	require.Contains(t, err.Error(), `cuda:abs: launch "empty"`)
	require.NoError(t, d.usable("launch"), "a failure that is not sticky leaves the device usable")
	testQueries = queryScript{result: cudaSuccess}
	require.NoError(t, k.Launch(ctx, scalarLaunch(2)))

	d, k = aloneDevice(t, 3, 0, cudaErrorLaunchFailed)
	err = k.Launch(ctx, scalarLaunch(3))
	require.Error(t, err)
	require.Contains(t, err.Error(), `cuda:abs: launch "empty"`)
	require.ErrorIs(t, d.usable("launch"), driver.ErrDeviceLost)
	require.ErrorIs(t, k.Launch(ctx, scalarLaunch(4)), driver.ErrDeviceLost)
}

// TestLaunchAloneOrdersConcurrentSubmits: work submitted while a launch
// runs alone goes on the stream after it (the submitter waits for the
// submission lock), whether the alone launch ends within its spin or
// takes its place.
func TestLaunchAloneOrdersConcurrentSubmits(t *testing.T) {
	ctx := context.Background()
	for _, pause := range []time.Duration{0, 20 * time.Microsecond} {
		_, k := aloneDevice(t, 2000, pause, cudaSuccess)
		started := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-started
			time.Sleep(time.Millisecond)
			ev, err := k.Submit(ctx, scalarLaunch(2))
			require.NoError(t, err)
			require.NoError(t, ev.Wait(ctx))
		}()
		close(started)
		require.NoError(t, k.Launch(ctx, scalarLaunch(1)))
		wg.Wait()
		require.Equal(t, []uint64{1, 2}, testLaunches.seen, "pause %v", pause)
	}
}
