// Package testfiles writes the files a test reads into a fresh temporary
// directory. It is imported only by tests.
package testfiles

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir writes files (slash-separated path inside the directory: contents)
// into a new directory of t's, making parent directories as needed, and
// returns its path. A file that cannot be written fails t.
func Dir(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
