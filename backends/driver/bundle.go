package driver

import "github.com/zyxtt/zyxtt/internal/strictjson"

// Bundle files of a driver's own format. Package bundle reads the files of
// the built-in formats (c.json, gemm.json, …) itself; a format whose code
// type implements BundleVariant reads its own file (docs/programs.md): the
// format's driver alone interprets it.

// BundleVariant is an optional interface of a format's code type (a pointer
// type): the loader decodes the format's bundle file into a new value with
// LoadBundle, once per bundle, and binds it with BindBundle for each set of
// var values.
type BundleVariant interface {
	// LoadBundle decodes the file's bytes. Expressions stay over the
	// bundle's vars; an error is a *FieldError naming the JSON path.
	LoadBundle(src BundleSource, data []byte) error
	// BindBundle is the variant at env's var values: its code (of the
	// format's code type) and the variant's own grid (nil: the manifest's).
	BindBundle(env BundleEnv) (code any, grid []GwsDim, err error)
}

// BundleSource is what a variant file may read of its bundle while it
// loads.
type BundleSource interface {
	// Params are the program's params in launch order.
	Params() []Param
	// ParamIndex is the ordinal of the param named name.
	ParamIndex(name string) (int, bool)
	// VarIndex is the ordinal of the var named name.
	VarIndex(name string) (int, bool)
	// ReadFile reads the file rel the variant names at field: a path
	// relative to the bundle, or a file of the kernel library
	// ("zyx:<format>/…").
	ReadFile(field, rel string) ([]byte, error)
	// Files are the files rel names at field: every file below a
	// directory, each under its path inside it, or one file under its base
	// name; of the bundle or of the kernel library.
	Files(field, rel string) ([]BundleFile, error)
}

// BundleFile is one file a variant reads: its name as the variant uses it
// (an include path), where it came from (for messages) and its bytes.
type BundleFile struct {
	Name, From string
	Data       []byte
}

// BundleEnv is a bundle at one set of var values.
type BundleEnv interface {
	// Params are the program's params in launch order.
	Params() []Param
	// Var is the value of the var named name.
	Var(name string) (Constant, bool)
	// Shapes are the buffer params' shapes at these values (nil for the
	// scalar params).
	Shapes() [][]uint64
	// Grid is the manifest's grid at these values; nil when it has none.
	Grid() ([]uint64, error)
}

// FieldError is a problem with one field of a variant file: Field is its
// JSON path ("kernels[2].cores"); the loader adds the file. It is the
// error of strict JSON decoding, so such an error needs no conversion.
type FieldError = strictjson.Error
