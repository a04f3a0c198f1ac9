// Package shm provides POSIX shared memory for zyx-tt: named segments under
// /dev/shm, an arena that maps each segment once and reuses its regions, and a
// sweep that removes segments left behind by dead processes.
//
// Every system call goes through the thin wrappers in this file, so each errno
// is wrapped with the name of the operation that produced it.
package shm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is returned when the host has no POSIX shared memory
// (no /dev/shm tmpfs), so segments cannot be created.
var ErrUnsupported = errors.New("shm: POSIX shared memory is not available (no /dev/shm)")

// SystemDir is where POSIX shared memory objects live on Linux. shm_open(3)
// in glibc is open(2) on this directory, so using it directly needs no cgo.
// The Tenstorrent runtime maps segments by name under this directory.
const SystemDir = "/dev/shm"

// EnvDir names the environment variable that moves the default directory of
// segments and arenas elsewhere (an absolute path to a directory on tmpfs),
// for hosts whose /dev/shm is small and for tests that keep their segments
// apart from other processes'.
const EnvDir = "ZYX_SHM_DIR"

// DefaultDir is the directory segments and arenas use unless told otherwise:
// $ZYX_SHM_DIR when it is an absolute path, else /dev/shm. An arena or
// segment made in it refuses a ZYX_SHM_DIR that is relative or not on
// tmpfs (checkEnvDir).
func DefaultDir() string {
	if d := os.Getenv(EnvDir); d != "" && filepath.IsAbs(d) {
		return filepath.Clean(d)
	}
	return SystemDir
}

// Filesystem magic numbers (statfs f_type) of memory-backed filesystems.
const (
	tmpfsMagic = 0x01021994
	ramfsMagic = 0x858458f6
)

// checkEnvDir refuses a ZYX_SHM_DIR that DefaultDir would not use (a
// relative path) or whose segments would not be in memory (a directory on
// another filesystem than tmpfs): never silently another directory than
// the one named, never a disk-backed one.
func checkEnvDir() error {
	d := os.Getenv(EnvDir)
	if d == "" {
		return nil
	}
	if !filepath.IsAbs(d) {
		return fmt.Errorf("shm: %s=%q is not an absolute path (want a directory on tmpfs)", EnvDir, d)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(d, &st); err != nil {
		return nil // checkDir says what is wrong with it
	}
	if st.Type != tmpfsMagic && st.Type != ramfsMagic {
		return fmt.Errorf("shm: %s=%s is not on tmpfs (filesystem type %#x): shared memory there would be written to disk; mount a tmpfs there or name one", EnvDir, d, st.Type)
	}
	return nil
}

// opError names the failing operation and the object it worked on.
type opError struct {
	op   string
	name string
	err  error
}

func (e *opError) Error() string {
	if e.name == "" {
		return fmt.Sprintf("shm: %s: %v", e.op, e.err)
	}
	return fmt.Sprintf("shm: %s %s: %v", e.op, e.name, e.err)
}

func (e *opError) Unwrap() error { return e.err }

func wrap(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &opError{op: op, name: name, err: err}
}

func checkDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s", ErrUnsupported, dir)
	}
	return nil
}

func shmOpen(path string, flags int, mode uint32) (int, error) {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, mode)
	return fd, wrap("open", path, err)
}

func ftruncate(fd int, size int64, name string) error {
	return wrap("ftruncate", name, unix.Ftruncate(fd, size))
}

// reserve allocates the segment's pages up front. A filesystem without
// fallocate keeps the old behaviour rather than failing.
func reserve(fd int, size int64, name string) error {
	err := unix.Fallocate(fd, 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return wrap("fallocate", name, err)
}

func fstatSize(fd int, name string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, wrap("fstat", name, err)
	}
	return st.Size, nil
}

func mmap(fd int, off int64, size int, prot int, name string) ([]byte, error) {
	b, err := unix.Mmap(fd, off, size, prot, unix.MAP_SHARED)
	return b, wrap("mmap", name, err)
}

func munmap(b []byte, name string) error {
	return wrap("munmap", name, unix.Munmap(b))
}

func closeFD(fd int, name string) error {
	return wrap("close", name, unix.Close(fd))
}

func unlink(path string) error {
	return wrap("unlink", path, unix.Unlink(path))
}

// lockShared takes a shared flock that lasts as long as fd stays open. The
// creator of a segment holds it for the segment's whole life, so Sweep can
// tell a live owner from a dead one even across pid namespaces.
func lockShared(fd int, name string) error {
	return wrap("flock", name, unix.Flock(fd, unix.LOCK_SH))
}

// unheld reports whether no process holds a lock on the file at path: the
// exclusive, non-blocking flock that only succeeds when no owner is left.
func unheld(path string) (bool, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return false, wrap("open", path, err)
	}
	defer unix.Close(fd) //nolint:errcheck
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	if err != nil {
		return false, wrap("flock", path, err)
	}
	return true, nil
}

// processAlive reports whether pid names a live process. EPERM means it
// exists but belongs to someone else, which still counts as alive.
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// statfs is the statfs of the filesystem that holds dir, a directory
// checkDir accepts.
func statfs(dir string) (unix.Statfs_t, error) {
	var st unix.Statfs_t
	if err := checkDir(dir); err != nil {
		return st, err
	}
	if err := unix.Statfs(dir, &st); err != nil {
		return st, wrap("statfs", dir, err)
	}
	return st, nil
}

// Available is how many bytes the filesystem that holds dir has free.
func Available(dir string) (int64, error) {
	st, err := statfs(dir)
	if err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Capacity is the total size in bytes of the filesystem that holds dir: the
// most that segments can ever hold together.
func Capacity(dir string) (int64, error) {
	st, err := statfs(dir)
	if err != nil {
		return 0, err
	}
	return int64(st.Blocks) * st.Bsize, nil
}
