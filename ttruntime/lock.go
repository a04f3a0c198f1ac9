package ttruntime

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/zyxtt/zyxtt/internal/core"
)

// ErrChipBusy marks a chip that another process holds.
var ErrChipBusy = errors.New("chip is in use by another process")

// EnvLockDir names a directory for the chip locks in place of the default
// (LockDir). It is checked like the default: a directory, not a symbolic
// link, owned by this user and writable by nobody else.
const EnvLockDir = "ZYX_TT_LOCK_DIR"

// ChipLock is an exclusive claim on one chip: an flock on a lock file that
// holds the owner's pid. The kernel drops the lock when the last
// descriptor of the open file goes, so a stale file never blocks anyone.
// The runtime process inherits a descriptor (Config.LockFile) and holds the
// lock as long as it lives, so a runtime left behind by a crashed driver
// still keeps other runs off the chip. This file is the only place that
// calls flock.
type ChipLock struct {
	f    *os.File
	path string
}

// LockDir is where chip lock files live, a directory no other user can
// plant files in: $ZYX_TT_LOCK_DIR when set; for root /run/lock/zyx-tt;
// otherwise $XDG_RUNTIME_DIR/zyx-tt when XDG_RUNTIME_DIR is set, else
// zyx-tt-<uid> in os.TempDir(). The directory is created 0700 when it is
// missing; an existing one must be a directory (not a symbolic link) owned
// by this user and writable by nobody else. Every user has a lock
// directory of their own: the locks keep one user's runs apart (a user's
// runs and the runtimes they left behind); the device files' permissions
// keep users apart.
func LockDir() string {
	if d := os.Getenv(EnvLockDir); d != "" {
		return d
	}
	if os.Geteuid() == 0 {
		if st, err := os.Lstat("/run/lock"); err == nil && st.IsDir() {
			return "/run/lock/zyx-tt"
		}
	}
	if x := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(x) {
		return filepath.Join(x, "zyx-tt")
	}
	return filepath.Join(os.TempDir(), "zyx-tt-"+strconv.Itoa(os.Geteuid()))
}

// LockName is the lock file's name for chip n of the card at PCI address
// pci (inside LockDir).
func LockName(pci string, chip int) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '\n' {
			return '_'
		}
		return r
	}, pci)
	return fmt.Sprintf("zyx-tt-%s-chip%d.lock", safe, chip)
}

// LockPath is the lock file of chip n of the card at pci.
func LockPath(pci string, chip int) string { return filepath.Join(LockDir(), LockName(pci, chip)) }

func lockErr(format string, args ...any) error {
	return core.Errorf(Backend, "lock", core.ErrNoDevice, format, args...)
}

// openLockDir opens the lock directory (creating it 0700 when missing)
// without following a symbolic link and checks that it is ours and that
// nobody else may write into it. The lock file is then opened relative to
// the descriptor, so the directory cannot be swapped underneath.
func openLockDir(dir string) (int, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return -1, lockErr("chip lock directory %s: %v", dir, err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, lockErr("chip lock directory %s is not a directory (a symbolic link or a file); refusing it", dir)
		}
		return -1, lockErr("chip lock directory %s: %v", dir, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return -1, lockErr("chip lock directory %s: %v", dir, err)
	}
	switch {
	case st.Uid != uint32(os.Geteuid()):
		_ = unix.Close(fd)
		return -1, lockErr("chip lock directory %s belongs to uid %d, not to this user (uid %d); refusing it (set %s to a directory of your own)", dir, st.Uid, os.Geteuid(), EnvLockDir)
	case st.Mode&0o022 != 0:
		_ = unix.Close(fd)
		return -1, lockErr("chip lock directory %s is writable by other users (mode %04o); refusing it", dir, st.Mode&0o7777)
	}
	return fd, nil
}

// LockChip claims chip n of the card at pci without blocking. When another
// process holds it, the error wraps ErrChipBusy and names that process's
// pid. The lock file is created 0600 if it is new; an existing one is
// opened without following a symbolic link and must be a regular file
// owned by this user with one link; it is never chmod-ed. Other processes
// are never signalled.
func LockChip(pci string, chip int) (*ChipLock, error) {
	dir := LockDir()
	dfd, err := openLockDir(dir)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dfd)
	name := LockName(pci, chip)
	path := filepath.Join(dir, name)
	const flags = unix.O_RDWR | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dfd, name, flags|unix.O_CREAT|unix.O_EXCL, 0o600)
	if errors.Is(err, unix.EEXIST) {
		fd, err = unix.Openat(dfd, name, flags|unix.O_NONBLOCK, 0)
	}
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, lockErr("chip lock %s is a symbolic link; refusing to follow it (remove it)", path)
		}
		return nil, lockErr("chip lock %s: %v", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		_ = unix.Close(fd)
		return nil, lockErr("chip lock %s: %v", path, err)
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		_ = unix.Close(fd)
		return nil, lockErr("chip lock %s is not a regular file; refusing it", path)
	case st.Uid != uint32(os.Geteuid()):
		_ = unix.Close(fd)
		return nil, lockErr("chip lock %s belongs to uid %d, not to this user (uid %d); refusing to trust it (remove it)", path, st.Uid, os.Geteuid())
	case st.Nlink != 1:
		_ = unix.Close(fd)
		return nil, lockErr("chip lock %s has %d links; refusing it (remove it)", path, st.Nlink)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		_ = unix.Close(fd)
		return nil, lockErr("chip lock %s: %v", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	for {
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		holder := readHolder(f)
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &core.Error{Backend: Backend, Op: "lock",
				Err: fmt.Errorf("%w: %w: chip %d of %s is held by %s (lock file %s)", core.ErrNoDevice, ErrChipBusy, chip, pci, holder, path)}
		}
		return nil, lockErr("flock %s: %v", path, err)
	}
	l := &ChipLock{f: f, path: path}
	l.note(os.Getpid(), 0)
	return l, nil
}

// note writes the holder's pid, and the runtime's when it is known.
func (l *ChipLock) note(pid, runtimePid int) {
	s := strconv.Itoa(pid) + "\n"
	if runtimePid > 0 {
		s += "runtime " + strconv.Itoa(runtimePid) + "\n"
	}
	if err := l.f.Truncate(0); err == nil {
		_, _ = l.f.WriteAt([]byte(s), 0)
	}
}

// NoteRuntime records the pid of the runtime that inherited the lock, so
// that a run refused while that runtime lives names it.
func (l *ChipLock) NoteRuntime(pid int) {
	if l != nil && l.f != nil {
		l.note(os.Getpid(), pid)
	}
}

func readHolder(f *os.File) string {
	b := make([]byte, 128)
	n, _ := f.ReadAt(b, 0)
	lines := strings.Split(strings.TrimSpace(string(b[:n])), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return "another process"
	}
	out := "pid " + strconv.Itoa(pid)
	if len(lines) > 1 {
		if r, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "runtime "); ok {
			if rp, err := strconv.Atoi(r); err == nil && rp > 0 {
				out += " (its runtime is pid " + strconv.Itoa(rp) + ")"
			}
		}
	}
	return out
}

// Path is the lock file.
func (l *ChipLock) Path() string { return l.path }

// File is the locked file, for a runtime to inherit (Config.LockFile).
func (l *ChipLock) File() *os.File {
	if l == nil {
		return nil
	}
	return l.f
}

// Unlock closes this process's descriptor of the lock. The chip is free
// once no runtime that inherited the lock lives either. It is safe to
// call more than once.
func (l *ChipLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	return f.Close() // the last descriptor of the open file drops the flock
}
