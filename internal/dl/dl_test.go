package dl

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// fromTable is a fake dlopen or dlsym: the handle or address table holds
// for a name, else missing.
func fromTable(table map[string]uintptr, missing error) func(name string) (uintptr, error) {
	return func(name string) (uintptr, error) {
		if h, ok := table[name]; ok {
			return h, nil
		}
		return 0, missing
	}
}

func TestOpenFirst(t *testing.T) {
	errMissing := errors.New("cannot open shared object file")
	errBind := errors.New("missing symbol f")
	libs := map[string]uintptr{"libgood.so": 2, "libnosym.so": 1, "libgood2.so": 3}
	open := fromTable(libs, errMissing)
	bind := func(h uintptr) error {
		if h == 1 {
			return errBind
		}
		return nil
	}
	for _, tc := range []struct {
		name     string
		sonames  []string
		wantName string
		wantH    uintptr
		closed   []uintptr
		errs     []error
		msg      string
	}{
		{"first opens", []string{"libgood.so", "libgood2.so"}, "libgood.so", 2, nil, nil, ""},
		{"falls through missing and unbindable", []string{"libnone.so", "libnosym.so", "libgood2.so"}, "libgood2.so", 3, []uintptr{1}, nil, ""},
		{"none works", []string{"libnone.so", "libnosym.so"}, "", 0, []uintptr{1}, []error{errMissing, errBind},
			"libnone.so: cannot open shared object file; libnosym.so: missing symbol f"},
		{"nothing to try", nil, "", 0, nil, []error{ErrNoCandidates}, "no library names to try"},
		{"only empty names", []string{"", ""}, "", 0, nil, []error{ErrNoCandidates}, "no library names to try"},
		{"empty and repeated names are tried once", []string{"", "libnosym.so", "libnone.so", "libnosym.so", "libnone.so"}, "", 0, []uintptr{1},
			[]error{errMissing, errBind}, "libnosym.so: missing symbol f; libnone.so: cannot open shared object file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var closed []uintptr
			h, name, err := openFirst(tc.sonames, bind, open, func(h uintptr) error { closed = append(closed, h); return nil })
			require.Equal(t, tc.wantH, h)
			require.Equal(t, tc.wantName, name)
			require.Equal(t, tc.closed, closed, "a library that does not bind is closed")
			if tc.errs == nil {
				require.NoError(t, err)
				return
			}
			for _, e := range tc.errs {
				require.ErrorIs(t, err, e)
			}
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestOpenFirstRealLoader(t *testing.T) {
	_, _, err := OpenFirst([]string{"libzyx-no-such-library.so.9"}, func(uintptr) error { return nil })
	require.ErrorContains(t, err, "libzyx-no-such-library.so.9", "the failure names the soname")
	require.Equal(t, 1, strings.Count(err.Error(), "libzyx-no-such-library.so.9"), "the loader's message names it already: no second prefix")
}

func TestLoader(t *testing.T) {
	var tried []string
	open := func(name string) (uintptr, error) {
		tried = append(tried, name)
		switch name {
		case "liba.so.1":
			return 0, errors.New("liba.so.1: cannot open shared object file: No such file or directory")
		case "/opt/libb.so":
			return 0, errors.New("wrong ELF class: ELFCLASS32")
		case "libc.so":
			return 7, nil
		}
		return 0, errors.New("not found")
	}
	l := Loader{What: "thing", Open: open, Close: func(uintptr) error { return nil }}
	_, _, err := l.OpenFirst([]string{"liba.so.1", "", "/opt/libb.so", "liba.so.1"}, nil)
	require.Equal(t, []string{"liba.so.1", "/opt/libb.so"}, tried)
	require.EqualError(t, err, "thing not loaded: liba.so.1: cannot open shared object file: No such file or directory; /opt/libb.so: wrong ELF class: ELFCLASS32",
		"a message that names its file keeps it once; one that does not gets the name")
	h, name, err := l.OpenFirst([]string{"/opt/libb.so", "libc.so"}, nil)
	require.NoError(t, err, "a nil bind accepts the first that opens")
	require.Equal(t, uintptr(7), h)
	require.Equal(t, "libc.so", name)
	_, _, err = l.OpenFirst([]string{"libc.so"}, func(uintptr) error { return errors.New("symbol f: libc.so: undefined symbol: f") })
	require.EqualError(t, err, "thing not loaded: libc.so: symbol f: libc.so: undefined symbol: f",
		"a message that names the file only inside still gets the name in front")
	_, _, err = l.OpenFirst(nil, nil)
	require.ErrorIs(t, err, ErrNoCandidates)
	require.EqualError(t, err, "thing not loaded: no library names to try")
}

func TestLoaderGlobalOpensRealLibrary(t *testing.T) {
	// libc is on every host these tests run on; RTLD_GLOBAL must open it
	// and bind must see its symbols.
	var strlen uintptr
	for _, l := range []Loader{{}, {Global: true}} {
		h, name, err := l.OpenFirst([]string{"libzyx-no-such-library.so.9", "libc.so.6"}, func(h uintptr) error {
			return Resolve(h, []Symbol{{Addr: &strlen, Name: "strlen"}})
		})
		require.NoError(t, err)
		require.Equal(t, "libc.so.6", name)
		require.NotZero(t, h)
		require.NotZero(t, strlen)
	}
}

func TestResolve(t *testing.T) {
	errMissing := errors.New("undefined symbol")
	table := map[string]uintptr{"f": 10, "g": 20}
	lookup := fromTable(table, errMissing)
	var f, g, h, k uintptr
	require.NoError(t, resolve([]Symbol{{Addr: &f, Name: "f"}, {Addr: &g, Name: "g"}}, lookup))
	require.Equal(t, []uintptr{10, 20}, []uintptr{f, g})
	err := resolve([]Symbol{{Addr: &h, Name: "h"}, {Addr: &f, Name: "f"}, {Addr: &k, Name: "k"}}, lookup)
	require.ErrorIs(t, err, errMissing)
	require.EqualError(t, err, "symbol h: undefined symbol; symbol k: undefined symbol", "every missing symbol is named")
	require.Zero(t, h)
}

func TestResolveAlternativesAndOptional(t *testing.T) {
	errMissing := errors.New("undefined symbol")
	table := map[string]uintptr{"f_v2": 10, "g": 20, "null": 0}
	lookup := fromTable(table, errMissing)
	f, g, opt, stale := uintptr(0), uintptr(0), uintptr(0), uintptr(99)
	require.NoError(t, resolve([]Symbol{
		{Addr: &f, Name: "f_v2", Alt: []string{"f"}},
		{Addr: &g, Name: "g_v2", Alt: []string{"g"}},
		{Addr: &opt, Name: "h", Optional: true},
		{Addr: &stale, Name: "k", Optional: true},
	}, lookup))
	require.Equal(t, uintptr(10), f, "the first name wins")
	require.Equal(t, uintptr(20), g, "an alternative is taken when the first name is missing")
	require.Zero(t, opt, "a missing optional symbol is zero")
	require.Zero(t, stale, "a missing optional symbol clears an address left from another library")

	err := resolve([]Symbol{{Addr: &f, Name: "null"}, {Addr: &g, Name: "x_v2", Alt: []string{"x"}}}, lookup)
	require.ErrorIs(t, err, errNullSymbol)
	require.ErrorIs(t, err, errMissing)
	require.EqualError(t, err, "symbol null: null address; symbol x_v2: undefined symbol; symbol x: undefined symbol", "every name tried is reported")
}

func TestLazyLoadsOnce(t *testing.T) {
	var l Lazy[int]
	calls := 0
	errGone := errors.New("gone")
	open := func() (int, error) { calls++; return 0, errGone }
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, err := l.Load(open)
			require.ErrorIs(t, err, errGone)
		})
	}
	wg.Wait()
	_, err := l.Load(func() (int, error) { return 5, nil })
	require.ErrorIs(t, err, errGone, "a failure is kept")
	require.Equal(t, 1, calls)

	var ok Lazy[string]
	v, err := ok.Load(func() (string, error) { return "lib", nil })
	require.NoError(t, err)
	require.Equal(t, "lib", v)
}

// table is a binding table of one entry point.
type table struct {
	Library
	fnGetpid uintptr
}

func (t *table) Bind(h uintptr) error {
	return Resolve(h, []Symbol{{Addr: &t.fnGetpid, Name: "getpid"}})
}

func TestOpenTable(t *testing.T) {
	tb, err := OpenTable([]string{"libzyx-no-such-library.so.9", "libc.so.6"}, &table{})
	require.NoError(t, err)
	require.Equal(t, "libc.so.6", tb.Name, "the soname that opened is recorded")
	require.NotZero(t, tb.Handle)
	require.NotZero(t, tb.fnGetpid, "Bind ran on the handle")

	tb, err = OpenTable([]string{"libzyx-no-such-library.so.9"}, &table{})
	require.ErrorContains(t, err, "libzyx-no-such-library.so.9")
	require.Nil(t, tb)
}
