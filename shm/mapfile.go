package shm

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// FileMap is a read-only mapping of a slice of an ordinary file. It owns the
// mapping: Close unmaps it. The file must not shrink while it is mapped;
// reading a page past a truncated end raises SIGBUS.
type FileMap struct {
	path string
	full []byte // the page-aligned mapping
	data []byte // the requested slice of it

	closeOnce sync.Once
	closeErr  error
}

// MapFile maps n bytes of the file at path starting at byte off, read-only.
// The offset need not be page aligned: the mapping starts at the page that
// holds off and Bytes hides the lead-in. The range must lie inside the file.
func MapFile(path string, off, n int64) (*FileMap, error) {
	if off < 0 || n <= 0 {
		return nil, fmt.Errorf("shm: map %s: range [%d,%d): offset must be non-negative and length positive", path, off, off+n)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, wrap("open", path, err)
	}
	defer closeFD(fd, path) //nolint:errcheck // the mapping outlives the descriptor
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, wrap("fstat", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("shm: map %s: not a regular file", path)
	}
	if off > st.Size || n > st.Size-off {
		return nil, fmt.Errorf("shm: map %s: range [%d,%d) outside the file's %d bytes", path, off, off+n, st.Size)
	}
	page := int64(os.Getpagesize())
	start := off / page * page
	lead := off - start
	length := lead + n
	if int64(int(length)) != length {
		return nil, fmt.Errorf("shm: map %s: %d bytes do not fit in this address space", path, n)
	}
	full, err := mmap(fd, start, int(length), unix.PROT_READ, path)
	if err != nil {
		return nil, err
	}
	return &FileMap{path: path, full: full, data: full[lead : lead+n : lead+n]}, nil
}

// Path is the mapped file's path.
func (m *FileMap) Path() string { return m.path }

// Len is the length of the mapped slice in bytes.
func (m *FileMap) Len() int64 { return int64(len(m.data)) }

// Bytes is the mapped slice. It is read-only (writing to it faults) and
// valid until Close.
func (m *FileMap) Bytes() []byte { return m.data }

// Close unmaps the file. It is safe to call more than once.
func (m *FileMap) Close() error {
	m.closeOnce.Do(func() {
		m.closeErr = munmap(m.full, m.path)
		m.full, m.data = nil, nil
	})
	return m.closeErr
}
