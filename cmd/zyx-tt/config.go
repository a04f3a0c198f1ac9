package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zyxtt/zyxtt/backends"
)

// configOf is what the runtime made of the config file: where it is,
// whether it was used, and every fault.
func configOf(rt *backends.Runtime) probeConfig {
	cfg := rt.Config()
	c := probeConfig{Path: backends.ConfigPath(), Loaded: cfg != nil && cfg.Path != "", Problems: rt.ConfigProblems()}
	if err := rt.ConfigErr(); err != nil {
		c.Error = err.Error()
	}
	return c
}

// faults are the config's faults, one a line: why the file was not used,
// then its other problems.
func (c probeConfig) faults() []string {
	var out []string
	if c.Error != "" {
		out = append(out, strings.Split(c.Error, "\n")...)
	}
	return append(out, c.Problems...)
}

// writeConfigHeader is the config line probe starts with.
func writeConfigHeader(w io.Writer, c probeConfig) {
	switch {
	case c.Loaded:
		fmt.Fprintf(w, "config: %s\n", c.Path)
	case c.Error != "":
		fmt.Fprintf(w, "config: %s (not used; defaults)\n", c.Path)
	case c.Path != "":
		fmt.Fprintf(w, "config: %s (not read; defaults)\n", c.Path)
	default:
		fmt.Fprintf(w, "config: none (defaults)\n")
	}
}

// writeConfigFaults prints each fault as every command prints it.
func writeConfigFaults(w io.Writer, c probeConfig) {
	for _, f := range c.faults() {
		fmt.Fprintf(w, "config problem: %s\n", f)
	}
}

// configError is the failure of a command whose config has faults: a
// broken config is never silently replaced by the defaults. Nil when there
// is none.
func configError(c probeConfig) error {
	n := len(c.faults())
	if n == 0 {
		return nil
	}
	what := "1 problem"
	if n > 1 {
		what = fmt.Sprintf("%d problems", n)
	}
	return fmt.Errorf("config %s: %s (listed above); fix the file, or move it away to run on the defaults", c.Path, what)
}

// checkConfig reads and checks the config file for a command that opens no
// backend: its faults are printed on w, and fail the command.
func checkConfig(ctx context.Context, w io.Writer) error {
	rt, err := backends.Open(ctx, backends.Options{Backends: []string{}})
	if err != nil {
		return err
	}
	defer rt.Close()
	c := configOf(rt)
	writeConfigFaults(w, c)
	return configError(c)
}
