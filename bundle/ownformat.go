package bundle

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/kernels"
)

// A format whose code type implements driver.BundleVariant reads its own
// file: the loader gives it the bundle (bundleSource) to load from, and the
// bundle at var values (bundleEnv) to bind at. The loader never names such a
// format; its driver alone interprets it.

// ownVariant is a new value of fi's code type when that type reads its own
// bundle file, else nil.
func ownVariant(fi backends.FormatInfo) driver.BundleVariant {
	if fi.Code == nil || fi.Code.Kind() != reflect.Pointer {
		return nil
	}
	bv, _ := reflect.New(fi.Code.Elem()).Interface().(driver.BundleVariant)
	return bv
}

// fileError names file in an error of a format's own decoder or binder.
func fileError(file string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return err // a source file's error: it names its file already
	}
	var df *driver.FieldError
	if errors.As(err, &df) {
		return &FieldError{file, df.Field, df.Err}
	}
	return &FieldError{File: file, Err: err}
}

// bundleSource is a bundle as a variant file of one format loads from it.
type bundleSource struct {
	b      *Bundle
	file   string
	format backends.Format
}

func (s *bundleSource) ferr(field, format string, args ...any) error {
	return &FieldError{s.file, field, fmt.Errorf(format, args...)}
}

func (s *bundleSource) Params() []driver.Param {
	out := make([]driver.Param, len(s.b.Params))
	for i, p := range s.b.Params {
		out[i] = p.Param
	}
	return out
}

func (s *bundleSource) ParamIndex(name string) (int, bool) { return s.b.ParamIndex(name) }
func (s *bundleSource) VarIndex(name string) (int, bool)   { return s.b.VarIndex(name) }

// ReadFile reads a file of the bundle, or of the kernel library below the
// format's own directory.
func (s *bundleSource) ReadFile(field, rel string) ([]byte, error) {
	if rel == "" {
		return nil, s.ferr(field, "missing")
	}
	if name, ok, err := libraryName(rel, s.format); ok {
		return readNamed(s, field, name, err, kernels.Read)
	}
	p, err := inBundle(s.b.Dir, rel)
	return readNamed(s, field, p, err, readLimited)
}

// readNamed reads name with read once finding it gave no error (nameErr);
// either error names field.
func readNamed[T any](s *bundleSource, field, name string, nameErr error, read func(string) (T, error)) (T, error) {
	var zero T
	if nameErr != nil {
		return zero, s.ferr(field, "%v", nameErr)
	}
	v, err := read(name)
	if err != nil {
		return zero, s.ferr(field, "%v", err)
	}
	return v, nil
}

// Files lists the files rel names: every file below a directory (files
// starting with . left out, 16 levels at most), each under its path inside
// it, or one file under its base name; of the bundle or of the kernel
// library.
func (s *bundleSource) Files(field, rel string) ([]driver.BundleFile, error) {
	if name, ok, err := libraryName(rel, s.format); ok {
		files, err := readNamed(s, field, name, err, kernels.Files)
		if err != nil {
			return nil, err
		}
		out := make([]driver.BundleFile, len(files))
		for i, f := range files {
			out[i] = driver.BundleFile{Name: f.Path, From: kernels.Prefix + f.Name, Data: f.Data}
		}
		return out, nil
	}
	full, err := inBundle(s.b.Dir, rel)
	if err != nil {
		return nil, s.ferr(field, "%v", err)
	}
	st, err := os.Stat(full)
	if err != nil {
		return nil, s.ferr(field, "%v", err)
	}
	if !st.IsDir() {
		data, err := readLimited(full)
		if err != nil {
			return nil, s.ferr(field, "%v", err)
		}
		return []driver.BundleFile{{Name: path.Base(filepath.ToSlash(rel)), From: full, Data: data}}, nil
	}
	var out []driver.BundleFile
	var walk func(dir, prefix string, depth int) error
	walk = func(dir, prefix string, depth int) error {
		if depth > 16 {
			return s.ferr(field, "%s: directories nested more than 16 deep", dir)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return s.ferr(field, "%v", err)
		}
		for _, e := range entries {
			name := e.Name()
			if strings.HasPrefix(name, ".") {
				continue
			}
			sub, err := inBundle(s.b.Dir, filepath.Join(rel, prefix, name))
			if err != nil {
				return s.ferr(field, "%v", err)
			}
			st, err := os.Stat(sub)
			if err != nil {
				return s.ferr(field, "%v", err)
			}
			if st.IsDir() {
				if err := walk(sub, path.Join(prefix, name), depth+1); err != nil {
					return err
				}
				continue
			}
			data, err := readLimited(sub)
			if err != nil {
				return s.ferr(field, "%v", err)
			}
			out = append(out, driver.BundleFile{Name: path.Join(prefix, name), From: sub, Data: data})
		}
		return nil
	}
	return out, walk(full, "", 0)
}

// bundleEnv is a bundle at one set of var values.
type bundleEnv struct {
	b      *Bundle
	vals   Values
	shapes [][]uint64
}

func (e *bundleEnv) Params() []driver.Param { return (&bundleSource{b: e.b}).Params() }

func (e *bundleEnv) Var(name string) (driver.Constant, bool) {
	i, ok := e.b.VarIndex(name)
	if !ok {
		return driver.Constant{}, false
	}
	return e.vals[i], true
}

func (e *bundleEnv) Shapes() [][]uint64 { return e.shapes }

// Grid evaluates the manifest's grid on the host.
func (e *bundleEnv) Grid() ([]uint64, error) {
	var out []uint64
	for i, g := range e.b.grid {
		v, err := evalHost(g, e.vals)
		if err != nil {
			return nil, &FieldError{e.b.path(ManifestFile), fmt.Sprintf("grid[%d]", i), err}
		}
		out = append(out, v)
	}
	return out, nil
}
