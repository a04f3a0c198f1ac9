// Package bundle loads program bundles: a directory with a manifest.json and
// one variant file per backend (docs/programs.md), turned into
// backends.Program values, buffer shapes, input data and a float64 host
// reference.
package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/strictjson"
)

// ManifestFile is the name of a bundle's manifest.
const ManifestFile = "manifest.json"

// maxFileBytes bounds every file a bundle names; sources and manifests are
// small, and a bound keeps a wrong path (a device file) from eating memory.
const maxFileBytes = 64 << 20

// ErrBundle marks a bundle that cannot be loaded; the error text names the
// file, the field and what was wrong.
var ErrBundle = errors.New("bad bundle")

// FieldError is a problem with one field of one bundle file.
type FieldError struct {
	File  string // the file's path as given to Load joined with its name
	Field string // a path such as params[2].dtype; empty for the whole file
	Err   error
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Err.Error()
	}
	return e.File + ": " + e.Field + ": " + e.Err.Error()
}

func (e *FieldError) Unwrap() []error { return []error{ErrBundle, e.Err} }

// Var is a bundle variable: a size or scalar knob with a default.
type Var struct {
	Name    string
	DType   backends.DType
	Default backends.Constant
	// Param is the ordinal of the Variable param of the same name, or -1.
	Param int
}

// Param is a program parameter with its shape.
type Param struct {
	backends.Param
	// Shape is the buffer's shape as expressions over var ordinals (nil for
	// a Variable param).
	Shape []backends.GwsDim
	// ShapeSrc is the shape as written in the manifest.
	ShapeSrc []string
}

// Bundle is a loaded bundle.
type Bundle struct {
	Dir         string
	Name        string
	Description string
	Vars        []Var
	Params      []Param
	// Inputs is the default generator spec per buffer param ordinal; files
	// are resolved against Dir.
	Inputs map[int]string
	// Outputs are the ordinals of the result params.
	Outputs []int
	// Ref is the float64 host reference, nil when the bundle has none.
	Ref *Reference

	grid     []backends.GwsDim // manifest grid over var ordinals
	variants map[backends.Format]*variant
}

// variant is one parsed variant file.
type variant struct {
	file   string
	format backends.Format
	grid   []backends.GwsDim // nil: the manifest's
	source *backends.SourceVariant
	spirv  *backends.SPIRVVariant
	gemm   *gemmSpec
	own    driver.BundleVariant // a format that reads its own file
}

// Load reads and checks a bundle directory: the manifest, every variant file
// present and every source they name.
func Load(dir string) (*Bundle, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("bundle %s: %w: not a directory", dir, ErrBundle)
	}
	mpath := filepath.Join(dir, ManifestFile)
	data, err := readLimited(mpath)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", dir, err)
	}
	b, err := ParseManifest(data, mpath)
	if err != nil {
		return nil, err
	}
	b.Dir = dir
	for id, spec := range b.Inputs {
		if isFileSpec(spec) && !filepath.IsAbs(spec) {
			p, err := inBundle(dir, spec)
			if err != nil {
				return nil, &FieldError{mpath, "inputs." + b.Params[id].Name, err}
			}
			b.Inputs[id] = p
		}
	}
	if b.Ref != nil && b.Ref.Op == "file" && !filepath.IsAbs(b.Ref.Path) {
		p, err := inBundle(dir, b.Ref.Path)
		if err == nil {
			_, err = os.Stat(p)
		}
		if err != nil {
			return nil, &FieldError{mpath, "reference.path", err}
		}
		b.Ref.Path = p
	}
	b.variants = map[backends.Format]*variant{}
	var files []string
	for _, fi := range backends.Formats() {
		files = append(files, fi.File)
		vpath := filepath.Join(dir, fi.File)
		data, err := readLimited(vpath)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("bundle %s: %w", dir, err)
		}
		v, err := b.parseVariant(fi, vpath, data)
		if err != nil {
			return nil, err
		}
		b.variants[fi.Name] = v
	}
	if len(b.variants) == 0 {
		return nil, &FieldError{File: dir, Err: fmt.Errorf("no variant files (want one of %s)", strings.Join(files, ", "))}
	}
	// Build the program once with the defaults, so that a bad expression or
	// reference is reported at load, not at launch.
	vals := b.Defaults()
	if _, err := b.Program(vals); err != nil {
		return nil, err
	}
	shapes, err := b.Shapes(vals)
	if err != nil {
		return nil, err
	}
	if err := b.Ref.Check(b, vals, shapes); err != nil {
		return nil, err
	}
	return b, nil
}

// openRegular opens path for reading and refuses anything but a regular
// file: a FIFO or a device would block the reader or never end. The open
// itself does not block (O_NONBLOCK), so a FIFO without a writer is refused
// rather than waited on; the check is on the descriptor opened (fstat), so
// the path cannot be swapped in between. kind is the sentinel the refusal
// wraps: ErrBundle for a file of a bundle, ErrInvalidArgument for a data
// file named on its own.
func openRegular(path string, kind error) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		// A socket cannot be opened at all (ENXIO): say what it is.
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, notRegular(path, st.Mode(), kind)
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, notRegular(path, st.Mode(), kind)
	}
	return f, nil
}

func notRegular(path string, mode fs.FileMode, kind error) error {
	what := "a " + mode.Type().String()
	switch {
	case mode.IsDir():
		what = "a directory"
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode&fs.ModeCharDevice != 0:
		what = "a character device"
	case mode&fs.ModeDevice != 0:
		what = "a block device"
	}
	return fmt.Errorf("%w: %s is not a regular file (it is %s)", kind, path, what)
}

func readLimited(path string) ([]byte, error) {
	f, err := openRegular(path, ErrBundle)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("%s: %w: larger than %d bytes", path, ErrBundle, maxFileBytes)
	}
	return data, nil
}

// inBundle resolves a relative path inside dir, refusing absolute paths and
// paths that leave the bundle, also through a symbolic link.
func inBundle(dir, rel string) (string, error) {
	if rel == "" {
		return "", errors.New("empty path")
	}
	if filepath.IsAbs(rel) || !filepath.IsLocal(rel) {
		return "", fmt.Errorf("path %q must be relative and stay inside the bundle", rel)
	}
	p := filepath.Join(dir, rel)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return p, nil // reported by whoever opens it
	}
	if err != nil {
		return "", err
	}
	if r, err := filepath.Rel(root, real); err != nil || !filepath.IsLocal(r) {
		return "", fmt.Errorf("path %q leads outside the bundle (to %s, through a symbolic link)", rel, real)
	}
	return p, nil
}

// decodeStrict decodes one JSON object strictly (strictjson.Decode) into
// v; an error names the file and the field.
func decodeStrict(data []byte, file string, v any) error {
	if err := strictjson.Decode(data, v); err != nil {
		var fe *strictjson.Error
		if errors.As(err, &fe) {
			return &FieldError{file, fe.Field, fe.Err}
		}
		return &FieldError{File: file, Err: err}
	}
	return nil
}

// ParamIndex returns the ordinal of the named param.
func (b *Bundle) ParamIndex(name string) (int, bool) {
	for i, p := range b.Params {
		if p.Name == name {
			return i, true
		}
	}
	return -1, false
}

// VarIndex returns the ordinal of the named var.
func (b *Bundle) VarIndex(name string) (int, bool) {
	for i, v := range b.Vars {
		if v.Name == name {
			return i, true
		}
	}
	return -1, false
}
