// Command zyx-tt runs compute programs on Tenstorrent cards and on the peer
// backends (CUDA, OpenCL, Vulkan, C, CBLAS) that take over where no card is
// present.
//
// Usage:
//
//	zyx-tt probe [--json] [-L] [--backends LIST]
//	zyx-tt run [flags] BUNDLE
//	zyx-tt runtime install
//	zyx-tt version [--json]
//	zyx-tt completion bash|zsh|fish
//
// Exit status: 0 success, 1 failure, 2 usage error, 3 verification mismatch.
// docs/probe.md describes the output (and its --json form), docs/programs.md
// the program bundles.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/zyxtt/zyxtt/backends"
	_ "github.com/zyxtt/zyxtt/backends/all"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1
	exitUsage    = 2
	exitMismatch = 3
)

// errInterrupted is why the command's context ends at the first Ctrl-C or
// SIGTERM; the failure it causes is reported as an interruption.
var errInterrupted = errors.New("interrupted (Ctrl-C or SIGTERM); stopped")

// exitInterrupted is the status after a second Ctrl-C or SIGTERM, which
// exits at once (the shell's 128 + SIGINT).
const exitInterrupted = 130

// onSignals cancels the run at the first SIGINT or SIGTERM (the command
// stops what it is doing, cleans up under short deadlines and exits), and
// calls now at any later one, which exits at once: a user pressing Ctrl-C
// twice never waits. Child processes (the Tenstorrent runtime) die with this
// process (PR_SET_PDEATHSIG), and shm segments left behind are removed by
// the next run's sweep. stop restores the default handling.
func onSignals(cancel func(), now func()) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case <-ch:
			now()
		case <-done:
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// usageError is a command line that cannot be acted on: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// errMismatch marks a run whose verification failed: exit status 3. The
// report has already been printed.
var errMismatch = errors.New("verification failed")

// command is one subcommand; each lives in a file of its name.
type command struct {
	name  string
	short string
	run   func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// flags is the command's flag set, for completion.
	flags func() *flagSet
	// words are the command's fixed first arguments (completion's
	// subcommands and shells), nil for none.
	words []string
}

// commands is filled in init: completion reads the list.
var commands []command

func init() {
	commands = []command{
		{name: "probe", short: "list the backends, their devices and hardware, and why a backend has none", run: cmdProbe,
			flags: func() *flagSet { return probeFlagSet(&probeFlags{}, io.Discard) }},
		{name: "run", short: "compile and run a program bundle, verify and time it", run: cmdRun,
			flags: func() *flagSet { return runFlagSet(&runFlags{}, &listFlag{}, &listFlag{}, &listFlag{}, io.Discard) }},
		{name: "runtime", short: "build and install zyx-tt-runtime from this module's source", run: cmdRuntime,
			flags: func() *flagSet { return runtimeFlagSet(&runtimeFlags{}, io.Discard) }, words: []string{"install", "where"}},
		{name: "version", short: "print the versions of zyx-tt, its protocol and the runtime", run: cmdVersion,
			flags: func() *flagSet { return versionFlagSet(new(bool), io.Discard) }},
		{name: "completion", short: "print a shell completion script (bash, zsh, fish)", run: cmdCompletion,
			flags: func() *flagSet { return completionFlagSet(io.Discard) }, words: completionShells},
	}
}

// commandNames lists the commands, help included.
func commandNames() []string {
	names := []string{"help"}
	for _, c := range commands {
		names = append(names, c.name)
	}
	return names
}

func main() { os.Exit(mainWithSignals()) }

// mainWithSignals runs os.Args under the signal handling of the command:
// the first SIGINT or SIGTERM cancels, a second exits at once.
func mainWithSignals() int {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := onSignals(func() { cancel(errInterrupted) }, func() { os.Exit(exitInterrupted) })
	defer stop()
	return zyxMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
}

// zyxMain runs the command line args and returns the exit status.
func zyxMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		mainUsage(stderr)
		return exitUsage
	}
	name := args[0]
	if name == completeCommand {
		return complete(args[1:], stdout)
	}
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			for _, c := range commands {
				if c.name == args[1] {
					_ = c.run(ctx, []string{"-h"}, stdout, stdout)
					return exitOK
				}
			}
			fmt.Fprintf(stderr, "zyx-tt help: unknown command %q%s\nRun 'zyx-tt help' for usage.\n", args[1], didYouMean("", args[1], commandNames()))
			return exitUsage
		}
		mainUsage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		// Each command opens a runtime of its own and closes it, with its
		// devices and host pool, before it returns: a run leaves nothing
		// behind in /dev/shm.
		err := runCommand(ctx, c, args[1:], stdout, stderr)
		var ue *usageError
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, errHelp):
			return exitOK
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "zyx-tt %s: %v\nRun 'zyx-tt help %s' for usage.\n", name, err, name)
			return exitUsage
		case errors.Is(err, errMismatch):
			fmt.Fprintf(stderr, "zyx-tt %s: %v\n", name, err)
			return exitMismatch
		case errors.Is(context.Cause(ctx), errInterrupted) && errors.Is(err, context.Canceled):
			fmt.Fprintf(stderr, "zyx-tt %s: %v: %v\n", name, errInterrupted, err)
			return exitFailure
		case errors.Is(err, backends.ErrCompile):
			io.WriteString(stderr, compileReport(name, err))
			return exitFailure
		default:
			fmt.Fprintf(stderr, "zyx-tt %s: %v\n", name, err)
			return exitFailure
		}
	}
	fmt.Fprintf(stderr, "zyx-tt: unknown command %q%s\nRun 'zyx-tt help' for usage.\n", name, didYouMean("", name, commandNames()))
	return exitUsage
}

// runCommand runs one command; a panic in it (a bug: bad input never
// panics) is an error that says so, exit status 1, with the stack for the
// report.
func runCommand(ctx context.Context, c command, args []string, stdout, stderr io.Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error (a bug in zyx-tt; please report it with this message): %v\n%s", p, debug.Stack())
		}
	}()
	return c.run(ctx, args, stdout, stderr)
}

func mainUsage(w io.Writer) {
	var b strings.Builder
	b.WriteString("zyx-tt runs compute programs on Tenstorrent cards and on CUDA, OpenCL,\nVulkan, C and CBLAS devices.\n\nUsage:\n\n\tzyx-tt <command> [arguments]\n\nThe commands are:\n\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "\t%-10s %s\n", c.name, c.short)
	}
	b.WriteString("\nUse 'zyx-tt help <command>' for more about a command.\n")
	io.WriteString(w, b.String())
}

// compilerError is a compiler's diagnostic line: FILE:LINE[:COL]: error: …
var compilerError = regexp.MustCompile(`(?m)^[^\s:][^:\n]*:\d+(:\d+)?: (fatal )?error: .*$`)

// compileReport is a failed compile as the user's compile error: the
// compiler's first error line (file:line first), then the whole log, then
// what was being compiled for which device.
func compileReport(name string, err error) string {
	msg := err.Error()
	first := compilerError.FindString(msg)
	if first == "" {
		return fmt.Sprintf("zyx-tt %s: %s\n", name, msg)
	}
	// What precedes the compiler's output says what was compiled where.
	file, _, _ := strings.Cut(first, ":")
	head, log := msg, ""
	if i := strings.Index(msg, file+":"); i >= 0 {
		head, log = msg[:i], msg[i:]
	}
	head = strings.TrimRight(head, ": \n")
	var b strings.Builder
	fmt.Fprintf(&b, "zyx-tt %s: %s\n", name, first)
	if log != "" {
		b.WriteString(strings.TrimRight(log, "\n") + "\n")
	}
	fmt.Fprintf(&b, "(%s)\n", head)
	return b.String()
}
