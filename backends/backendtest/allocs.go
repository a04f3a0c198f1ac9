package backendtest

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// RequireNoAllocs runs each check runs times under testing.AllocsPerRun
// and requires that none fails and none allocates: the proof that a hot
// path (an enqueue, a dispatch, a copy) hands the native library only
// memory that is already on the heap. It skips under the race detector,
// which makes sync.Pool (and so purego's pooled call blocks) drop items
// at random.
func RequireNoAllocs(t *testing.T, runs int, checks map[string]func() error) {
	t.Helper()
	if raceEnabled {
		t.Skip("the race detector makes pooled call blocks allocate")
	}
	names := make([]string, 0, len(checks))
	for name := range checks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var failed error
		allocs := testing.AllocsPerRun(runs, func() {
			if err := checks[name](); err != nil && failed == nil {
				failed = err
			}
		})
		require.NoError(t, failed, name)
		require.Zero(t, allocs, "%s allocates", name)
	}
}
