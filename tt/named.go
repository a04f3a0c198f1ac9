package tt

import (
	"errors"
	"fmt"
	"slices"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/kernels"
)

// ArgNames makes kernel args that name the program's params, as tt.json's
// args do ({"kind": "buffer_addr", "param": "x"}), so a Go program need
// not count param ordinals:
//
//	a := tt.Named(prog.Params)
//	reader.RuntimeArgs = []tt.Arg{a.BufferAddr("x"), a.PageSize("x"), a.Param("n"), tt.CoreIndex(), tt.NumCores()}
//	if err := a.Err(); err != nil { … }
//
// A name the params do not have, or a param of the wrong kind, is an
// error that Err reports (every one, naming the arg); the arg it made
// refers to no param and must not be used.
type ArgNames struct {
	params []driver.Param
	errs   []error
}

// Named makes args over params (the program's, in launch order).
func Named(params []driver.Param) *ArgNames { return &ArgNames{params: slices.Clone(params)} }

// Err is every naming mistake made so far, joined; nil when there is none.
func (a *ArgNames) Err() error { return errors.Join(a.errs...) }

func (a *ArgNames) param(kind ArgKind, name string, buffer bool) Arg {
	for i, p := range a.params {
		if p.Name != name {
			continue
		}
		if p.Kind.IsBuffer() != buffer {
			want := "a variable"
			if buffer {
				want = "a buffer"
			}
			a.errs = append(a.errs, fmt.Errorf("%w: %s arg: param %q is not %s", driver.ErrInvalidArgument, kind, name, want))
			return Arg{Kind: kind, Param: -1}
		}
		return Arg{Kind: kind, Param: i}
	}
	a.errs = append(a.errs, fmt.Errorf("%w: %s arg: no param named %q (%s)", driver.ErrInvalidArgument, kind, name, paramNames(a.params)))
	return Arg{Kind: kind, Param: -1}
}

func paramNames(params []driver.Param) string {
	names := make([]string, len(params))
	for i, p := range params {
		names[i] = p.Name
	}
	return fmt.Sprint(names)
}

// Param is the value of variable param name.
func (a *ArgNames) Param(name string) Arg { return a.param(ArgParam, name, false) }

// BufferAddr is the device address of buffer param name.
func (a *ArgNames) BufferAddr(name string) Arg { return a.param(ArgBufferAddr, name, true) }

// BufferSize is the byte size of buffer param name on the device.
func (a *ArgNames) BufferSize(name string) Arg { return a.param(ArgBufferSize, name, true) }

// Pages is the page count of buffer param name.
func (a *ArgNames) Pages(name string) Arg { return a.param(ArgPages, name, true) }

// PageSize is the page size of buffer param name.
func (a *ArgNames) PageSize(name string) Arg { return a.param(ArgPageSize, name, true) }

// Accessor is the tensor-accessor args of buffer param name (compile args).
func (a *ArgNames) Accessor(name string) Arg { return a.param(ArgAccessor, name, true) }

// Value is a const arg: an expression in tt.json's syntax over the
// variable params by name and, in runtime args, the per-core terms
// ("ceil_div(n, 1024)", "core_index * 4").
func (a *ArgNames) Value(expr string) Arg {
	d, err := driver.ParseGws(expr, func(name string) (int, bool) {
		i := slices.IndexFunc(a.params, func(p driver.Param) bool { return p.Name == name && p.Kind == driver.Variable })
		return i, i >= 0
	})
	if err != nil {
		a.errs = append(a.errs, fmt.Errorf("%w: const arg: %w", driver.ErrInvalidArgument, err))
	}
	return Arg{Kind: ArgConst, Value: d}
}

// CoreIndex is this core's index among the kernel's cores.
func CoreIndex() Arg { return Arg{Kind: ArgCoreIndex} }

// NumCores is the number of cores the kernel runs on.
func NumCores() Arg { return Arg{Kind: ArgNumCores} }

// CoreRow and CoreCol are this core's logical row and column.
func CoreRow() Arg { return Arg{Kind: ArgCoreRow} }

// CoreCol is this core's logical column.
func CoreCol() Arg { return Arg{Kind: ArgCoreCol} }

// LibraryKernel is a kernel whose source is name in the kernel library
// ("tt/dataflow/read_chunks_binary.cpp", as a bundle names it after
// "zyx:"). A program with library kernels also needs LibraryIncludes.
func LibraryKernel(name string) (Kernel, error) {
	src, err := kernels.Read(name)
	if err != nil {
		return Kernel{}, err
	}
	return Kernel{Name: name, Source: string(src)}, nil
}
