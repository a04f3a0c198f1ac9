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
		{"unknown keys are the backend's", `{"c": {"compiler": "clang", "x": [1, {"y": null}]}}`, []string{"c"}, ""},
		{"empty input", ``, nil, "config"},
		{"not JSON", `device_ids = 1`, nil, "config"},
		{"array", `[]`, nil, "config"},
		{"null", `null`, nil, "top level must be an object"},
		{"number", `1`, nil, "config"},
		{"section is a number", `{"c": 1}`, nil, `section "c" must be an object`},
		{"section is null", `{"c": null}`, nil, `section "c" must be an object`},
		{"section is an array", `{"c": [1]}`, nil, `section "c" must be an object`},
		{"device_ids a string", `{"cuda": {"device_ids": "0"}}`, nil, `section "cuda": device_ids`},
		{"device_ids of strings", `{"cuda": {"device_ids": ["0"]}}`, nil, `section "cuda": device_ids`},
		{"device_ids fraction", `{"cuda": {"device_ids": [0.5]}}`, nil, `section "cuda": device_ids`},
		{"trailing data", `{} {}`, nil, "trailing data"},
		{"unterminated", `{"c": {}`, nil, "config"},
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
	require.ErrorContains(t, err, `section "bad"`)
	require.ErrorContains(t, err, "/etc/zyx.json")
	require.Equal(t, defaults, v, "a bad section changes nothing, not even the keys before the bad one")

	require.ErrorContains(t, cfg.Section("good", v), "non-nil pointer")
	require.ErrorContains(t, cfg.Section("good", (*sectionDefaults)(nil)), "non-nil pointer")

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
		{"bad section means defaults", write("badsec.json", `{"dummy": 3}`), "", nil, `section "dummy" must be an object`},
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

func TestSectionRejectsUnknownKeys(t *testing.T) {
	cfg, err := Parse([]byte(`{"c": {"device_ids": [0], "compilr": "clang", "memory": 5}}`))
	require.NoError(t, err)
	v := sectionDefaults{Memory: 1}
	err = cfg.Section("c", &v)
	require.ErrorContains(t, err, `section "c"`)
	require.ErrorContains(t, err, "compilr", "the error names the unknown key")
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
			var m map[string]any
			_ = cfg.Section(name, &m)
		}
	})
}
