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

// ChipLock is an exclusive claim on one chip: an flock on a lock file that
// holds the owner's pid. The kernel drops the lock when the owner dies, so
// a stale file never blocks anyone. This file is the only place that calls
// flock.
type ChipLock struct {
	f    *os.File
	path string
}

// LockDir is where chip lock files live: os.TempDir(), shared by every user
// of the machine, so that two users cannot drive one chip at once.
func LockDir() string { return os.TempDir() }

// LockPath is the lock file of chip n of the card at PCI address pci.
func LockPath(pci string, chip int) string {
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == 0 {
			return '_'
		}
		return r
	}, pci)
	return filepath.Join(LockDir(), fmt.Sprintf("zyx-tt-%s-chip%d.lock", safe, chip))
}

// LockChip claims chip n of the card at pci without blocking. When another
// process holds it, the error wraps ErrChipBusy and names that process's
// pid. Other processes are never signalled.
func LockChip(pci string, chip int) (*ChipLock, error) {
	path := LockPath(pci, chip)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		// Another user's file that we may not write: reading suffices
		// for flock.
		f, err = os.OpenFile(path, os.O_RDONLY, 0)
		if err != nil {
			return nil, core.Errorf(Backend, "lock", core.ErrNoDevice, "chip lock %s: %v", path, err)
		}
	}
	_ = f.Chmod(0o666) // let other users open it too; best effort
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder := readHolder(path)
		_ = f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &core.Error{Backend: Backend, Op: "lock",
				Err: fmt.Errorf("%w: %w: chip %d of %s is held by %s (lock file %s)", core.ErrNoDevice, ErrChipBusy, chip, pci, holder, path)}
		}
		return nil, core.Errorf(Backend, "lock", core.ErrNoDevice, "flock %s: %v", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &ChipLock{f: f, path: path}, nil
}

func readHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "another process"
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return "another process"
	}
	return "pid " + strconv.Itoa(pid)
}

// Path is the lock file.
func (l *ChipLock) Path() string { return l.path }

// Unlock releases the chip. It is safe to call more than once.
func (l *ChipLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	f := l.f
	l.f = nil
	_ = f.Truncate(0)
	return f.Close() // closing the last descriptor drops the flock
}
