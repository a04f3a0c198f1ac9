package shm

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Prefix starts the name of every segment this package creates. The pid
// follows, so Sweep can tell which segments belong to dead processes.
const Prefix = "zyx-"

var seq atomic.Uint64

// NewName returns a fresh segment name that carries the pid of this process:
// zyx-<pid>-<seq>-<random>.
func NewName() string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("%s%d-%d-%s", Prefix, os.Getpid(), seq.Add(1), hex.EncodeToString(r[:]))
}

// Segment is one POSIX shared memory object, mapped read-write into this
// process for its whole life. Close unmaps it and, when this process created
// it, unlinks the name.
type Segment struct {
	dir   string
	name  string
	data  []byte
	owner bool
	// lockFD holds the owner lock of a segment this process created; -1
	// for segments opened from elsewhere.
	lockFD int

	closeOnce sync.Once
	closeErr  error
}

// Create makes a new segment of size bytes in DefaultDir with
// O_CREAT|O_EXCL and mode 0600, and maps it.
func Create(name string, size int64) (*Segment, error) { return CreateIn(DefaultDir(), name, size) }

// CreateIn is Create in directory dir.
func CreateIn(dir, name string, size int64) (*Segment, error) {
	if size <= 0 {
		return nil, fmt.Errorf("shm: create %s: size %d must be positive", name, size)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("shm: create %s: size %d does not fit in this address space", name, size)
	}
	if err := validName(name); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, name)
	fd, err := shmOpen(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Segment, error) {
		_ = unlink(path)
		_ = closeFD(fd, name)
		return nil, err
	}
	// The owner's lock marks the segment as in use until this process
	// closes it or dies; Sweep only removes segments nobody holds.
	if err := lockShared(fd, name); err != nil {
		return fail(err)
	}
	if err := ftruncate(fd, size, name); err != nil {
		return fail(err)
	}
	// tmpfs grants ftruncate without reserving pages; touching a page the
	// filesystem cannot back raises SIGBUS and kills the process. Reserving
	// the pages now turns a full /dev/shm into an ENOSPC error here.
	if err := reserve(fd, size, name); err != nil {
		return fail(err)
	}
	data, err := mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, name)
	if err != nil {
		return fail(err)
	}
	return &Segment{dir: dir, name: name, data: data, owner: true, lockFD: fd}, nil
}

// Open maps an existing segment of DefaultDir created by another process.
// Close unmaps it but leaves the name in place.
func Open(name string) (*Segment, error) { return OpenIn(DefaultDir(), name) }

// OpenIn is Open in directory dir.
func OpenIn(dir, name string) (*Segment, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	fd, err := shmOpen(filepath.Join(dir, name), unix.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer closeFD(fd, name) //nolint:errcheck
	size, err := fstatSize(fd, name)
	if err != nil {
		return nil, err
	}
	if size <= 0 {
		return nil, fmt.Errorf("shm: open %s: segment is empty", name)
	}
	data, err := mmap(fd, 0, int(size), unix.PROT_READ|unix.PROT_WRITE, name)
	if err != nil {
		return nil, err
	}
	return &Segment{dir: dir, name: name, data: data, lockFD: -1}, nil
}

// validName rejects names that would escape the directory or that the runtime could not
// open by name.
func validName(name string) error {
	if name == "" || len(name) > 200 || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
		return fmt.Errorf("shm: invalid segment name %q", name)
	}
	return nil
}

// Name is the segment's name in its directory, as other processes open it.
func (s *Segment) Name() string { return s.name }

// Size is the mapped length in bytes.
func (s *Segment) Size() int64 { return int64(len(s.data)) }

// Bytes is the whole mapping. It is valid until Close.
func (s *Segment) Bytes() []byte { return s.data }

// Close unmaps the segment and unlinks it if this process created it. It is
// safe to call more than once.
func (s *Segment) Close() error {
	s.closeOnce.Do(func() {
		err := munmap(s.data, s.name)
		s.data = nil
		if s.owner {
			if uerr := unlink(filepath.Join(s.dir, s.name)); uerr != nil && err == nil {
				err = uerr
			}
		}
		if s.lockFD >= 0 {
			if cerr := closeFD(s.lockFD, s.name); cerr != nil && err == nil {
				err = cerr
			}
			s.lockFD = -1
		}
		s.closeErr = err
	})
	return s.closeErr
}

// sweepMinAge keeps Sweep away from a segment created a moment ago, between
// its creator's open and lock.
const sweepMinAge = 10 * time.Second

// Sweep removes segments left behind by processes that are gone, and returns
// the names it removed. A segment is stale when no process holds its owner
// lock (the creator holds it until it closes the segment or dies) and either
// its creator's pid is not alive here or it is older than a few seconds.
// Segments of live owners, and names it does not recognise, are left alone.
func Sweep(dir string) ([]string, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, wrap("readdir", dir, err)
	}
	var removed []string
	for _, e := range entries {
		pid, ok := ownerPID(e.Name())
		if !ok || pid == os.Getpid() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if free, err := unheld(path); err != nil || !free {
			continue
		}
		if processAlive(pid) {
			// A live process with that pid holds no lock on it: pid reuse,
			// or a creator still between open and lock. Only age decides.
			info, err := e.Info()
			if err != nil || time.Since(info.ModTime()) < sweepMinAge {
				continue
			}
		}
		if err := unlink(path); err == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed, nil
}

// ownerPID extracts the pid from a name made by NewName.
func ownerPID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	pidStr, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(pidStr)
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
