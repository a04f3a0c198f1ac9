package protogen_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/protogen"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := protogen.RepoRoot(wd)
	require.NoError(t, err)
	return root
}

// TestGeneratedFilesAreUpToDate regenerates every file made from
// protocol/protocol.json in memory and compares it with the committed one.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	root := repoRoot(t)
	files, err := protogen.Generate(root)
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, rel := range []string{protogen.GoPath, protogen.CppEnumsPath, protogen.CppFieldsPath, protogen.DocsPath} {
		want, ok := files[rel]
		require.True(t, ok, "Generate makes %s", rel)
		got, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		if string(got) != string(want) {
			t.Errorf("%s is not what %s makes (first difference: %s): run `go generate ./ttruntime`",
				rel, protogen.SchemaPath, firstDifference(string(got), string(want)))
		}
	}
}

// firstDifference names the first line where got and want differ.
func firstDifference(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: has %.100q, the schema makes %.100q", i+1, gl, wl)
		}
	}
	return "none"
}

// TestDriftIsCaught changes a committed file's copy and the schema's copy
// and checks that Stale names exactly the files that no longer match.
func TestDriftIsCaught(t *testing.T) {
	root := repoRoot(t)
	tmp := copyTree(t, root)
	files, err := protogen.Generate(tmp)
	require.NoError(t, err)
	require.Empty(t, protogen.Stale(tmp, files), "a fresh copy is up to date")

	goFile := filepath.Join(tmp, protogen.GoPath)
	src, err := os.ReadFile(goFile)
	require.NoError(t, err)
	edited := strings.Replace(string(src), "`json:\"size\"`", "`json:\"size,omitempty\"`", 1)
	require.NotEqual(t, string(src), edited)
	require.NoError(t, os.WriteFile(goFile, []byte(edited), 0o644))
	require.Equal(t, []string{protogen.GoPath}, protogen.Stale(tmp, files), "a hand edit of the generated Go")

	changed, err := protogen.Write(tmp, files)
	require.NoError(t, err)
	require.Equal(t, []string{protogen.GoPath}, changed, "Write rewrites only what differs")
	require.Empty(t, protogen.Stale(tmp, files))
}
