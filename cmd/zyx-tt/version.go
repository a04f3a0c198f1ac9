package main

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/tt"
	"github.com/zyxtt/zyxtt/ttruntime"
)

// versionReport is `zyx-tt version --json` (docs/probe.md).
type versionReport struct {
	SchemaVersion int    `json:"schema_version"`
	Module        string `json:"module"`
	// Version is the module version the binary was built at ("v0.3.0"),
	// "(devel)" for a build in a checkout.
	Version    string `json:"version"`
	Commit     string `json:"commit,omitempty"`
	CommitTime string `json:"commit_time,omitempty"`
	Modified   bool   `json:"modified,omitempty"`
	Go         string `json:"go"`
	// Protocol is the driver–runtime protocol this zyx-tt speaks.
	Protocol int            `json:"protocol"`
	Runtime  runtimeVersion `json:"runtime"`
}

// runtimeVersion is the runtime zyx-tt would start, as it says itself.
type runtimeVersion struct {
	Path     string `json:"path,omitempty"`
	Version  string `json:"version,omitempty"`
	Protocol int    `json:"protocol,omitempty"`
	// Error is why there is no version: not found (with where it looked
	// and what to run), or the runtime did not answer --version.
	Error string `json:"error,omitempty"`
}

func versionFlagSet(asJSON *bool, stdout io.Writer) *flagSet {
	fs := newFlagSet("version", "[--json]",
		"Version prints the module version and VCS commit zyx-tt was built from, the\n"+
			"driver–runtime protocol it speaks, and the version of the zyx-tt-runtime it\n"+
			"would start (found as the tt backend finds it), or where it looked.", stdout)
	fs.BoolVar(asJSON, "json", false, "print JSON (schema in docs/probe.md)")
	return fs
}

func cmdVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var asJSON bool
	pos, err := parseFlags(versionFlagSet(&asJSON, stdout), args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	rep := versionReport{SchemaVersion: schemaVersion, Module: "github.com/zyxtt/zyxtt", Version: "(unknown)", Protocol: ttruntime.ProtocolVersion}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			rep.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			rep.Version = bi.Main.Version
		}
		rep.Go = bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rep.Commit = s.Value
			case "vcs.time":
				rep.CommitTime = s.Value
			case "vcs.modified":
				rep.Modified = s.Value == "true"
			}
		}
	}
	rep.Runtime = findRuntimeVersion(ctx)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(stdout, "zyx-tt %s\n", rep.Version)
	fmt.Fprintf(stdout, "  module    %s\n", rep.Module)
	if rep.Commit != "" {
		c := rep.Commit
		if rep.CommitTime != "" {
			c += " " + rep.CommitTime
		}
		if rep.Modified {
			c += " (modified)"
		}
		fmt.Fprintf(stdout, "  commit    %s\n", c)
	}
	fmt.Fprintf(stdout, "  go        %s\n", rep.Go)
	fmt.Fprintf(stdout, "  protocol  %d\n", rep.Protocol)
	if r := rep.Runtime; r.Error != "" {
		fmt.Fprintf(stdout, "  runtime   %s\n", oneLine(r.Error))
	} else {
		fmt.Fprintf(stdout, "  runtime   %s (protocol %d) at %s\n", r.Version, r.Protocol, r.Path)
	}
	return nil
}

// runtimeVersionLine is what `zyx-tt-runtime --version` prints.
var runtimeVersionLine = regexp.MustCompile(`^zyx-tt-runtime (\S+) \(protocol (\d+)\)`)

// findRuntimeVersion finds the runtime as the tt backend does (config
// tenstorrent.runtime first) and asks it for its version.
func findRuntimeVersion(ctx context.Context) runtimeVersion {
	configured := ""
	if rt, err := backends.Open(ctx, backends.Options{Backends: []string{}}); err == nil {
		var s tt.Settings
		if cfg := rt.Config(); cfg != nil && cfg.Section(tt.ConfigSection, &s) == nil {
			configured = s.Runtime
		}
		rt.Close()
	}
	path, err := ttruntime.FindRuntime(configured)
	if err != nil {
		return runtimeVersion{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return runtimeVersion{Path: path, Error: fmt.Sprintf("%s --version: %v", path, err)}
	}
	m := runtimeVersionLine.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return runtimeVersion{Path: path, Error: fmt.Sprintf("%s --version printed %q, not a zyx-tt-runtime version", path, strings.TrimSpace(string(out)))}
	}
	proto, _ := strconv.Atoi(m[2])
	return runtimeVersion{Path: path, Version: m[1], Protocol: proto}
}
