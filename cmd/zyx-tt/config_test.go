package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/opencl"
	"github.com/zyxtt/zyxtt/backends/vulkan"
)

// configFaultLines are the "config problem:" lines of out.
func configFaultLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "config problem: ") {
			lines = append(lines, l)
		}
	}
	return lines
}

// Every command reports every fault of the config file the same way, and
// fails: a broken config is never silently replaced by the defaults.
func TestBrokenConfigFailsEveryCommand(t *testing.T) {
	const file = "$CONFIG/zyx/config.json"
	for _, tc := range []struct {
		name   string
		config string
		faults []string // after "config problem: "
		unused bool     // the file is not used at all
	}{
		{"select key typo", `{"dummy": {"enabled": true}, "select": {"budget": 1}}`,
			[]string{file + `:1:41: select: unknown key "budget"; did you mean "budget_s"?`}, false},
		{"select wrong type", `{"select": {"budget_s": "1"}}`,
			[]string{file + `:1:25: select.budget_s: want a number of seconds between 0 and 86400, got "1"`}, false},
		{"select out of range", `{"select": {"budget_s": -5}}`,
			[]string{file + `:1:25: select.budget_s: must be between 0 and 86400 seconds, got -5`}, false},
		{"faults in two sections", `{"tenstorrent": {"timeout_s": 0}, "c": {"threads": "4"}}`,
			[]string{
				file + `:1:31: tenstorrent.timeout_s: must be between 0.001 and 86400 seconds, got 0`,
				file + `:1:52: c.threads: want a whole number between 0 and 4096, got "4"`,
			}, false},
		{"emulator board typo", `{"tenstorrent": {"emu_board": "n15"}}`,
			[]string{file + `:1:31: tenstorrent.emu_board: unknown board "n15"; did you mean "n150"?`}, false},
		{"unknown section", `{"dumy": {"enabled": true}}`,
			[]string{file + `:1:2: unknown section "dumy"; did you mean "dummy"?`}, false},
		{"duplicate key", "{\"dummy\": {\"enabled\": true,\n  \"enabled\": false}}",
			[]string{file + `:2:3: dummy.enabled: duplicate key "enabled" (first at line 1, column 12)`}, true},
		{"duplicate section", `{"dummy": {"enabled": true}, "dummy": {}}`,
			[]string{file + `:1:30: dummy: duplicate section "dummy" (first at line 1, column 2)`}, true},
		{"trailing bytes", "{\"dummy\": {\"enabled\": true}}\n}",
			[]string{file + `:2:1: unexpected "}" after the top-level object (byte offset 29); the file must hold one JSON object`}, true},
		{"syntax error", "{\"dummy\": {\"enabled\": true}\n \"c\": {}}",
			[]string{file + `:2:2: JSON syntax: invalid character '"' after object key:value pair`}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := cliEnv{config: tc.config}
			summary := "config " + file + ": 1 problem (listed above); fix the file, or move it away to run on the defaults"
			if len(tc.faults) > 1 {
				summary = strings.Replace(summary, "1 problem", "2 problems", 1)
			}
			var want []string
			for _, f := range tc.faults {
				want = append(want, "config problem: "+f)
			}

			run := cli(t, env, "run", testBundle, "--dev", "c")
			require.Equal(t, exitFailure, run.code, "stdout:\n%s\nstderr:\n%s", run.stdout, run.stderr)
			require.Empty(t, run.stdout, "nothing runs")
			require.Equal(t, want, configFaultLines(run.stderr))
			require.Contains(t, run.stderr, "zyx-tt run: "+summary+"\n")

			probe := cli(t, env, "probe", "--backends", "dummy")
			require.Equal(t, exitFailure, probe.code, "stdout:\n%s\nstderr:\n%s", probe.stdout, probe.stderr)
			require.Equal(t, want, configFaultLines(probe.stdout), "probe prints what run prints")
			require.Equal(t, "zyx-tt probe: "+summary+"\n", probe.stderr)
			header := "config: " + file + "\n"
			if tc.unused {
				header = "config: " + file + " (not used; defaults)\n"
			}
			require.True(t, strings.HasPrefix(probe.stdout, header), probe.stdout)
			require.Contains(t, probe.stdout, "\ndummy: ", "the report is printed whole")

			js := cli(t, env, "probe", "--json", "--backends", "dummy")
			require.Equal(t, exitFailure, js.code, js.stderr)
			var rep probeReport
			require.NoError(t, json.Unmarshal([]byte(js.stdout), &rep))
			require.Equal(t, !tc.unused, rep.Config.Loaded)
			got := rep.Config.Problems
			if tc.unused {
				require.Empty(t, got)
				got = strings.Split(rep.Config.Error, "\n")
			}
			require.Equal(t, tc.faults, got)
		})
	}
}

// A config whose faults lie in a section no command of this run opens
// still fails the run: every section is checked, not only the ones used.
func TestBrokenSectionOfAnotherBackendFailsRun(t *testing.T) {
	r := cli(t, cliEnv{config: `{"dummy": {"enabled": true}, "cuda": {"staging_chunk": -1}}`}, "run", testBundle, "--dev", "dummy")
	require.Equal(t, exitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "config problem: $CONFIG/zyx/config.json:1:56: cuda.staging_chunk: must be between 0 and 4294967296 bytes, got -1\n")
}

// probe --perf reads no backend, but checks the config all the same.
func TestBrokenConfigFailsProbePerf(t *testing.T) {
	r := cli(t, cliEnv{config: `{"select": {"record": 3}}`}, "probe", "--perf", "--json")
	require.Equal(t, exitFailure, r.code, r.stderr)
	var rep perfReport
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "the record is printed, as JSON")
	require.Equal(t, "config problem: $CONFIG/zyx/config.json:1:23: select.record: want a string, got 3\n"+
		"zyx-tt probe: config $CONFIG/zyx/config.json: 1 problem (listed above); fix the file, or move it away to run on the defaults\n", r.stderr)

	r = cli(t, cliEnv{}, "probe", "--perf")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Empty(t, r.stderr)
}

func TestBrokenConfigProbeGolden(t *testing.T) {
	r := cli(t, cliEnv{config: "{\n  \"dummy\": {\"enabled\": true, \"memroy\": 4096},\n  \"select\": {\"budget_s\": \"30\"},\n  \"vulkn\": {}\n}\n"}, "probe", "--backends", "dummy")
	require.Equal(t, exitFailure, r.code)
	golden(t, "probe_config_broken.golden", r.stdout+"--- stderr\n"+r.stderr)
}

// Every numeric key of every section has bounds: the ends are accepted, a
// step beyond is a fault naming the key.
func TestEveryNumericKeyIsBounded(t *testing.T) {
	for _, tc := range []struct {
		section, key string
		ok           []string
		bad          map[string]string // value → the fault
	}{
		{"c", "threads", []string{"0", "4096"}, map[string]string{"-1": "must be between 0 and 4096, got -1", "4097": "must be between 0 and 4096, got 4097", "2.5": "want a whole number between 0 and 4096, got 2.5"}},
		{"cblas", "threads", []string{"0", "64"}, map[string]string{"-1": "must be between 0 and 4096, got -1"}},
		{"cuda", "staging_chunk", []string{"0", "4294967296"}, map[string]string{"-1": "must be between 0 and 4294967296 bytes, got -1", "4294967297": "must be between 0 and 4294967296 bytes"}},
		{"vulkan", "staging_bytes", []string{"0", "67108864"}, map[string]string{"-1": "must be between 0 and 4294967296 bytes, got -1", "1e300": "got 1e300"}},
		{"opencl", "platform_ids", []string{"[]", "[0, 3]"}, map[string]string{"[-1]": "opencl.platform_ids[0]: must be ≥ 0, got -1", "0": "want a list of whole numbers ≥ 0, got 0"}},
		{"opencl", "device_ids", []string{"[1]"}, map[string]string{"[-1]": "opencl.device_ids[0]: must be ≥ 0, got -1"}},
		{"tenstorrent", "timeout_s", []string{"0.001", "86400", "120"}, map[string]string{"0": "must be between 0.001 and 86400 seconds, got 0", "-1": "got -1", "1e18": "got 1e18"}},
		{"dummy", "memory", []string{"1", "1099511627776"}, map[string]string{"0": "must be ≥ 1 bytes, got 0", "9223372036854775808": "must be between 1 and 9223372036854775807 bytes"}},
		{"select", "budget_s", []string{"0", "86400", "0.5"}, map[string]string{"-5": "must be between 0 and 86400 seconds, got -5", "86401": "got 86401"}},
	} {
		t.Run(tc.section+"."+tc.key, func(t *testing.T) {
			problems := func(value string) []string {
				cfg, err := backends.ParseConfig([]byte(`{"` + tc.section + `": {"` + tc.key + `": ` + value + `}}`))
				if err != nil { // device_ids, every section's key, is checked first
					return []string{err.Error()}
				}
				rt, err := backends.Open(context.Background(), backends.Options{Config: cfg, Backends: []string{}})
				require.NoError(t, err)
				defer rt.Close()
				return rt.ConfigProblems()
			}
			for _, v := range tc.ok {
				require.Empty(t, problems(v), "%s.%s = %s", tc.section, tc.key, v)
			}
			for v, fault := range tc.bad {
				got := problems(v)
				require.Len(t, got, 1, "%s.%s = %s", tc.section, tc.key, v)
				require.Contains(t, got[0], tc.section+"."+tc.key)
				require.Contains(t, got[0], fault)
			}
		})
	}
}

// opencl and vulkan keep device_ids in their own settings: the section's
// list reaches them.
func TestDeviceIDsReachTheSectionSettings(t *testing.T) {
	cfg, err := backends.ParseConfig([]byte(`{"opencl": {"device_ids": [1], "platform_ids": [0]}, "vulkan": {"device_ids": []}}`))
	require.NoError(t, err)
	var cl opencl.Config
	require.NoError(t, cfg.Section("opencl", &cl))
	require.Equal(t, &[]int{1}, cl.DeviceIDs)
	require.Equal(t, &[]int{0}, cl.PlatformIDs)
	var vk vulkan.Config
	require.NoError(t, cfg.Section("vulkan", &vk))
	require.Equal(t, &[]int{}, vk.DeviceIDs)
}
