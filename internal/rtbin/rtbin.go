// Package rtbin finds the zyx-tt-runtime that `make runtime` builds in this
// repository (bin/zyx-tt-runtime), for the tests that drive the C++
// runtime; each package's tests would otherwise count their own way up to
// the repository's root.
package rtbin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/core"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// Path is the absolute path of bin/zyx-tt-runtime in the repository that
// holds the working directory (go test runs in the package's directory):
// the nearest directory at or above it that has a go.mod. It does not
// check that the file is there.
func Path() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("rtbin: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin", ttruntime.RuntimeName), nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("rtbin: no go.mod at or above the working directory")
		}
		dir = up
	}
}

// Check says whether the file at path can be run as the runtime: nil for
// a regular file with an execute bit, else an error naming path.
func Check(path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !st.Mode().IsRegular() || st.Mode()&0o111 == 0:
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}

// Built is Path when Check accepts the file there, else an error that
// names it and says how to build it.
func Built() (string, error) {
	p, err := Path()
	if err != nil {
		return "", err
	}
	if err := Check(p); err != nil {
		return "", fmt.Errorf("%s not built (run make runtime): %w", p, err)
	}
	return p, nil
}

// Require is Built, or a skip of tb that says what is missing.
func Require(tb testing.TB) string {
	tb.Helper()
	p, err := Built()
	if err != nil {
		tb.Skip(err.Error())
	}
	return p
}

// HoldLine is what a runtime in mock mode writes to stderr when it holds
// request n (hold-at): it has read the request whole and waits for
// Release.
func HoldLine(n int) string { return fmt.Sprintf("mock: holding request %d until SIGUSR1", n) }

// Release lets the runtime of pid, which the caller started in mock mode,
// go on with the request it holds (SIGUSR1; one sent before the hold
// releases it as soon as it comes).
func Release(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("rtbin: release the runtime (pid %d): %w", pid, err)
	}
	return nil
}

// RequireRunErrorAt waits for each of ws in order, the outcomes of a row of
// requests to a runtime in mock mode with error-code=run_error: the one at
// index failing is that error reply (a *ttruntime.RemoteError with
// CodeRunError), which does not lose the device; every other succeeded.
func RequireRunErrorAt[W interface{ Wait(context.Context) error }](tb testing.TB, ctx context.Context, ws []W, failing int) {
	tb.Helper()
	require.Greater(tb, len(ws), failing, "the failing request is one of them")
	for i, w := range ws {
		err := w.Wait(ctx)
		if i != failing {
			require.NoError(tb, err, "request %d", i)
			continue
		}
		var re *ttruntime.RemoteError
		require.ErrorAs(tb, err, &re)
		require.Equal(tb, ttruntime.CodeRunError, re.Code)
		require.NotErrorIs(tb, err, core.ErrDeviceLost)
	}
}

// RequireAnswered checks that each of ws, requests sent before a Close that
// drains what is in flight, has already ended, and succeeded.
func RequireAnswered[W interface {
	Done() <-chan struct{}
	Err() error
}](tb testing.TB, ws []W) {
	tb.Helper()
	for i, w := range ws {
		select {
		case <-w.Done():
		default:
			tb.Fatalf("request %d still pending after Close", i)
		}
		require.NoError(tb, w.Err(), "request %d was answered", i)
	}
}
