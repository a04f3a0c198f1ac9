package protogen_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/protogen"
)

// The program's rules are written once per language (docs/architecture.md,
// "One program model"). These checks read the sources for the two rules
// that were once written in six places: the circular-buffer index bound,
// which comes from the schema's circular_buffers_per_core limit, and the
// rule that the ranges of a core range set do not overlap, which only the
// runtime's validator (cpp/src/validate.cpp) checks.

// cbBoundLiteral matches a circular-buffer index bound written as a number:
// an index compared with 32 or 31, an array of 32 CBs, or the range 0-31
// spelled out.
var cbBoundLiteral = regexp.MustCompile(`(?i)((index|idx|\bid|cb\w*)\s*(>=|<)\s*32\b|(index|idx|\bid|cb\w*)\s*(>|<=)\s*31\b|` +
	`circularbuffer\w*\s*,\s*32\s*>|cb\w*\s*\[\s*32\s*\]|\b0-31\b)`)

// rangeOverlapCheck matches a line that reports overlapping ranges.
var rangeOverlapCheck = regexp.MustCompile(`(?i)(fail|throw|errorf|invalid|bad)\s*\(.*overlap|overlap.*range|range.*overlap`)

// ruleSources are the non-test, non-generated source files of the product, by path, as lines.
func ruleSources(t *testing.T, root string) map[string][]string {
	t.Helper()
	files := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case ".git", "build", "bin", "examples", "kernels", "bench", "protocol":
				return filepath.SkipDir
			}
			// The root is walked whatever its name (a checkout may be called
			// build-something).
			if rel != "." && (d.Name() == "tests" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "build") ||
				strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if ext != ".go" && ext != ".cpp" && ext != ".hpp" && ext != ".h" {
			return nil
		}
		if strings.HasSuffix(path, "_test.go") || strings.Contains(filepath.Base(path), "_gen.") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = strings.Split(string(data), "\n")
		return nil
	})
	require.NoError(t, err)
	return files
}

func isComment(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "//") || strings.HasPrefix(l, "*") || strings.HasPrefix(l, "/*")
}

// matches lists "file:line: text" for each code line that re matches.
func matches(files map[string][]string, re *regexp.Regexp) []string {
	var out []string
	for name, lines := range files {
		for i, line := range lines {
			if !isComment(line) && re.MatchString(line) {
				out = append(out, name+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
	}
	return out
}

func TestCBIndexBoundWrittenOnce(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, protogen.SchemaPath))
	require.NoError(t, err)
	s, err := protogen.Parse(data)
	require.NoError(t, err)
	var limit *protogen.Limit
	for _, l := range s.Limits {
		if l.Name == "circular_buffers_per_core" {
			limit = l
		}
	}
	require.NotNil(t, limit, "protocol/protocol.json names the circular_buffers_per_core limit")
	require.Empty(t, matches(ruleSources(t, root), cbBoundLiteral),
		"the CB index bound is ttruntime.CircularBuffersPerCore in Go and kCircularBuffersPerCore in C++, never a number")
}

func TestRangeOverlapRuleWrittenOnce(t *testing.T) {
	got := matches(ruleSources(t, repoRoot(t)), rangeOverlapCheck)
	for _, m := range got {
		require.True(t, strings.HasPrefix(m, "cpp/src/validate.cpp:"),
			"only the runtime's validator checks that core ranges do not overlap; found %s", m)
	}
	require.NotEmpty(t, got, "cpp/src/validate.cpp reports overlapping ranges")
}

func TestRuleScannersCatchLiterals(t *testing.T) {
	for _, line := range []string{
		`if (x.index > 31) fail(xw + ".index", "bad");`,
		`if (id >= 32) kernel_fail("out of range");`,
		`std::array<CircularBuffer, 32> cbs{};`,
		`zyx_emu_cb_interface cb_iface[32] = {};`,
		`return cb < 32 && sizes[cb] != 0;`,
	} {
		require.True(t, cbBoundLiteral.MatchString(line), line)
	}
	for _, line := range []string{
		`uint32_t tile_rows = 32;`,
		`if (kCircularBuffersPerCore <= id) fail();`,
		`n := rows * 32`,
	} {
		require.False(t, cbBoundLiteral.MatchString(line), line)
	}
	require.True(t, rangeOverlapCheck.MatchString(`if (seen[c]++) throw bad(at + ": overlaps an earlier range");`))
	require.True(t, rangeOverlapCheck.MatchString(`return fmt.Errorf("%s: ranges overlap", at)`))
}
