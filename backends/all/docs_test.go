package all_test

import (
	"go/format"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// docs/api.md's three programs are the examples: each program's main body
// is its example's body (less the Output comment), each program is gofmt'd
// and the vector add is at most 35 lines.
func TestDocsProgramsAreTheExamples(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	require.NoError(t, err)
	section := string(doc)
	i := strings.Index(section, "## Three programs")
	require.GreaterOrEqual(t, i, 0, "docs/api.md has no Three programs section")
	section = section[i:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(section, -1)
	require.Len(t, blocks, 3)
	ex, err := os.ReadFile("example_test.go")
	require.NoError(t, err)
	for k, name := range []string{"Example_vectorAdd", "Example_pipeline", "Example_tenstorrent"} {
		prog := blocks[k][1]
		formatted, err := format.Source([]byte(prog))
		require.NoError(t, err, name)
		require.Equal(t, string(formatted), prog, "%s: docs program is not gofmt'd", name)
		require.Equal(t, body(t, string(ex), name), body(t, prog, "main"), "docs program %d differs from %s", k+1, name)
		if name == "Example_vectorAdd" {
			require.LessOrEqual(t, strings.Count(prog, "\n"), 35, "the vector add is at most 35 lines")
		}
	}
}

// body is the text of function name's body in src, without Output lines.
func body(t *testing.T, src, name string) string {
	t.Helper()
	start := strings.Index(src, "\nfunc "+name+"() {\n")
	require.GreaterOrEqual(t, start, 0, "no func %s", name)
	rest := src[start+len("\nfunc "+name+"() {\n"):]
	end := strings.Index(rest, "\n}\n")
	require.GreaterOrEqual(t, end, 0)
	var lines []string
	for _, l := range strings.Split(rest[:end], "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "// Output") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
