package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func completeWords(t *testing.T, words ...string) []string {
	t.Helper()
	var out bytes.Buffer
	require.Equal(t, exitOK, complete(words, &out))
	return strings.Fields(out.String())
}

func TestCompleteCandidates(t *testing.T) {
	require.Equal(t, []string{"probe"}, completeWords(t, "pr"))
	require.Equal(t, []string{"run", "runtime"}, completeWords(t, "ru"))
	require.Contains(t, completeWords(t, "run", "--d"), "--dev")
	require.Contains(t, completeWords(t, "run", "--d"), "--dprint")
	require.Equal(t, []string{"tt", "tt-emu"}, completeWords(t, "run", "--dev", "t"))
	require.Equal(t, []string{"--verify=cblas"}, completeWords(t, "run", "x", "--verify=cb"))
	require.Empty(t, completeWords(t, "run", "--verify", "cb"), "a bare --verify takes no value")
	require.Equal(t, []string{"cuda"}, completeWords(t, "probe", "--backends", "cu"))
	require.Contains(t, completeWords(t, "probe", "-"), "-L")
	require.Equal(t, []string{"bash", "zsh", "fish"}, completeWords(t, "completion", ""))
	require.Equal(t, []string{"install"}, completeWords(t, "runtime", "i"))
	require.Empty(t, completeWords(t, "run", "exam"), "a bundle is a file name: the shell completes it")
	require.Empty(t, completeWords(t, "run", "--json", ""), "after a boolean flag comes a bundle")
	require.Equal(t, []string{"version"}, completeWords(t, "help", "ver"))
}

func TestCompletionScripts(t *testing.T) {
	for _, sh := range completionShells {
		r := cli(t, cliEnv{}, "completion", sh)
		require.Equal(t, exitOK, r.code, r.stderr)
		require.Contains(t, r.stdout, "zyx-tt __complete")
	}
}

// zyxOnPath puts this test binary on PATH as zyx-tt, for scripts that call
// zyx-tt.
func zyxOnPath(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	wrapper := "#!/bin/sh\n" + envCLI + "=1 exec " + os.Args[0] + " \"$@\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "zyx-tt"), []byte(wrapper), 0o755))
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// shellScript finds shell sh, skipping the test where it is not installed,
// and writes zyx-tt's completion script for it to a file named name in a
// new directory; it returns the shell's path and the script's.
func shellScript(t *testing.T, sh, name string) (bin, script string) {
	t.Helper()
	bin, err := exec.LookPath(sh)
	if err != nil {
		t.Skipf("%s is not installed (apt-get install %s)", sh, sh)
	}
	script = filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(script, []byte(cli(t, cliEnv{}, "completion", sh).stdout), 0o644))
	return bin, script
}

// bash loads the script and completes through it as it would at a prompt.
func TestCompletionInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	zyxOnPath(t)
	script := cli(t, cliEnv{}, "completion", "bash").stdout
	probe := func(line string) string {
		words := strings.Fields(line)
		if strings.HasSuffix(line, " ") {
			words = append(words, "")
		}
		prog := script + "\nCOMP_WORDS=(" + quoteWords(words) + ")\nCOMP_CWORD=" + itoa(len(words)-1) +
			"\n_zyx_tt\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command(bash, "--norc", "-c", prog).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	require.Equal(t, "probe\n", probe("zyx-tt pro"))
	require.Equal(t, "tt-emu\n", probe("zyx-tt run x --dev tt-"))
	require.Contains(t, probe("zyx-tt run --"), "--verify\n")
	require.Equal(t, "bash\nzsh\nfish\n", probe("zyx-tt completion "))
}

// zsh and fish parse their scripts (they are optional on a build host).
func TestCompletionScriptsParse(t *testing.T) {
	for _, sh := range []string{"zsh", "fish"} {
		t.Run(sh, func(t *testing.T) {
			bin, f := shellScript(t, sh, "script")
			out, err := exec.Command(bin, "-n", f).CombinedOutput()
			require.NoError(t, err, "%s", out)
		})
	}
}

func quoteWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func itoa(n int) string { return strconv.Itoa(n) }

// fish loads the script and completes through it (complete -C is what the
// prompt asks).
func TestCompletionInFish(t *testing.T) {
	fish, f := shellScript(t, "fish", "zyx-tt.fish")
	zyxOnPath(t)
	out, err := exec.Command(fish, "--no-config", "-c", "source "+f+`; complete -C "zyx-tt pro"; complete -C "zyx-tt run x --dev tt-"`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, strings.Split(string(out), "\n"), "probe")
	require.Contains(t, strings.Split(string(out), "\n"), "tt-emu")
}

// zsh runs the script's completion function with compadd and _files
// standing in for the completion system's (they exist only inside a
// completion widget).
func TestCompletionInZsh(t *testing.T) {
	zsh, f := shellScript(t, "zsh", "_zyx-tt")
	zyxOnPath(t)
	prog := `compdef() { : }; compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }; _files() { print FILES }; source ` + f + `
words=(zyx-tt pro); CURRENT=2; _zyx_tt
words=(zyx-tt run x --dev tt-); CURRENT=5; _zyx_tt
words=(zyx-tt run exa); CURRENT=3; _zyx_tt`
	out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, "probe\ntt-emu\nFILES\n", string(out), "commands, devices, then file names for a bundle")
}
