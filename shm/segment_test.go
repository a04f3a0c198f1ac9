package shm

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestCreateExclusiveOwnerOnlyAndNamedByPID(t *testing.T) {
	name := NewName()
	require.True(t, strings.HasPrefix(name, Prefix+strconv.Itoa(os.Getpid())+"-"), "name %q must carry the pid", name)
	pid, ok := ownerPID(name)
	require.True(t, ok)
	require.Equal(t, os.Getpid(), pid)

	seg, err := Create(name, 5000)
	require.NoError(t, err)
	require.Equal(t, name, seg.Name())
	require.EqualValues(t, 5000, seg.Size())
	require.Len(t, seg.Bytes(), 5000)

	st, err := os.Stat(filepath.Join(DefaultDir(), name))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	_, err = Create(name, 4096)
	require.Error(t, err, "O_EXCL: a second create of one name must fail")
	require.ErrorIs(t, err, os.ErrExist)

	require.NoError(t, seg.Close())
	require.NoError(t, seg.Close(), "Close is idempotent")
	require.Nil(t, seg.Bytes())
	_, err = os.Stat(filepath.Join(DefaultDir(), name))
	require.ErrorIs(t, err, os.ErrNotExist, "the creator's Close unlinks")
}

func TestNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		n := NewName()
		require.False(t, seen[n], "duplicate name %s", n)
		seen[n] = true
	}
}

func TestCreateRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		seg  string
		size int64
		want string
	}{
		{"zero size", NewName(), 0, "must be positive"},
		{"negative size", NewName(), -4096, "must be positive"},
		{"empty name", "", 4096, "invalid segment name"},
		{"slash", "a/b", 4096, "invalid segment name"},
		{"dot", ".", 4096, "invalid segment name"},
		{"dotdot", "..", 4096, "invalid segment name"},
		{"nul", "a\x00b", 4096, "invalid segment name"},
		{"too long", strings.Repeat("x", 201), 4096, "invalid segment name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seg, err := Create(tc.seg, tc.size)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, seg)
		})
	}
}

func TestOpenSharesMemoryAndLeavesTheName(t *testing.T) {
	seg, err := Create(NewName(), 4096)
	require.NoError(t, err)
	defer seg.Close()

	peer, err := Open(seg.Name())
	require.NoError(t, err)
	require.EqualValues(t, 4096, peer.Size())
	copy(seg.Bytes()[100:], "through the creator")
	require.Equal(t, "through the creator", string(peer.Bytes()[100:119]))
	require.NoError(t, peer.Close())

	_, err = os.Stat(filepath.Join(DefaultDir(), seg.Name()))
	require.NoError(t, err, "closing an opened (not created) segment keeps its name")

	_, err = Open(NewName())
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = Open("../etc")
	require.ErrorContains(t, err, "invalid segment name")
}

func TestMissingDirIsUnsupported(t *testing.T) {
	t.Setenv(EnvDir, filepath.Join(t.TempDir(), "no-such-shm"))

	_, err := Create(NewName(), 4096)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, DefaultDir(), "the error names the missing directory")
	_, err = Open("zyx-1-1-00")
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = NewArena()
	require.ErrorIs(t, err, ErrUnsupported)
	_, err = Sweep(DefaultDir())
	require.ErrorIs(t, err, ErrUnsupported)

	// A file where the directory should be is just as unusable.
	file := filepath.Join(t.TempDir(), "file")
	t.Setenv(EnvDir, file)
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = Create(NewName(), 4096)
	require.ErrorIs(t, err, ErrUnsupported)
}

// startHelper runs this test binary as a helper process in mode.
func startHelper(t *testing.T, mode string) (*exec.Cmd, string, func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode) // ZYX_SHM_DIR is inherited
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "helper printed no segment name")
	name := strings.TrimSpace(line)
	pid, ok := ownerPID(name)
	require.True(t, ok, "helper name %q", name)
	require.Equal(t, cmd.Process.Pid, pid, "the helper's segment carries the helper's pid")
	finish := func() {
		_ = stdin.Close()
		require.NoError(t, cmd.Wait())
	}
	return cmd, name, finish
}

func exists(t *testing.T, name string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(DefaultDir(), name))
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	require.NoError(t, err)
	return true
}

func TestSweepRemovesDeadOwnersOnly(t *testing.T) {
	// A segment of a process that died without cleaning up.
	_, dead, finish := startHelper(t, helperCreateAndExit)
	finish()
	require.True(t, exists(t, dead), "the dead helper left its segment behind")

	// A segment of a live process, one of our own, and names Sweep must
	// not recognise.
	_, live, finishLive := startHelper(t, helperCreateAndWait)
	own, err := Create(NewName(), 4096)
	require.NoError(t, err)
	defer own.Close()
	foreign := []string{"not-ours", Prefix + "abc-1-ff", Prefix + "0-1-ff", Prefix + "12345"}
	for _, n := range foreign {
		require.NoError(t, os.WriteFile(filepath.Join(DefaultDir(), n), nil, 0o600))
	}

	removed, err := Sweep(DefaultDir())
	require.NoError(t, err)
	require.Equal(t, []string{dead}, removed)
	require.False(t, exists(t, dead))
	require.True(t, exists(t, live), "a live process keeps its segment")
	require.True(t, exists(t, own.Name()), "our own segment is kept")
	for _, n := range foreign {
		require.True(t, exists(t, n), "unrecognised name %q is kept", n)
	}

	// The live helper cleans up after itself; nothing is left to sweep.
	finishLive()
	require.False(t, exists(t, live))
	removed, err = Sweep(DefaultDir())
	require.NoError(t, err)
	require.Empty(t, removed)
}

func TestOwnerPID(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"zyx-42-1-abcd", 42, true},
		{"zyx-42-", 42, true},
		{"zyx-42", 0, false},
		{"zyx--1-ab", 0, false},
		{"zyx-0-1-ab", 0, false},
		{"zyx-x-1-ab", 0, false},
		{"other-42-1", 0, false},
		{"zyx-99999999999999999999-1", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pid, ok := ownerPID(tc.name)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.pid, pid)
		})
	}
}

func TestProcessAlive(t *testing.T) {
	require.True(t, processAlive(os.Getpid()))
	require.True(t, processAlive(1), "pid 1 exists (EPERM still counts as alive)")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=bogus")
	_ = cmd.Run()
	require.False(t, processAlive(cmd.Process.Pid), "a reaped child is gone")
	require.ErrorIs(t, unix.Kill(cmd.Process.Pid, 0), unix.ESRCH)
}

func TestCreateBeyondTheFilesystemIsAnErrorNotSIGBUS(t *testing.T) {
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(DefaultDir(), &st))
	if st.Type != unix.TMPFS_MAGIC {
		t.Skipf("%s is not on tmpfs", DefaultDir())
	}
	capacity, err := Capacity(DefaultDir())
	require.NoError(t, err)
	require.Equal(t, int64(st.Blocks)*st.Bsize, capacity)

	// Without the up-front reservation this create succeeds and the first
	// write past the filesystem's size kills the process with SIGBUS.
	name := NewName()
	seg, err := Create(name, capacity+1<<20)
	require.ErrorIs(t, err, unix.ENOSPC)
	require.ErrorContains(t, err, "fallocate "+name)
	require.Nil(t, seg)
	require.False(t, exists(t, name), "a failed create leaves no name behind")
}

// inDir points the package's default directory at a fresh one on tmpfs
// for one test.
func inDir(t *testing.T) string {
	t.Helper()
	if st, err := os.Stat(SystemDir); err != nil || !st.IsDir() {
		t.Skipf("no %s: no tmpfs directory to point %s at", SystemDir, EnvDir)
	}
	dir, err := os.MkdirTemp(SystemDir, "zyxtest-dir-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv(EnvDir, dir)
	return dir
}

func TestSweepKeepsSegmentsWhoseOwnerLockIsHeld(t *testing.T) {
	dir := inDir(t)
	// The pid in the name is long gone, but this process created the
	// segment and holds its owner lock: a live owner in another pid
	// namespace looks exactly like this.
	held, err := Create(Prefix+"999999999-1-aa", 4096)
	require.NoError(t, err)
	removed, err := Sweep(DefaultDir())
	require.NoError(t, err)
	require.Empty(t, removed)
	require.FileExists(t, filepath.Join(dir, held.Name()))
	require.NoError(t, held.Close())
	require.NoFileExists(t, filepath.Join(dir, held.Name()))
}

func TestSweepJudgesUnlockedSegmentsOfLivePidsByAge(t *testing.T) {
	dir := inDir(t)
	// pid 1 is alive, but holds no lock on these: pid reuse, or a creator
	// caught between open and lock. Fresh ones are kept, old ones go.
	fresh := Prefix + "1-1-fresh"
	old := Prefix + "1-2-old"
	for _, n := range []string{fresh, old} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600))
	}
	past := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(dir, old), past, past))
	removed, err := Sweep(DefaultDir())
	require.NoError(t, err)
	require.Equal(t, []string{old}, removed)
	require.FileExists(t, filepath.Join(dir, fresh))
}

func TestFirstArenaSweepsStaleSegments(t *testing.T) {
	dir := inDir(t)
	stale := filepath.Join(dir, Prefix+"999999999-1-bb")
	require.NoError(t, os.WriteFile(stale, []byte("left by a crash"), 0o600))
	a, err := NewArena()
	require.NoError(t, err)
	defer a.Close()
	require.NoFileExists(t, stale, "the first arena in a directory sweeps it")
}
