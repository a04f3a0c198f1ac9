package dl

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenFirst(t *testing.T) {
	errMissing := errors.New("cannot open shared object file")
	errBind := errors.New("missing symbol f")
	libs := map[string]uintptr{"libgood.so": 2, "libnosym.so": 1, "libgood2.so": 3}
	open := func(name string) (uintptr, error) {
		if h, ok := libs[name]; ok {
			return h, nil
		}
		return 0, errMissing
	}
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
			"libnone.so: cannot open shared object file\nlibnosym.so: missing symbol f"},
		{"nothing to try", nil, "", 0, nil, []error{ErrNoCandidates}, "no library names to try"},
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
}

func TestResolve(t *testing.T) {
	errMissing := errors.New("undefined symbol")
	table := map[string]uintptr{"f": 10, "g": 20}
	lookup := func(name string) (uintptr, error) {
		if p, ok := table[name]; ok {
			return p, nil
		}
		return 0, errMissing
	}
	var f, g, h, k uintptr
	require.NoError(t, resolve([]Symbol{{Addr: &f, Name: "f"}, {Addr: &g, Name: "g"}}, lookup))
	require.Equal(t, []uintptr{10, 20}, []uintptr{f, g})
	err := resolve([]Symbol{{&h, "h"}, {&f, "f"}, {&k, "k"}}, lookup)
	require.ErrorIs(t, err, errMissing)
	require.EqualError(t, err, "symbol h: undefined symbol\nsymbol k: undefined symbol", "every missing symbol is named")
	require.Zero(t, h)
}
