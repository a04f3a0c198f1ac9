package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/ttruntime"
)

func TestVersion(t *testing.T) {
	r := cli(t, cliEnv{}, "version")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Regexp(t, `^zyx-tt \S+\n  module    github.com/zyxtt/zyxtt\n`, r.stdout)
	require.Contains(t, r.stdout, "  protocol  2\n")
	// No runtime here (cliEnviron names a missing one): the line says so.
	require.Contains(t, r.stdout, "  runtime   tt: find runtime: zyx-tt-runtime not found")

	r = cli(t, cliEnv{}, "version", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rep versionReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, schemaVersion, rep.SchemaVersion)
	require.Equal(t, ttruntime.ProtocolVersion, rep.Protocol)
	require.NotEmpty(t, rep.Version)
	require.NotEmpty(t, rep.Go)
	require.NotEmpty(t, rep.Runtime.Error)
}

// version asks the runtime it finds for its version: a stand-in runtime
// script answers --version as zyx-tt-runtime does.
func TestVersionAsksTheRuntime(t *testing.T) {
	dir := t.TempDir()
	rt := filepath.Join(dir, "zyx-tt-runtime")
	require.NoError(t, os.WriteFile(rt, []byte("#!/bin/sh\necho 'zyx-tt-runtime 9.8.7 (protocol 2)'\n"), 0o755))
	r := cli(t, cliEnv{extra: map[string]string{"ZYX_TT_RUNTIME": rt}}, "version", "--json")
	require.Equal(t, exitOK, r.code, r.stderr)
	var rep versionReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	require.Equal(t, runtimeVersion{Path: rt, Version: "9.8.7", Protocol: 2}, rep.Runtime)

	require.NoError(t, os.WriteFile(rt, []byte("#!/bin/sh\necho hello\n"), 0o755))
	r = cli(t, cliEnv{extra: map[string]string{"ZYX_TT_RUNTIME": rt}}, "version")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, `--version printed "hello", not a zyx-tt-runtime version`)
}
