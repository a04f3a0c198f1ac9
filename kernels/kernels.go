// Package kernels is zyx-tt's kernel library: Tenstorrent kernels and
// headers that a bundle names with the "zyx:" prefix
// (zyx:tt/dataflow/write_chunks.cpp) instead of carrying its own copy, as
// tt-metal programs name the kernels that tt-metal ships. The files are the
// repository's kernels/tt/, embedded in every binary that loads bundles;
// docs/programs.md lists them with their args and circular buffers.
package kernels

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Prefix marks a bundle path that names a library file. The first part of
// the path after it is the format the file is for ("tt").
const Prefix = "zyx:"

//go:embed all:tt
var files embed.FS

// IncludeDir is the library's include directory. A Tenstorrent program
// with a kernel from the library gets its files among its include files, as
// if its tt.json named "zyx:tt/include", so that library kernels can share
// the library's headers (#include "zyx/chunks.h").
const IncludeDir = "tt/include"

// ErrNotInLibrary is wrapped by Read and Files for a name the library does
// not have.
var ErrNotInLibrary = errors.New("not in the zyx-tt kernel library")

// File is one library file: Name is its library path, Path the path it is
// included under (below the directory an include entry named, or the base
// name of a file it named), Data its text.
type File struct {
	Name, Path string
	Data       []byte
}

// Read returns the library file name, a slash-separated path below the
// library's root such as "tt/dataflow/write_chunks.cpp".
func Read(name string) ([]byte, error) {
	if err := checkPath(name); err != nil {
		return nil, err
	}
	data, err := files.ReadFile(name)
	if err != nil {
		return nil, notFound(name)
	}
	return data, nil
}

// Files returns what an include entry naming the library path name holds:
// a file under its base name, or every file below a directory under its
// path inside it, sorted by path.
func Files(name string) ([]File, error) {
	if err := checkPath(name); err != nil {
		return nil, err
	}
	st, err := fs.Stat(files, name)
	if err != nil {
		return nil, notFound(name)
	}
	if !st.IsDir() {
		data, err := files.ReadFile(name)
		return []File{{Name: name, Path: path.Base(name), Data: data}}, err
	}
	var out []File
	err = fs.WalkDir(files, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(p)
		out = append(out, File{Name: p, Path: strings.TrimPrefix(p, name+"/"), Data: data})
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

func checkPath(name string) error {
	if !fs.ValidPath(name) || name == "." {
		return fmt.Errorf("%q is not a library path (slash-separated, below the library's root, no . or .. parts)", Prefix+name)
	}
	return nil
}

// notFound names the path as the bundle wrote it, and says how to reach a
// bundle file whose name starts with the prefix.
func notFound(name string) error {
	return fmt.Errorf("%q: %w (it has %s; a file of the bundle with this name is ./%s)",
		Prefix+name, ErrNotInLibrary, strings.Join(Names(), ", "), Prefix+name)
}
