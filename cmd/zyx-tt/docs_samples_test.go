package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/rtbin"
)

// A docs sample is a fenced block after a line `<!-- sample -->` in
// README.md or docs/*.md: `$ COMMAND` lines, each followed by what it
// prints (stdout and stderr). TestDocsSamples runs every command with
// bash in a directory that has the repository's examples/ and tt/, as a
// user with no config file on a CPU host whose home is /home/u, and
// compares its output line by line with the sample's. The lines that vary
// from run to run or host to host are written so: a duration is any
// duration ("12.3 ms" matches "4.1 µs"); … in a line stands for any text
// ("  c  … (cpu)"); a line that is … alone matches any number of lines.
type docSample struct {
	file    string
	line    int
	command string
	want    []string
}

func docSamples(t *testing.T, root string) []docSample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	var out []docSample
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := strings.Split(string(data), "\n")
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "<!-- sample -->" {
				continue
			}
			require.Less(t, i+1, len(lines), "%s:%d: a sample marker at the end", f, i+1)
			require.True(t, strings.HasPrefix(lines[i+1], "```"), "%s:%d: a sample marker not before a fenced block", f, i+1)
			var cur *docSample
			for j := i + 2; j < len(lines) && lines[j] != "```"; j++ {
				if cmd, ok := strings.CutPrefix(lines[j], "$ "); ok {
					out = append(out, docSample{file: filepath.Base(f), line: j + 1, command: cmd})
					cur = &out[len(out)-1]
					continue
				}
				require.NotNil(t, cur, "%s:%d: sample output before a $ command", f, j+1)
				if lines[j] != "" || cur.want != nil {
					cur.want = append(cur.want, lines[j])
				}
			}
		}
	}
	for i := range out { // a blank line parts two commands of a block
		for len(out[i].want) > 0 && out[i].want[len(out[i].want)-1] == "" {
			out[i].want = out[i].want[:len(out[i].want)-1]
		}
	}
	return out
}

var durationText = regexp.MustCompile(`\d+(\.\d+)? ?(ns|µs|ms|s)\b`)

func normSample(s string) string {
	return strings.TrimRight(durationText.ReplaceAllString(s, "<duration>"), " \r")
}

// globMatch reports whether line matches pattern, in which each … stands
// for any text.
func globMatch(pattern, line string) bool {
	parts := strings.Split(pattern, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$").MatchString(line)
}

// matchSample reports whether got matches want line by line (see
// docSample), and the first line of want that did not match.
func matchSample(want, got []string) (bool, int) {
	best := 0
	var match func(w, g int) bool
	match = func(w, g int) bool {
		best = max(best, w)
		if w == len(want) {
			return g == len(got)
		}
		if strings.TrimSpace(want[w]) == "…" {
			for k := g; k <= len(got); k++ {
				if match(w+1, k) {
					return true
				}
			}
			return false
		}
		if g == len(got) {
			return false
		}
		if !globMatch(normSample(want[w]), normSample(got[g])) {
			return false
		}
		return match(w+1, g+1)
	}
	ok := match(0, 0)
	return ok, best
}

func TestDocsSamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every docs sample (compiles kernels, starts the emulator): make test runs it, -short skips it")
	}
	for _, dev := range []string{"/dev/nvidia0", "/dev/tenstorrent"} {
		if _, err := os.Stat(dev); err == nil {
			t.Skipf("%s exists: the samples show a CPU host", dev)
		}
	}
	runtimeBin, err := rtbin.Built()
	if err != nil {
		t.Skipf("the samples show the emulator, which needs the runtime: %v", err)
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	samples := docSamples(t, root)
	require.NotEmpty(t, samples)

	home := t.TempDir()
	work := t.TempDir()
	for _, d := range []string{"examples", "tt"} {
		require.NoError(t, os.Symlink(filepath.Join(root, d), filepath.Join(work, d)))
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\n" + envCLI + "=1 exec " + os.Args[0] + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(bin, "zyx-tt"), []byte(wrapper), 0o755))
	env := []string{
		"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"ZYX_TT_RUNTIME=" + runtimeBin,
		"ZYX_SYSFS_ROOT=" + filepath.Join(root, "tt", "testdata", "sysfs", "none"),
		"ZYX_PROGRESS=0",
	}
	for _, k := range []string{"TMPDIR", "ZYX_SHM_DIR", "GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, s := range samples {
		t.Run(s.file+":"+itoa(s.line), func(t *testing.T) {
			cmd := exec.Command("bash", "-c", s.command+" 2>&1")
			cmd.Dir, cmd.Env = work, env
			out, _ := cmd.Output() // samples of errors exit non-zero
			text := strings.ReplaceAll(string(out), home, "/home/u")
			var got []string
			sc := bufio.NewScanner(strings.NewReader(text))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			ok, at := matchSample(s.want, got)
			if !ok {
				line := "(end of the sample)"
				if at < len(s.want) {
					line = s.want[at]
				}
				t.Fatalf("%s:%d: $ %s\nthe output differs from the sample at its line %q\nsample:\n%s\noutput:\n%s",
					s.file, s.line, s.command, line, strings.Join(s.want, "\n"), text)
			}
		})
	}
}

func TestMatchSample(t *testing.T) {
	want := []string{"a 1.5 ms", "b…", "…", "z"}
	require.True(t, globMatch("  c  … (cpu)", "  c  AMD EPYC (cpu)"))
	require.False(t, globMatch("  c  … (cpu)", "  c  AMD EPYC (gpu)"))
	for _, tc := range []struct {
		got []string
		ok  bool
	}{
		{[]string{"a 3 µs", "b c", "z"}, true},
		{[]string{"a 3 µs", "bcd", "x", "y", "z"}, true},
		{[]string{"a 3 µs", "c", "z"}, false},
		{[]string{"a 3 µs", "b", "z", "extra"}, false},
		{[]string{"a 3 MiB", "b", "z"}, false},
	} {
		ok, _ := matchSample(want, tc.got)
		require.Equal(t, tc.ok, ok, "%q", tc.got)
	}
}
