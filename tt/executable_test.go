package tt_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/backends"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// checkExecutableContract checks the executable contract on d, which it
// closes: Release is idempotent and really drops the program in the
// runtime; Launch and LaunchTimed after Release, or after the device's
// Close, fail with ErrClosed before reaching the runtime; Release after
// Close is nil. args are prog's launch arguments on d's pool.
func checkExecutableContract(t *testing.T, d *tt.Device, prog func() *driver.Program, args []driver.LaunchArg) {
	t.Helper()
	ctx := context.Background()
	compile := func() *backends.Executable {
		t.Helper()
		exe, err := backends.DeviceOf(d).Compile(ctx, prog())
		require.NoError(t, err)
		require.NoError(t, exe.Launch(ctx, args))
		return exe
	}
	requireClosed := func(exe *backends.Executable, says string) {
		t.Helper()
		err := exe.Launch(ctx, args)
		require.ErrorIs(t, err, driver.ErrClosed)
		require.NotErrorIs(t, err, driver.ErrDeviceLost, "refused before the runtime")
		require.ErrorContains(t, err, says)
		_, err = exe.LaunchTimed(ctx, args)
		require.ErrorIs(t, err, driver.ErrClosed)
		require.ErrorContains(t, err, says)
	}

	released := compile()
	ids := released.Driver().(*tt.Executable).ProgramIDs()
	require.NotEmpty(t, ids)
	require.NoError(t, released.Release())
	// The runtime no longer holds the programs, so a release that reached
	// it again would be answered unknown_program: the second Release's nil
	// means it sent nothing.
	for _, id := range ids {
		err := d.Client().Release(ctx, ttruntime.ProgramRequest{Program: id})
		var re *ttruntime.RemoteError
		require.ErrorAs(t, err, &re)
		require.Equal(t, ttruntime.CodeUnknownProgram, re.Code)
	}
	require.Empty(t, released.Driver().(*tt.Executable).ProgramIDs())
	require.NoError(t, released.Release(), "a second Release is nil")
	requireClosed(released, "was released")

	live := compile() // the device is still usable
	require.NoError(t, backends.DeviceOf(d).Close())
	requireClosed(live, "is closed")
	requireClosed(released, "was released")
	require.NoError(t, live.Release(), "Release after the device's Close is nil")
	require.NoError(t, live.Release())
	requireClosed(live, "was released")
}

func contractArgs(t *testing.T, d *tt.Device, n int64, bufs int, vars ...uint64) []driver.LaunchArg {
	ctx := context.Background()
	var args []driver.LaunchArg
	for range bufs {
		b, err := d.Pool().Alloc(ctx, n)
		require.NoError(t, err)
		args = append(args, driver.BufArg(b))
	}
	for _, v := range vars {
		args = append(args, driver.VarArg(driver.UintConst(driver.U32, v)))
	}
	return args
}

// vaddArgs are vaddProgram's args: n = 4, then three buffers of 4096 bytes.
func vaddArgs(t *testing.T, d *tt.Device) []driver.LaunchArg {
	args := contractArgs(t, d, 4096, 3, 4)
	return append(args[3:], args[:3]...)
}

func TestExecutableContractUnderTheMock(t *testing.T) {
	d := open1(t, "")
	args := contractArgs(t, d, 4096, 3, 4)
	// vadd's variable comes first
	args = append(args[3:], args[:3]...)
	checkExecutableContract(t, d, vaddProgram, args)
}

func TestExecutableContractUnderTheEmulator(t *testing.T) {
	d := openEmu(t, "n150")[0].Driver().(*tt.Device)
	checkExecutableContract(t, d, func() *driver.Program { return exampleVadd(t, 1, 2) }, contractArgs(t, d, 4*2048, 3, 2048))
}

// launchIntoAHang opens a device whose mock runtime (with the faults of
// spec as well) never answers the first run, with the 60 s call timeout,
// and gives up a vadd launch on it once the runtime has read the run: the
// launch fails with its context's error.
func launchIntoAHang(t *testing.T, spec string) (*tt.Device, *backends.Executable, []backends.LaunchArg) {
	t.Helper()
	// init 1, three allocs 2–4, the launch's compile 5 and run 6, which
	// never answers
	devs, err := openTimed(t, "none", strings.Trim("hang-at=6,"+spec, ","), 60, "")
	require.NoError(t, err)
	d := devs[0].Driver().(*tt.Device)
	args := vaddArgs(t, d)
	exe, err := backends.DeviceOf(d).Compile(context.Background(), vaddProgram())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for !strings.Contains(d.Client().StderrTail(), "hanging on request 6") && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	require.ErrorIs(t, exe.Launch(ctx, args), context.Canceled)
	require.Contains(t, d.Client().StderrTail(), "hanging on request 6", "the run was sent and is what hangs")
	return d, exe, args
}

// A program exiting while a kernel hangs: the launch is given up (its
// context), and the cleanups after it do not each wait the 60 s call
// timeout. The first free waits the client's AbandonedGrace (1 s: a call
// was abandoned and is unanswered) for its reply, not the cleanup timeout
// (5 s), the runtime is then presumed hung and killed, and every later
// cleanup fails at once.
func TestCleanupDuringAHungKernel(t *testing.T) {
	d, exe, args := launchIntoAHang(t, "")
	p := d.Pool()
	began := time.Now()
	err := p.Release(args[1].Buffer)
	took := time.Since(began)
	require.ErrorIs(t, err, backends.ErrDeviceLost, "stderr: %s", d.Client().StderrTail())
	require.ErrorContains(t, err, "no reply to free within 1s; the runtime is presumed hung")
	require.GreaterOrEqual(t, took, 900*time.Millisecond, "the free had the grace to answer")

	require.ErrorIs(t, p.Release(args[2].Buffer), backends.ErrDeviceLost)
	require.ErrorIs(t, exe.Release(), backends.ErrDeviceLost)
	require.False(t, d.Client().Alive(), "the later cleanups failed on a runtime that is gone")
	require.NoError(t, d.Close(), "the runtime was already killed: nothing to escalate")
}

// Closing a device right after a launch was given up on a hung kernel is
// prompt: the exit request waits only the client's AbandonedGrace (1 s),
// and the runtime that does not answer is killed; Close says so. (Without
// the grace it would wait for exit, then SIGTERM, then SIGKILL: three
// shutdown timeouts of 5 s.)
func TestCloseDuringAHungKernel(t *testing.T) {
	d, exe, _ := launchIntoAHang(t, "ignore-term")
	began := time.Now()
	err := d.Close()
	require.Less(t, time.Since(began), 10*time.Second, "Close waited for a graceful exit")
	var se *ttruntime.ShutdownError
	require.ErrorAs(t, err, &se)
	require.Equal(t, ttruntime.ShutdownKilled, se.How)
	require.NoError(t, exe.Release(), "Release after Close is nil")
}
