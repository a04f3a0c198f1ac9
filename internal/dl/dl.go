// Package dl opens native libraries the way every purego backend loads its
// loader or toolkit: lazily and once (Lazy), from a list of candidate
// sonames of which the first that opens and binds wins (OpenFirst), with
// the entry points resolved from a table (Resolve). When no candidate
// works, the error joins every candidate's reason, so a user sees why
// ("libOpenCL.so.1: cannot open shared object file …").
package dl

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// Dlopen is purego.Dlopen with dlopen and its dlerror on one OS thread:
// dlerror's message belongs to the thread, and a goroutine that moved
// between the two calls would read another thread's (most often none, so
// "undefined symbol: vadd" became an empty reason under load).
func Dlopen(path string, mode int) (uintptr, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return purego.Dlopen(path, mode)
}

// ErrNoCandidates is returned when there is no soname to try.
var ErrNoCandidates = errors.New("no library names to try")

// Loader says how OpenFirst opens a library. The zero Loader dlopens with
// RTLD_NOW|RTLD_LOCAL.
type Loader struct {
	// What names the library in the error when no candidate works
	// ("CUDA driver" gives "CUDA driver not loaded: …"). Empty: the joined
	// failures alone.
	What string
	// Global opens with RTLD_GLOBAL, so that libraries loaded later (the
	// CUDA toolkit's) resolve their symbols against this one.
	Global bool
	// Open and Close replace dlopen and dlclose (tests).
	Open  func(name string) (uintptr, error)
	Close func(handle uintptr) error
}

// OpenFirst dlopens each of sonames in turn (RTLD_NOW|RTLD_LOCAL) and calls
// bind with the handle, which resolves the symbols the caller needs. The
// first soname that opens and binds is returned with its handle. A soname
// whose bind fails is closed again. When none works, the error joins every
// failure, each naming its soname ("libOpenCL.so.1: …").
func OpenFirst(sonames []string, bind func(handle uintptr) error) (uintptr, string, error) {
	return Loader{}.OpenFirst(sonames, bind)
}

// OpenFirst opens the first of sonames that opens and binds, as the
// package-level OpenFirst does, with the loader's flags, opener and name.
// Empty and repeated names are skipped; bind may be nil (nothing to
// resolve).
func (o Loader) OpenFirst(sonames []string, bind func(handle uintptr) error) (uintptr, string, error) {
	open, closeLib := o.Open, o.Close
	if open == nil {
		flags := purego.RTLD_NOW | purego.RTLD_LOCAL
		if o.Global {
			flags = purego.RTLD_NOW | purego.RTLD_GLOBAL
		}
		open = func(name string) (uintptr, error) { return Dlopen(name, flags) }
	}
	if closeLib == nil {
		closeLib = purego.Dlclose
	}
	h, name, err := openFirst(sonames, bind, open, closeLib)
	if err != nil && o.What != "" {
		err = fmt.Errorf("%s not loaded: %w", o.What, err)
	}
	return h, name, err
}

func openFirst(sonames []string, bind func(uintptr) error, open func(string) (uintptr, error), closeLib func(uintptr) error) (uintptr, string, error) {
	var errs []error
	seen := map[string]bool{}
	for _, name := range sonames {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		h, err := open(name)
		if err != nil {
			errs = append(errs, naming(name, err))
			continue
		}
		if bind != nil {
			if err := bind(h); err != nil {
				errs = append(errs, naming(name, err))
				_ = closeLib(h)
				continue
			}
		}
		return h, name, nil
	}
	if len(errs) == 0 {
		return 0, "", ErrNoCandidates
	}
	return 0, "", joinLine(errs)
}

// lineJoined is errors joined on one line with "; ": a reason is shown in
// a list of reasons, one a line. errors.Is and As see every one.
type lineJoined []error

func (e lineJoined) Error() string {
	parts := make([]string, len(e))
	for i, err := range e {
		parts[i] = err.Error()
	}
	return strings.Join(parts, "; ")
}

func (e lineJoined) Unwrap() []error { return e }

// joinLine joins errs into one error of one line; nil for none.
func joinLine(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return lineJoined(errs)
}

// naming is err prefixed with the soname, unless the message starts with
// it already (the dynamic loader's own messages do).
func naming(name string, err error) error {
	if strings.HasPrefix(err.Error(), name+":") {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Symbol is an entry point and where its address goes.
type Symbol struct {
	Addr *uintptr
	Name string
	// Alt are names tried after Name, in order: a legacy name after a
	// versioned one ("cuEventElapsedTime" after "cuEventElapsedTime_v2").
	Alt []string
	// Optional symbols may be missing; their address is then zero.
	Optional bool
}

// Resolve looks every symbol up in the library handle and stores its
// address. Every missing required symbol is reported, joined ("symbol
// clFinish: …"); a missing one's address is set to zero.
func Resolve(handle uintptr, syms []Symbol) error {
	return resolve(syms, func(name string) (uintptr, error) { return purego.Dlsym(handle, name) })
}

var errNullSymbol = errors.New("null address")

func resolve(syms []Symbol, lookup func(string) (uintptr, error)) error {
	var errs []error
	for _, s := range syms {
		*s.Addr = 0
		var failed []error
		for _, name := range append([]string{s.Name}, s.Alt...) {
			p, err := lookup(name)
			if err == nil && p == 0 {
				err = errNullSymbol
			}
			if err == nil {
				*s.Addr = p
				break
			}
			failed = append(failed, fmt.Errorf("symbol %s: %w", name, err))
		}
		if *s.Addr == 0 && !s.Optional {
			errs = append(errs, failed...)
		}
	}
	return joinLine(errs)
}

// Library is an opened library: its handle and the soname that opened it.
// A binding table embeds it, and OpenTable fills it in.
type Library struct {
	Handle uintptr
	Name   string
}

func (l *Library) opened(handle uintptr, name string) { l.Handle, l.Name = handle, name }

// Table is a library's binding table: a struct that embeds Library and
// whose Bind resolves the entry points it holds from a library handle
// (with Resolve).
type Table interface {
	Bind(handle uintptr) error
	opened(handle uintptr, name string)
}

// OpenTable opens the first of sonames that opens and binds into t, as
// OpenFirst does, records the handle and soname in t and returns it: the
// open of a loader such as OpenCL's or Vulkan's, whose symbols all bind
// into one table.
func OpenTable[T Table](sonames []string, t T) (T, error) {
	h, name, err := OpenFirst(sonames, t.Bind)
	if err != nil {
		var zero T
		return zero, err
	}
	t.opened(h, name)
	return t, nil
}

// Lazy is a library loaded on first use, once: every later call gets the
// same value or the same error, so a missing library is looked for only
// once per process. The zero Lazy is ready to use.
type Lazy[T any] struct {
	once sync.Once
	val  T
	err  error
}

// Load returns the loaded library, calling open on the first call only.
func (l *Lazy[T]) Load(open func() (T, error)) (T, error) {
	l.once.Do(func() { l.val, l.err = open() })
	return l.val, l.err
}
