// Package leakcheck ends a test binary with a failure when its tests,
// having passed, left a goroutine running or a shm segment of this process
// behind: the checks the tt and ttruntime test binaries share.
package leakcheck

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/zyxtt/zyxtt/shm"
)

// Run runs m's tests, then cleanup (when not nil), and returns the tests'
// exit status, or 1 when they passed but left a goroutine running or a
// segment named for this process in the shm directory that was not there
// before they ran (a dead process with our pid may have left some).
func Run(m *testing.M, cleanup func()) int {
	before := ownSegments(nil)
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	if code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "goroutine leak:", err)
		code = 1
	}
	if left := ownSegments(before); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "shm segments left behind:", left)
		code = 1
	}
	return code
}

// ownSegments lists the shm segments named for this process that are not
// in before.
func ownSegments(before []string) []string {
	ents, _ := os.ReadDir(shm.DefaultDir())
	var out []string
	prefix := fmt.Sprintf("%s%d-", shm.Prefix, os.Getpid())
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && !slices.Contains(before, e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}
