// Package diskcache is the on-disk side of the backends' build caches: one
// check that a cache directory is private, and reading and writing its files
// so that nothing another user controls is ever loaded and a concurrent
// reader sees the old file or the whole new one, never half.
//
// A cache holds what a backend loads and runs (compiled objects, GPU
// binaries), so it must be the user's own: the directory is owned by the
// process's effective user and writable by no one else, every directory above
// it is the user's or root's (writable by others only with the sticky bit, as
// /tmp), and every file loaded from it is a regular file of the user's that
// no one else can write, opened without following a symbolic link. There is
// no fallback to a shared place: an unsafe directory is an error that names
// the directory and why.
package diskcache

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Off is the configured directory that turns a disk cache off.
const Off = "off"

// Dir is a private cache directory, checked when opened. Its path is the
// resolved one (no symbolic links), so that later lookups cannot be
// redirected through a link someone else owns.
type Dir struct {
	path string
}

// Open resolves a backend's configured cache directory, creates it (mode
// 0700) with any missing parents, and checks that it is private. Off, or ""
// when the user has no cache directory, means no disk cache: (nil, nil).
// "" means <user cache dir>/zyx/<backend>; anything else is used as it is.
func Open(configured, backend string) (*Dir, error) {
	var dir string
	switch configured {
	case Off:
		return nil, nil
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, nil
		}
		dir = filepath.Join(base, "zyx", backend)
	default:
		dir = configured
	}
	return OpenPath(dir)
}

// OpenPath creates dir (mode 0700, parents too) and checks that it and its
// ancestors are private (see the package comment).
func OpenPath(dir string) (*Dir, error) {
	if !filepath.IsAbs(dir) {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("cache directory %s: %w", dir, err)
		}
		dir = abs
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("cache directory: %w", err)
	}
	if err := checkChain(real); err != nil {
		return nil, fmt.Errorf("refusing cache directory %s: %w (a cache must be private: others could plant code that runs as you)", dir, err)
	}
	return &Dir{path: real}, nil
}

// checkChain checks every directory from / down to dir (a resolved path).
func checkChain(dir string) error {
	parts := strings.Split(strings.TrimPrefix(dir, "/"), "/")
	at := "/"
	for i := -1; i < len(parts); i++ {
		if i >= 0 {
			if parts[i] == "" {
				continue
			}
			at = filepath.Join(at, parts[i])
		}
		var st unix.Stat_t
		if err := unix.Lstat(at, &st); err != nil {
			return &os.PathError{Op: "lstat", Path: at, Err: err}
		}
		leaf := i == len(parts)-1
		if why := dirProblem(&st, leaf); why != "" {
			if leaf {
				return fmt.Errorf("it is %s", why)
			}
			return fmt.Errorf("%s is %s", at, why)
		}
	}
	return nil
}

// dirProblem says why a directory may not hold (leaf) or lie above a cache,
// or "" when it may.
func dirProblem(st *unix.Stat_t, leaf bool) string {
	me := uint32(os.Geteuid())
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return "not a directory"
	}
	others := st.Mode&(unix.S_IWGRP|unix.S_IWOTH) != 0
	if leaf {
		if st.Uid != me {
			return fmt.Sprintf("owned by uid %d, not by this process's uid %d", st.Uid, me)
		}
		if others {
			return "writable by its group or by others"
		}
		return ""
	}
	if st.Uid != me && st.Uid != 0 {
		return fmt.Sprintf("owned by uid %d (neither this process's uid nor root)", st.Uid)
	}
	if others && st.Mode&unix.S_ISVTX == 0 {
		return "writable by its group or by others and not sticky"
	}
	return ""
}

// fileProblem says why a file in the cache must not be used, or "".
func fileProblem(st *unix.Stat_t) string {
	me := uint32(os.Geteuid())
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return "not a regular file"
	case st.Uid != me:
		return fmt.Sprintf("owned by uid %d, not by this process's uid %d", st.Uid, me)
	case st.Mode&(unix.S_IWGRP|unix.S_IWOTH) != 0:
		return "writable by its group or by others"
	}
	return ""
}

// ErrUntrusted marks a cache file that exists but must not be used (another
// owner, a symbolic link, not a regular file, writable by others).
var ErrUntrusted = errors.New("untrusted file")

// Path is the directory's resolved path.
func (d *Dir) Path() string { return d.path }

// File is the path of the entry name (a plain file name, no separators).
func (d *Dir) File(name string) string { return filepath.Join(d.path, name) }

// Check reports whether the entry name may be loaded: nil when it is a
// regular file of ours that no one else can write, an fs.ErrNotExist error
// when it is absent, and ErrUntrusted otherwise. The directory is private,
// so what Check saw is what a later open by path finds.
func (d *Dir) Check(name string) error {
	var st unix.Stat_t
	if err := unix.Lstat(d.File(name), &st); err != nil {
		return &os.PathError{Op: "lstat", Path: d.File(name), Err: err}
	}
	if why := fileProblem(&st); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrUntrusted, d.File(name), why)
	}
	return nil
}

// ReadFile reads the entry name, at most limit bytes: opened without
// following a symbolic link and without blocking (a FIFO planted there
// cannot hang the caller), checked like Check, and refused when larger than
// limit.
func (d *Dir) ReadFile(name string, limit int64) ([]byte, error) {
	return ReadPrivateFile(d.File(name), limit)
}

// ReadPrivateFile reads path as ReadFile reads a cache entry: a regular file
// of ours that no one else can write, opened with O_NOFOLLOW|O_NONBLOCK, at
// most limit bytes. It serves files outside a cache that the process trusts
// the same way (the performance record).
func ReadPrivateFile(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP {
			return nil, fmt.Errorf("%w: %s is a symbolic link", ErrUntrusted, path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	if why := fileProblem(&st); why != "" {
		return nil, fmt.Errorf("%w: %s is %s", ErrUntrusted, path, why)
	}
	if st.Size > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d this file may hold", path, st.Size, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s grew past the %d bytes this file may hold", path, limit)
	}
	return data, nil
}

// CreateTemp makes a new file (mode 0600, O_EXCL) in the directory, named
// from pattern as os.CreateTemp names it.
func (d *Dir) CreateTemp(pattern string) (*os.File, error) {
	return os.CreateTemp(d.path, pattern)
}

// WriteFile writes data to the entry name through a new temporary file in
// the directory and a rename. On failure the temporary file is removed and
// the entry is left as it was.
func (d *Dir) WriteFile(name string, data []byte) error {
	f, err := d.CreateTemp("." + name + ".*.tmp")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(f.Name(), d.File(name)); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return nil
}

// Remove removes the entry name; an absent entry is no error.
func (d *Dir) Remove(name string) error {
	if err := os.Remove(d.File(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
