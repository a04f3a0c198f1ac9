package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
)

// completionShells are the shells `zyx-tt completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

// completeCommand is the hidden command the scripts call: `zyx-tt
// __complete WORD... CURRENT` prints the candidates for CURRENT, one a
// line; none means "complete file names".
const completeCommand = "__complete"

func completionFlagSet(stdout io.Writer) *flagSet {
	return newFlagSet("completion", "bash|zsh|fish",
		"Completion prints a script that completes zyx-tt's commands, flags, devices and\n"+
			"backends in the shell, falling back to file names (bundles, .npy files):\n\n"+
			"\tbash:  source <(zyx-tt completion bash)     (or save it in ~/.local/share/bash-completion/completions/zyx-tt)\n"+
			"\tzsh:   zyx-tt completion zsh > \"${fpath[1]}/_zyx-tt\"   (or source it after compinit)\n"+
			"\tfish:  zyx-tt completion fish > ~/.config/fish/completions/zyx-tt.fish", stdout)
}

func cmdCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	pos, err := parseFlags(completionFlagSet(stdout), args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one shell (%s), got %d arguments", strings.Join(completionShells, ", "), len(pos))
	}
	script, ok := completionScripts[pos[0]]
	if !ok {
		return usagef("unknown shell %q%s (shells: %s)", pos[0], didYouMean("", pos[0], completionShells), strings.Join(completionShells, ", "))
	}
	_, err = io.WriteString(stdout, script)
	return err
}

// The scripts ask `zyx-tt __complete` for the candidates, so they follow
// the commands and flags of the zyx-tt on PATH.
var completionScripts = map[string]string{
	"bash": `# bash completion for zyx-tt (zyx-tt completion bash)
_zyx_tt() {
	local cur=${COMP_WORDS[COMP_CWORD]}
	local IFS=$'\n'
	COMPREPLY=($(compgen -W "$(zyx-tt __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur"))
}
complete -o default -o bashdefault -F _zyx_tt zyx-tt
`,
	"zsh": `#compdef zyx-tt
# zsh completion for zyx-tt (zyx-tt completion zsh)
_zyx_tt() {
	local -a cands
	cands=(${(f)"$(zyx-tt __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
	if (( ${#cands} )); then
		compadd -a cands
	else
		_files
	fi
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_zyx_tt "$@"
else
	compdef _zyx_tt zyx-tt
fi
`,
	"fish": `# fish completion for zyx-tt (zyx-tt completion fish)
function __zyx_tt_complete
	set -l words (commandline -opc) (commandline -ct)
	zyx-tt __complete $words[2..-1] 2>/dev/null
end
complete -c zyx-tt -a '(__zyx_tt_complete)'
`,
}

// complete prints the candidates for the last of words (the word being
// typed; words are what follows "zyx-tt"). It opens no backend: device
// candidates are the selectors, not the devices this host has.
func complete(words []string, stdout io.Writer) int {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	var cands []string
	if len(words) == 1 {
		cands = commandNames()
	} else {
		var cmd *command
		for i := range commands {
			if commands[i].name == words[0] {
				cmd = &commands[i]
			}
		}
		switch {
		case words[0] == "help" && len(words) == 2:
			cands = commandNames()[1:]
		case cmd == nil:
		default:
			cands = completeArgs(cmd, words[1:len(words)-1], cur)
		}
	}
	for _, c := range cands {
		if strings.HasPrefix(c, cur) {
			fmt.Fprintln(stdout, c)
		}
	}
	return exitOK
}

// completeArgs are the candidates for cur after the command's args prev.
func completeArgs(cmd *command, prev []string, cur string) []string {
	fs := cmd.flags()
	if len(prev) > 0 {
		last := prev[len(prev)-1]
		if strings.HasPrefix(last, "-") && !strings.Contains(last, "=") {
			name := strings.TrimLeft(last, "-")
			if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
				return flagValues(name)
			}
		}
	}
	if name, _, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok && strings.HasPrefix(cur, "-") {
		var out []string
		for _, v := range flagValues(name) {
			out = append(out, cur[:strings.Index(cur, "=")+1]+v)
		}
		return out
	}
	if strings.HasPrefix(cur, "-") {
		var out []string
		fs.VisitAll(func(f *flag.Flag) {
			if len(f.Name) == 1 {
				out = append(out, "-"+f.Name)
			} else {
				out = append(out, "--"+f.Name)
			}
		})
		sort.Strings(out)
		return out
	}
	if cmd.words != nil && !slices.ContainsFunc(prev, func(w string) bool { return slices.Contains(cmd.words, w) }) {
		return cmd.words
	}
	return nil // file names
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// flagValues are the values a flag takes, where they are a known set.
func flagValues(name string) []string {
	switch name {
	case "dev", "verify":
		return deviceSelectors()
	case "backends":
		return backends.Registered()
	}
	return nil
}

// deviceSelectors are the --dev words this build knows: auto, fastest,
// every backend and every device-name prefix a driver claims.
func deviceSelectors() []string {
	out := append([]string{"auto", "fastest"}, backends.Registered()...)
	for _, p := range namedPrefixes() {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
