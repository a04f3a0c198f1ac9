// Package kernels is zyx-tt's kernel library: Tenstorrent kernels that a
// bundle names with the "zyx:" prefix (zyx:tt/dataflow/write_chunks.cpp)
// instead of carrying its own copy, as tt-metal programs name the kernels
// that tt-metal ships. The files are part of the zyx-tt release, embedded in
// every binary that loads bundles; docs/programs.md lists them with their
// args and circular buffers.
package kernels

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Prefix marks a bundle path that names a library file.
const Prefix = "zyx:"

//go:embed tt
var files embed.FS

// ErrNotInLibrary is wrapped by Read for a name the library does not have.
var ErrNotInLibrary = errors.New("not in the zyx-tt kernel library")

// Read returns the library file name, a slash-separated path below the
// library's root such as "tt/dataflow/write_chunks.cpp".
func Read(name string) ([]byte, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, fmt.Errorf("%q is not a library path (slash-separated, below the library's root, no . or .. parts)", name)
	}
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (it has %s)", name, ErrNotInLibrary, strings.Join(Names(), ", "))
	}
	return data, nil
}

// File is one library file as an include: its path under the name it was
// asked for, and its text.
type File struct {
	Path string
	Data []byte
}

// Files returns what an include entry naming the library path name holds:
// a file under its base name, or every file below a directory under its
// path inside it, sorted by path.
func Files(name string) ([]File, error) {
	if !fs.ValidPath(name) || name == "." {
		return nil, fmt.Errorf("%q is not a library path (slash-separated, below the library's root, no . or .. parts)", name)
	}
	st, err := fs.Stat(files, name)
	if err != nil {
		return nil, fmt.Errorf("%q: %w (it has %s)", name, ErrNotInLibrary, strings.Join(Names(), ", "))
	}
	if !st.IsDir() {
		data, err := files.ReadFile(name)
		return []File{{Path: path.Base(name), Data: data}}, err
	}
	var out []File
	err = fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		out = append(out, File{Path: strings.TrimPrefix(p, name+"/"), Data: data})
		return err
	})
	return out, err
}

// Names lists the library's files, sorted.
func Names() []string {
	var out []string
	// The embedded tree is fixed at build time: walking it cannot fail.
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	return out
}
