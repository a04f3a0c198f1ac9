package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
)

// errHelp is returned when -h was given; the usage has been printed.
var errHelp = flag.ErrHelp

// newFlagSet makes a subcommand's flag set, with its usage text printed to
// w on -h and never on a parse error (the error message points at help).
func newFlagSet(name, synopsis, about string, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(w, "usage: zyx-tt %s %s\n\n%s\n\nFlags:\n", name, synopsis, about)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args, allowing flags after positional arguments as the
// go command does ("zyx-tt run examples/vadd --dev c"). It returns the
// positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				return nil, errHelp // Parse has printed the usage
			}
			return nil, usagef("%v", err)
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
