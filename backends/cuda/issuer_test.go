package cuda

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// launchLog records the first parameter of every launch the fake driver
// is given, in the order the driver sees them.
type launchLog struct {
	mu   sync.Mutex
	seen []uint64
	tids []int         // the thread of each launch
	slow time.Duration // each launch's cost, so that the ring fills
	fail uint64        // a launch with this value is refused (non-zero)
}

var testLaunches launchLog

// The fake cuLaunchKernel: a C callback (purego) that logs the value its
// parameter array's first slot points at.
var fakeLaunch = purego.NewCallback(func(fn, gx, gy, gz, bx, by, bz, shmem, stream uintptr, params *unsafe.Pointer, extra uintptr) uintptr {
	v := *(*uint64)(*params)
	testLaunches.mu.Lock()
	testLaunches.seen = append(testLaunches.seen, v)
	testLaunches.tids = append(testLaunches.tids, unix.Gettid())
	slow, fail := testLaunches.slow, testLaunches.fail
	testLaunches.mu.Unlock()
	if slow > 0 {
		time.Sleep(slow)
	}
	if fail != 0 && v == fail {
		return 1 // CUDA_ERROR_INVALID_VALUE: not sticky
	}
	return 0
})

// fakeLaunchDevice is absDevice with the logging cuLaunchKernel and a
// kernel of one scalar parameter.
func fakeLaunchDevice(t *testing.T) (*Device, *kernelExec) {
	d, k := absDevice(t)
	d.drv.launchKernel = fakeLaunch
	k.prog.Params = []driver.Param{{Kind: driver.Variable, DType: driver.U32}}
	var err error
	k.params, err = newCBlock(paramBlockSize(1))
	require.NoError(t, err)
	return d, k
}

// scalarLaunch is a launch of the one-scalar test kernel with value v.
func scalarLaunch(v uint64) *driver.Launch {
	return &driver.Launch{Grid: [3]uint64{1, 1, 1},
		Args: []driver.LaunchArg{driver.VarArg(driver.Constant{DType: driver.U32, Bits: v})}}
}

// TestAsideLaunchesKeepSubmissionOrder: queued launches go through the
// issue ring while synchronous launches, waits for events in the middle
// and waits for the newest go on the stream directly; the driver must see
// every launch once, in submission order.
func TestAsideLaunchesKeepSubmissionOrder(t *testing.T) {
	for _, aside := range []bool{true, false} {
		t.Run(map[bool]string{true: "aside", false: "direct"}[aside], func(t *testing.T) {
			defer func(v bool) { issueAside = v }(issueAside)
			issueAside = aside
			d, k := fakeLaunchDevice(t)
			testLaunches = launchLog{slow: 20 * time.Microsecond}
			ctx := context.Background()
			runtime.LockOSThread() // the submitter's launches come from this thread
			defer runtime.UnlockOSThread()
			self := unix.Gettid()
			// Mixed: queued launches, synchronous ones, waits in the middle.
			const n = 600
			var events []driver.Event
			for i := range uint64(n) {
				switch {
				case i%97 == 50:
					require.NoError(t, k.Launch(ctx, scalarLaunch(i)))
				default:
					ev, err := k.Submit(ctx, scalarLaunch(i))
					require.NoError(t, err)
					events = append(events, ev)
				}
				if i%41 == 40 {
					require.NoError(t, events[len(events)/2].Wait(ctx))
				}
			}
			// Queued only, nobody waiting until the end: the submitter
			// makes no driver call.
			const m = 200
			for i := range uint64(m) {
				ev, err := k.Submit(ctx, scalarLaunch(n+i))
				require.NoError(t, err)
				events = append(events, ev)
			}
			for deadline := time.Now().Add(5 * time.Second); aside && d.asidePending.Load() > 0 && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			require.NoError(t, events[len(events)-1].Wait(ctx))
			for _, ev := range events {
				select {
				case <-ev.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("an event did not end after the newest was waited for")
				}
			}
			testLaunches.mu.Lock()
			seen, tids := testLaunches.seen, testLaunches.tids
			testLaunches.mu.Unlock()
			want := make([]uint64, n+m)
			for i := range want {
				want[i] = uint64(i)
			}
			require.Equal(t, want, seen)
			elsewhere := 0
			for _, tid := range tids[n:] {
				if tid != self {
					elsewhere++
				}
			}
			if aside {
				require.Equal(t, m, elsewhere, "the issuer makes the queued launches")
			} else {
				require.Zero(t, elsewhere, "every launch is the submitter's")
			}
			require.Zero(t, d.asidePending.Load())
			d.closed.Store(true)
			d.drainForClose()
			d.ringMu.Lock()
			require.False(t, d.issuing, "the issuer exits when the device closes")
			d.ringMu.Unlock()
		})
	}
}

// TestAsideLaunchRefusedFailsItsEvent: a queued launch that the driver
// refuses on the issuer fails its own event, names the call, and leaves
// the launches around it and the device working.
func TestAsideLaunchRefusedFailsItsEvent(t *testing.T) {
	d, k := fakeLaunchDevice(t)
	testLaunches = launchLog{slow: 10 * time.Microsecond, fail: 7}
	ctx := context.Background()
	var events []driver.Event
	for i := range uint64(300) {
		ev, err := k.Submit(ctx, scalarLaunch(i))
		require.NoError(t, err, "the refusal is the event's, not Submit's")
		events = append(events, ev)
	}
	require.NoError(t, events[len(events)-1].Wait(ctx))
	for i, ev := range events {
		err := ev.Wait(ctx)
		if i == 7 {
			require.ErrorContains(t, err, "cuLaunchKernel")
			continue
		}
		require.NoError(t, err, "launch %d", i)
	}
	require.NoError(t, d.usable("launch"), "a refusal that is not sticky keeps the device")
	require.NoError(t, k.Launch(ctx, scalarLaunch(1000)))
	d.closed.Store(true)
	d.drainForClose()
}
