package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		sections []string
		err      string
	}{
		{"empty object", `{}`, []string{}, ""},
		{"sections", `{"cuda": {"device_ids": [0]}, "dummy": {"enabled": true}}`, []string{"cuda", "dummy"}, ""},
		{"section keys are checked when decoded", `{"c": {"compiler": "clang", "x": [1, {"y": null}]}}`, []string{"c"}, ""},
		{"empty input", ``, nil, "config:1:1: the file is empty"},
		{"blank input", " \n ", nil, "config:2:2: the file is empty"},
		{"not JSON", `device_ids = 1`, nil, "config:1:1: JSON syntax: invalid character 'd'"},
		{"array", `[]`, nil, "config:1:1: the top level must be a JSON object"},
		{"null", `null`, nil, "the top level must be a JSON object (a section per backend), got null"},
		{"number", `1`, nil, "got 1"},
		{"section is a number", `{"c": 1}`, nil, `config:1:7: c: a section must be an object, got 1`},
		{"section is null", `{"c": null}`, nil, `c: a section must be an object, got null`},
		{"section is an array", `{"c": [1]}`, nil, `c: a section must be an object, got a list`},
		{"device_ids a string", `{"cuda": {"device_ids": "0"}}`, nil, `config:1:25: cuda.device_ids: want a list of whole numbers ≥ 0, got "0"`},
		{"device_ids of strings", `{"cuda": {"device_ids": ["0"]}}`, nil, `cuda.device_ids[0]: want a whole number ≥ 0, got "0"`},
		{"device_ids fraction", `{"cuda": {"device_ids": [0.5]}}`, nil, `cuda.device_ids[0]: want a whole number ≥ 0, got 0.5`},
		{"device_ids negative", `{"cuda": {"device_ids": [1, -1]}}`, nil, `cuda.device_ids[1]: must be ≥ 0, got -1`},
		{"device_ids huge", `{"cuda": {"device_ids": [1e30]}}`, nil, `cuda.device_ids[0]: must be between 0 and 9223372036854775807, got 1e30`},
		{"every fault is reported", `{"a": {"device_ids": [-1]}, "b": 2}`, nil, "a.device_ids[0]: must be ≥ 0, got -1\nconfig:1:34: b: a section must be an object"},
		{"trailing object", `{} {}`, nil, `config:1:4: unexpected "{" after the top-level object (byte offset 3)`},
		{"trailing bracket", `{"c": {}}]`, nil, `config:1:10: unexpected "]" after the top-level object (byte offset 9)`},
		{"trailing brace", `{"c": {}}}`, nil, `unexpected "}" after the top-level object (byte offset 9)`},
		{"trailing word on a later line", "{\n}\n\n  x", nil, `config:4:3: unexpected "x" after the top-level object (byte offset 7)`},
		{"trailing NUL", "{}\x00", nil, `unexpected byte 0x00 after the top-level object (byte offset 2)`},
		{"unterminated", `{"c": {}`, nil, "config:1:9: JSON syntax: unexpected end of the file"},
		{"syntax error by line and column", "{\n  \"c\": {\"threads\" 4}\n}", nil, "config:2:19: JSON syntax: invalid character '4' after object key"},
		{"trailing comma", "{\"c\": {},\n}", nil, "config:2:1: JSON syntax: invalid character '}' looking for beginning of object key string"},
		{"column counts characters", `{"é": {"ö": tru}}`, nil, "config:1:16: JSON syntax: invalid character '}' in literal true"},
		{"duplicate section", "{\"c\": {},\n \"c\": {\"threads\": 2}}", nil, `config:2:2: c: duplicate section "c" (first at line 1, column 2)`},
		{"duplicate key", `{"c": {"threads": 1, "threads": 2}}`, nil, `config:1:22: c.threads: duplicate key "threads" (first at line 1, column 8)`},
		{"duplicate device_ids", `{"c": {"device_ids": [], "device_ids": [0]}}`, nil, `c.device_ids: duplicate key "device_ids"`},
		{"duplicate key deep down", `{"c": {"x": [{"y": {"z": 1, "z": 2}}]}}`, nil, `config:1:29: c.x[0].y.z: duplicate key "z" (first at line 1, column 21)`},
		{"same key in two sections is fine", `{"c": {"threads": 1}, "cblas": {"threads": 1}}`, []string{"c", "cblas"}, ""},
		{"invalid UTF-8", "{\"c\": {\"compiler\": \"g\xffcc\"}}", nil, "config:1:22: invalid UTF-8 (byte offset 21)"},
		{"faults past the first 50 are not listed", `{"c": {"device_ids": [` + strings.Repeat("-1, ", 1000) + `-1]}}`, nil, "config:1:223: c.device_ids[50]: more faults after the first 50 are not listed"},
		{"nested too deep", `{"c": {"x": ` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, nil, "nested more than 64 levels deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.in))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Nil(t, cfg)
				return
			}
			require.NoError(t, err)
			require.ElementsMatch(t, tc.sections, cfg.Sections())
		})
	}
}

func ids(v ...int) *[]int { return &v }

func TestCommonAllows(t *testing.T) {
	for _, tc := range []struct {
		name    string
		common  Common
		allowed []int
		denied  []int
	}{
		{"absent means all", Common{}, []int{0, 1, 7, 1000}, nil},
		{"empty means none", Common{DeviceIDs: ids()}, nil, []int{0, 1, 7}},
		{"a list means those", Common{DeviceIDs: ids(0, 2)}, []int{0, 2}, []int{1, 3, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, i := range tc.allowed {
				require.True(t, tc.common.Allows(i), "device %d", i)
			}
			for _, i := range tc.denied {
				require.False(t, tc.common.Allows(i), "device %d", i)
			}
		})
	}
}

func TestConfigCommonFromFile(t *testing.T) {
	cfg, err := Parse([]byte(`{"cuda": {"device_ids": []}, "opencl": {"device_ids": [1]}, "c": {}}`))
	require.NoError(t, err)
	require.False(t, cfg.Common("cuda").Allows(0), "[] means none")
	require.True(t, cfg.Common("opencl").Allows(1))
	require.False(t, cfg.Common("opencl").Allows(0))
	require.True(t, cfg.Common("c").Allows(3), "absent key means all")
	require.True(t, cfg.Common("vulkan").Allows(0), "absent section means all")
	var none *Config
	require.True(t, none.Common("cuda").Allows(0), "no config means all")
	require.Nil(t, none.Sections())
}

type sectionDefaults struct {
	Enabled bool   `json:"enabled"`
	Memory  int64  `json:"memory"`
	Name    string `json:"name"`
}

func TestConfigSection(t *testing.T) {
	cfg, err := Parse([]byte(`{"good": {"memory": 64}, "bad": {"enabled": true, "memory": "lots"}}`))
	require.NoError(t, err)
	cfg.Path = "/etc/zyx.json"
	defaults := sectionDefaults{Enabled: false, Memory: 1 << 30, Name: "default"}

	v := defaults
	require.NoError(t, cfg.Section("good", &v))
	require.Equal(t, sectionDefaults{Memory: 64, Name: "default"}, v, "only the keys present change")

	v = defaults
	require.NoError(t, cfg.Section("missing", &v))
	require.Equal(t, defaults, v, "a missing section leaves the defaults")

	v = defaults
	err = cfg.Section("bad", &v)
	require.ErrorContains(t, err, `/etc/zyx.json:1:61: bad.memory: want a whole number, got "lots"`)
	require.Equal(t, defaults, v, "a bad section changes nothing, not even the keys before the bad one")

	require.ErrorContains(t, cfg.Section("good", v), "non-nil pointer")
	require.ErrorContains(t, cfg.Section("good", (*sectionDefaults)(nil)), "non-nil pointer")
	require.ErrorContains(t, cfg.Section("good", &map[string]any{}), "pointer to a struct")

	var none *Config
	v = defaults
	require.NoError(t, none.Section("good", &v))
	require.Equal(t, defaults, v)
}

func TestConfigPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct {
		name, xdg, want string
	}{
		{"absolute XDG_CONFIG_HOME", "/srv/cfg", "/srv/cfg/zyx/config.json"},
		{"relative XDG_CONFIG_HOME is ignored", "rel/cfg", filepath.Join(home, ".config/zyx/config.json")},
		{"dot-relative is ignored", "./cfg", filepath.Join(home, ".config/zyx/config.json")},
		{"unset", "", filepath.Join(home, ".config/zyx/config.json")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tc.xdg)
			require.Equal(t, tc.want, Path())
			require.Equal(t, filepath.Dir(tc.want), Dir())
		})
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	good := write("good.json", `{"dummy": {"enabled": true}, "cuda": {"device_ids": [1]}}`)
	for _, tc := range []struct {
		name     string
		path     string
		wantPath string
		sections []string
		err      string // what the error says; "" for none
	}{
		{"valid", good, good, []string{"dummy", "cuda"}, ""},
		{"missing file means defaults", filepath.Join(dir, "absent.json"), "", nil, ""},
		{"unparsable means defaults", write("bad.json", `{"dummy": `), "", nil, "bad.json"},
		{"bad section means defaults", write("badsec.json", `{"dummy": 3}`), "", nil, `badsec.json:1:11: dummy: a section must be an object, got 3`},
		{"duplicate key means defaults", write("dup.json", "{\"dummy\": {\n\"enabled\": true,\n\"enabled\": false}}"), "", nil, `dup.json:3:1: dummy.enabled: duplicate key "enabled" (first at line 2, column 1)`},
		{"trailing data means defaults", write("trail.json", `{"dummy": {}}`+"\n}\n"), "", nil, `trail.json:2:1: unexpected "}" after the top-level object (byte offset 14)`},
		{"a directory means defaults", dir, "", nil, "is a directory"},
		{"no path means defaults", "", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Load(tc.path)
			require.NotNil(t, cfg)
			require.Equal(t, tc.wantPath, cfg.Path)
			require.ElementsMatch(t, tc.sections, cfg.Sections())
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err, "the reason the file was not used is returned")
			}
		})
	}

	// Through the XDG location.
	xdg := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(xdg, "zyx"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(xdg, "zyx", "config.json"), []byte(`{"c": {}}`), 0o600))
	t.Setenv("XDG_CONFIG_HOME", xdg)
	cfg, err := Load(Path())
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, cfg.Sections())
	t.Setenv("XDG_CONFIG_HOME", strings.TrimPrefix(xdg, "/"))
	t.Setenv("HOME", t.TempDir())
	cfg, err = Load(Path())
	require.NoError(t, err)
	require.Empty(t, cfg.Sections(), "a relative XDG_CONFIG_HOME is not read")
}

// testSection has a key of each kind a section can hold.
type testSection struct {
	Compiler string    `json:"compiler"`
	Flags    *[]string `json:"flags"`
	OpenMP   *bool     `json:"openmp"`
	Threads  int       `json:"threads" min:"0" max:"4096"`
	TimeoutS float64   `json:"timeout_s" min:"0.001" max:"86400" unit:"seconds"`
	BudgetS  float64   `json:"budget_s" min:"0" unit:"seconds"`
	Memory   int64     `json:"memory" min:"1" unit:"bytes"`
	Lanes    uint8     `json:"lanes"`
	IDs      *[]int    `json:"device_ids" min:"0"`
	Inner    struct {
		Depth int `json:"depth" min:"1" max:"8"`
	} `json:"inner"`
	Hidden string `json:"-"`
}

func TestSectionFaults(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		err        string // the whole error, or a part of it
	}{
		{"unknown key", `"compilr": "cc"`, `config:1:8: s: unknown key "compilr"; did you mean "compiler"?`},
		{"unknown key by case", `"Threads": 2`, `s: unknown key "Threads"; did you mean "threads"?`},
		{"unknown key near none", `"zzzzzz": 1`, `s: unknown key "zzzzzz" (known: budget_s, compiler, device_ids, flags, inner, lanes, memory, openmp, threads, timeout_s)`},
		{"a json:\"-\" field is no key", `"Hidden": "x"`, `s: unknown key "Hidden"`},
		{"unknown nested key", `"inner": {"dept": 2}`, `config:1:18: s.inner: unknown key "dept"; did you mean "depth"?`},
		{"seconds as a string", `"budget_s": "1"`, `config:1:20: s.budget_s: want a number of seconds ≥ 0, got "1"`},
		{"whole number as a string", `"threads": "x"`, `s.threads: want a whole number between 0 and 4096, got "x"`},
		{"fraction for a whole number", `"threads": 1.5`, `s.threads: want a whole number between 0 and 4096, got 1.5`},
		{"timeout zero", `"timeout_s": 0`, `config:1:21: s.timeout_s: must be between 0.001 and 86400 seconds, got 0`},
		{"timeout negative", `"timeout_s": -1`, `s.timeout_s: must be between 0.001 and 86400 seconds, got -1`},
		{"timeout huge", `"timeout_s": 1e18`, `s.timeout_s: must be between 0.001 and 86400 seconds, got 1e18`},
		{"timeout beyond float64", `"timeout_s": 1e400`, `s.timeout_s: must be between 0.001 and 86400 seconds, got 1e400`},
		{"budget negative", `"budget_s": -5`, `s.budget_s: must be ≥ 0 seconds, got -5`},
		{"threads negative", `"threads": -1`, `s.threads: must be between 0 and 4096, got -1`},
		{"threads too many", `"threads": 5000`, `s.threads: must be between 0 and 4096, got 5000`},
		{"bytes zero", `"memory": 0`, `s.memory: must be ≥ 1 bytes, got 0`},
		{"bytes beyond int64", `"memory": 9223372036854775808`, `s.memory: must be between 1 and 9223372036854775807 bytes, got 9223372036854775808`},
		{"beyond uint8", `"lanes": 300`, `s.lanes: must be between 0 and 255, got 300`},
		{"negative unsigned", `"lanes": -1`, `s.lanes: must be between 0 and 255, got -1`},
		{"bool as a string", `"openmp": "yes"`, `s.openmp: want true or false, got "yes"`},
		{"number for a string", `"compiler": 3`, `s.compiler: want a string, got 3`},
		{"object for a string", `"compiler": {"a": 1}`, `s.compiler: want a string, got an object`},
		{"string for a list", `"flags": "-O2"`, `s.flags: want a list of strings, got "-O2"`},
		{"bad list element", `"flags": ["-O2", 3]`, `config:1:25: s.flags[1]: want a string, got 3`},
		{"null for a number", `"threads": null`, `s.threads: want a whole number between 0 and 4096, got null`},
		{"list for an object", `"inner": [1]`, `s.inner: want an object, got a list`},
		{"nested bound", `"inner": {"depth": 9}`, `s.inner.depth: must be between 1 and 8, got 9`},
		{"long values are shortened", `"compiler": ["` + strings.Repeat("x", 80) + `"]`, `s.compiler: want a string, got a list`},
		{"long strings are shortened", `"threads": "` + strings.Repeat("x", 80) + `"`, `got "` + strings.Repeat("x", 36) + `…`},
		{"every fault is reported", `"threads": -1, "compilr": 1, "flags": [1, 2]`,
			"config:1:19: s.threads: must be between 0 and 4096, got -1\n" +
				`config:1:23: s: unknown key "compilr"; did you mean "compiler"?` + "\n" +
				"config:1:47: s.flags[0]: want a string, got 1\nconfig:1:50: s.flags[1]: want a string, got 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(`{"s": {` + tc.keys + `}}`))
			require.NoError(t, err)
			defaults := testSection{Compiler: "cc", Threads: 3, TimeoutS: 120}
			v := defaults
			err = cfg.Section("s", &v)
			require.ErrorContains(t, err, tc.err)
			require.Equal(t, defaults, v, "a bad section changes nothing")
			for _, goTerm := range []string{"Go ", "unmarshal", "int64", "float64", "uint8", "struct", "testSection", "*[]"} {
				require.NotContains(t, err.Error(), goTerm, "messages speak of JSON values, not Go types")
			}
		})
	}
}

func TestSectionDecodes(t *testing.T) {
	on := true
	for _, tc := range []struct {
		name, keys string
		want       func(*testSection)
	}{
		{"nothing", ``, func(*testSection) {}},
		{"every kind", `"compiler": "clang", "flags": ["-O2"], "openmp": true, "threads": 8, "timeout_s": 0.5, "budget_s": 0, "memory": 4096, "lanes": 255, "inner": {"depth": 1}`,
			func(s *testSection) {
				s.Compiler, s.Flags, s.OpenMP, s.Threads, s.TimeoutS, s.BudgetS, s.Memory, s.Lanes = "clang", &[]string{"-O2"}, &on, 8, 0.5, 0, 4096, 255
				s.Inner.Depth = 1
			}},
		{"a whole number with an exponent", `"threads": 1e3`, func(s *testSection) { s.Threads = 1000 }},
		{"a whole number with a point", `"threads": 2.0`, func(s *testSection) { s.Threads = 2 }},
		{"the bounds are included", `"threads": 4096, "timeout_s": 86400`, func(s *testSection) { s.Threads, s.TimeoutS = 4096, 86400 }},
		{"null for a pointer means absent", `"openmp": null, "flags": null`, func(s *testSection) { s.OpenMP, s.Flags = nil, nil }},
		{"an empty list", `"flags": []`, func(s *testSection) { s.Flags = &[]string{} }},
		{"device_ids reaches a struct that has it", `"device_ids": [2, 0]`, func(s *testSection) { s.IDs = &[]int{2, 0} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(`{"s": {` + tc.keys + `}}`))
			require.NoError(t, err)
			defaults := testSection{Compiler: "cc", Threads: 3, TimeoutS: 120, OpenMP: &on, Flags: &[]string{"-O3"}}
			v := defaults
			require.NoError(t, cfg.Section("s", &v))
			want := defaults
			tc.want(&want)
			require.Equal(t, want, v)
		})
	}
}

func TestSectionRejectsUnknownKeys(t *testing.T) {
	cfg, err := Parse([]byte(`{"c": {"device_ids": [0], "compilr": "clang", "memory": 5}}`))
	require.NoError(t, err)
	v := sectionDefaults{Memory: 1}
	err = cfg.Section("c", &v)
	require.ErrorContains(t, err, `config:1:27: c: unknown key "compilr" (known: device_ids, enabled, memory, name)`)
	require.Equal(t, sectionDefaults{Memory: 1}, v, "nothing changes")

	ok, err := Parse([]byte(`{"c": {"device_ids": [0], "memory": 5}}`))
	require.NoError(t, err)
	require.NoError(t, ok.Section("c", &v), "device_ids is every section's key")
	require.EqualValues(t, 5, v.Memory)
}

func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"cuda": {"device_ids": [0, 1]}}`, `{"dummy": {"enabled": true, "memory": 1024}}`,
		`{"c": {"device_ids": []}}`, `{"c": null}`, `[]`, `null`, `{"a": {"device_ids": [1e400]}}`,
		`{"a": {"device_ids": [-1]}}`, `{"a":{}} x`, `{"a": {"b": {"c": [[[[]]]]}}}`, "{\"\xff\": {}}",
		`{"a": {"threads": 1, "threads": 2}}`, `{"a": {}, "a": {}}`, `{"a": {"timeout_s": 1e400, "compilr": "x"}}`,
		`{"a": {"flags": ["-O2", 3], "inner": {"depth": 9}, "lanes": -1, "openmp": null}}`, "{\n\"a\": {}}\n]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse(data)
		if err != nil {
			if cfg != nil {
				t.Fatalf("error %v with a config", err)
			}
			return
		}
		// Every accepted section decodes its common keys and a typed
		// section without panicking; a failed decode keeps the defaults.
		for _, name := range cfg.Sections() {
			_ = cfg.Common(name).Allows(0)
			v := sectionDefaults{Memory: 7, Name: "d"}
			if err := cfg.Section(name, &v); err != nil && v != (sectionDefaults{Memory: 7, Name: "d"}) {
				t.Fatalf("section %q: failed decode changed the defaults to %+v", name, v)
			}
			var all testSection
			_ = cfg.Section(name, &all)
		}
	})
}
