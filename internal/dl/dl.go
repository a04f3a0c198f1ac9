// Package dl opens a native library from a list of candidate sonames, the
// way the purego backends load their loaders: the first that opens and
// binds wins, and when none does the error joins every candidate's reason.
package dl

import (
	"errors"
	"fmt"

	"github.com/ebitengine/purego"
)

// ErrNoCandidates is returned when there is no soname to try.
var ErrNoCandidates = errors.New("no library names to try")

// OpenFirst dlopens each of sonames in turn (RTLD_NOW|RTLD_LOCAL) and calls
// bind with the handle, which resolves the symbols the caller needs. The
// first soname that opens and binds is returned with its handle. A soname
// whose bind fails is closed again. When none works, the error joins every
// failure, each prefixed with its soname ("libOpenCL.so.1: …").
func OpenFirst(sonames []string, bind func(handle uintptr) error) (uintptr, string, error) {
	return openFirst(sonames, bind, dlopen, purego.Dlclose)
}

func dlopen(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func openFirst(sonames []string, bind func(uintptr) error, open func(string) (uintptr, error), closeLib func(uintptr) error) (uintptr, string, error) {
	if len(sonames) == 0 {
		return 0, "", ErrNoCandidates
	}
	var errs []error
	for _, name := range sonames {
		h, err := open(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		if err := bind(h); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			_ = closeLib(h)
			continue
		}
		return h, name, nil
	}
	return 0, "", errors.Join(errs...)
}

// Symbol is a required symbol and where its address goes.
type Symbol struct {
	Addr *uintptr
	Name string
}

// Resolve looks every symbol up in the library handle and stores its
// address. Every missing symbol is reported, joined ("symbol clFinish: …").
func Resolve(handle uintptr, syms []Symbol) error {
	return resolve(syms, func(name string) (uintptr, error) { return purego.Dlsym(handle, name) })
}

func resolve(syms []Symbol, lookup func(string) (uintptr, error)) error {
	var errs []error
	for _, s := range syms {
		p, err := lookup(s.Name)
		if err != nil {
			errs = append(errs, fmt.Errorf("symbol %s: %w", s.Name, err))
			continue
		}
		*s.Addr = p
	}
	return errors.Join(errs...)
}
