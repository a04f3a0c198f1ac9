package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/zyxtt/zyxtt/internal/config"
)

// errHelp is returned when -h was given; the usage has been printed.
var errHelp = flag.ErrHelp

// flagSet is a subcommand's flags with its help text.
type flagSet struct {
	*flag.FlagSet
	help func() // prints the usage text on the command's stdout
}

// newFlagSet makes a subcommand's flag set. Its usage text is printed to w
// on -h only: a parse error is one line that points at help.
func newFlagSet(name, synopsis, about string, w io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // the flag package calls it on every error
	return &flagSet{FlagSet: fs, help: func() {
		fmt.Fprintf(w, "usage: zyx-tt %s %s\n\n%s\n\nFlags:\n", name, synopsis, about)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}}
}

// parseFlags parses args, allowing flags after positional arguments as the
// go command does ("zyx-tt run examples/vadd --dev c"). It returns the
// positional arguments.
func parseFlags(fs *flagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fs.help()
				return nil, errHelp
			}
			return nil, flagError(fs.FlagSet, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError is the usage error of a flag the flag package refused, in the
// --name spelling the help uses, with the nearest flag for an unknown one.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		return usagef("unknown flag --%s%s", name, didYouMean("--", name, flagNames(fs)))
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		return usagef("flag --%s needs a value", strings.TrimLeft(name, "-"))
	}
	// "invalid value "x" for flag -repeat: parse error"
	if i := strings.Index(msg, " for flag -"); i >= 0 {
		msg = msg[:i] + " for flag --" + msg[i+len(" for flag -"):]
	}
	return usagef("%s", msg)
}

// flagNames are the names fs defines.
func flagNames(fs *flag.FlagSet) []string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// didYouMean is " (did you mean PREFIX+NEAR?)" for the known name nearest
// name, or "" when none is near.
func didYouMean(prefix, name string, known []string) string {
	if near := config.Suggest(name, known); near != "" {
		return fmt.Sprintf(" (did you mean %s%s?)", prefix, near)
	}
	return ""
}

// listFlag collects a repeatable flag's values.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// pairs splits NAME=VALUE values; a value without = or with an empty name
// is a usage error naming the flag.
func (l listFlag) pairs(flagName string) (map[string]string, []string, error) {
	out := map[string]string{}
	var order []string
	for _, v := range l {
		name, val, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, nil, usagef("--%s %q: want NAME=VALUE", flagName, v)
		}
		if _, dup := out[name]; dup {
			return nil, nil, usagef("--%s %s given twice", flagName, name)
		}
		out[name] = val
		order = append(order, name)
	}
	return out, order, nil
}

// optFlag is a flag that may be given bare (--verify) or with a value
// (--verify=c).
type optFlag struct {
	set   bool
	value string
}

func (o *optFlag) String() string { return o.value }

func (o *optFlag) Set(v string) error {
	o.set = true
	if v == "true" {
		v = ""
	}
	if v == "false" {
		o.set = false
		v = ""
	}
	o.value = v
	return nil
}

func (o *optFlag) IsBoolFlag() bool { return true }

// siRate formats a rate with an SI prefix ("1.2 TFLOP/s").
func siRate(v float64, unit string) string {
	prefixes := []string{"", "k", "M", "G", "T", "P", "E"}
	i := 0
	for v >= 1000 && i < len(prefixes)-1 {
		v /= 1000
		i++
	}
	return fmt.Sprintf("%.3g %s%s", v, prefixes[i], unit)
}

// iecBytes formats a byte count with a binary prefix ("7.7 GiB").
func iecBytes(n float64) string {
	if n < 1024 {
		return fmt.Sprintf("%.0f B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	e := min(int(math.Log(n)/math.Log(1024)), len(units))
	return fmt.Sprintf("%.1f %s", n/math.Pow(1024, float64(e)), units[e-1])
}
