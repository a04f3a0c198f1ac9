package backendtest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// DistinctKeys checks that a cache key covers every input of a build: ref
// and each of its mutations (named by what they change) give keys no other
// of them gives.
func DistinctKeys[In any](t testing.TB, ref In, key func(In) string, mutations map[string]func(*In)) {
	t.Helper()
	seen := map[string]string{key(ref): "reference"}
	for what, mutate := range mutations {
		in := ref
		mutate(&in)
		k := key(in)
		require.NotContains(t, seen, k, "changing the %s gives the key of %s", what, seen[k])
		seen[k] = what
	}
}
