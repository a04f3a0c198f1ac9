package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// boardSection checks a name against a list, as a backend's Validate does.
type boardSection struct {
	Board  string `json:"board"`
	Lanes  int    `json:"lanes" min:"1" max:"4"`
	Shared bool   `json:"shared"`
}

func (s *boardSection) Validate() error {
	var errs []error
	if s.Board != "n150" && s.Board != "n300" {
		errs = append(errs, &KeyError{Key: "board", Msg: fmt.Sprintf("unknown board %q", s.Board)})
	}
	if s.Shared && s.Lanes > 2 {
		errs = append(errs, &KeyError{Key: "shared", Msg: "takes at most 2 lanes"})
	}
	if s.Lanes == 3 {
		errs = append(errs, errors.New("3 lanes are not wired"))
	}
	return errors.Join(errs...)
}

// The test sections register in init, as backends do, so that -count=N
// runs the tests again against the same registrations.
func init() {
	RegisterSection("test-check", testSection{Threads: 1})
	RegisterSection("test-board", &boardSection{Board: "n150", Lanes: 1})
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		also []string
		want []string // every fault, in file order
	}{
		{"clean", `{"test-check": {"threads": 2}, "test-board": {"board": "n300"}}`, nil, nil},
		{"no sections", `{}`, nil, nil},
		{"unknown section with a near name", `{"test-chek": {}}`, nil, []string{`config:1:2: unknown section "test-chek"; did you mean "test-check"?`}},
		{"unknown section with none near", `{"zz": {}}`, []string{"driver-own"}, []string{`config:1:2: unknown section "zz" (known: `}},
		{"a section a driver decodes itself", `{"driver-own": {"anything": [1]}}`, []string{"driver-own"}, nil},
		{"every section's faults, in file order",
			"{\"test-board\": {\"lanes\": 9},\n \"test-check\": {\"threads\": \"2\", \"timeout\": 1},\n \"cuad\": {}}", []string{"cuda"},
			[]string{
				"config:1:26: test-board.lanes: must be between 1 and 4, got 9",
				`config:2:28: test-check.threads: want a whole number between 0 and 4096, got "2"`,
				`config:2:33: test-check: unknown key "timeout"; did you mean "timeout_s"?`,
				`config:3:2: unknown section "cuad"; did you mean "cuda"?`,
			}},
		{"validate sees the defaults", `{"test-board": {"shared": true}}`, nil, nil},
		{"validate faults at their keys", `{"test-board": {"board": "n15", "lanes": 3, "shared": true}}`, nil, []string{
			`config:1:26: test-board.board: unknown board "n15"`,
			"config:1:55: test-board.shared: takes at most 2 lanes",
			"config:1:16: test-board: 3 lanes are not wired",
		}},
		{"validate runs on the defaults plus the keys", `{"test-board": {"board": ""}}`, nil, []string{`test-board.board: unknown board ""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse([]byte(tc.in))
			require.NoError(t, err)
			faults := cfg.Check(tc.also...)
			require.Len(t, faults, len(tc.want), "%v", faults)
			for i, w := range tc.want {
				require.Contains(t, faults[i].Error(), w)
				var ce *Error
				require.ErrorAs(t, faults[i], &ce, "each fault is an *Error")
			}
		})
	}
	var none *Config
	require.Empty(t, none.Check())
	require.Empty(t, (&Config{}).Check())
}

func TestSectionRunsValidate(t *testing.T) {
	cfg, err := Parse([]byte(`{"b": {"board": "p150"}}`))
	require.NoError(t, err)
	v := boardSection{Board: "n150"}
	require.ErrorContains(t, cfg.Section("b", &v), `config:1:17: b.board: unknown board "p150"`)
	require.Equal(t, boardSection{Board: "n150"}, v, "a section Validate refuses changes nothing")
}

func TestRegisterSectionRefusesProgrammingErrors(t *testing.T) {
	type mapField struct {
		M map[string]int `json:"m"`
	}
	type badMin struct {
		N int `json:"n" min:"lots"`
	}
	type crossed struct {
		N int `json:"n" min:"5" max:"1"`
	}
	type boundedString struct {
		S string `json:"s" min:"1"`
	}
	for _, tc := range []struct {
		name     string
		defaults any
		panic    string
	}{
		{"twice", testSection{}, "RegisterSection called twice for test-check"},
		{"not a struct", 3, "defaults must be a struct, not int"},
		{"nil", nil, "defaults must be a struct"},
		{"a map field", mapField{}, "a config cannot hold a map[string]int"},
		{"a bad bound", badMin{}, `min tag "lots" is not a number`},
		{"crossed bounds", crossed{}, "min 5 is above max 1"},
		{"a bounded string", boundedString{}, "min and max bound numbers only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := "test-check"
			if tc.name != "twice" {
				name = "test-refused-" + tc.name
			}
			defer func() {
				p := recover()
				require.NotNil(t, p)
				require.Contains(t, fmt.Sprint(p), tc.panic)
			}()
			RegisterSection(name, tc.defaults)
		})
	}
	_, ok := registeredSections()["test-refused-a map field"]
	require.False(t, ok, "a refused section is not registered")
}

func TestSuggest(t *testing.T) {
	known := []string{"budget_s", "record", "cuda", "c", "cblas", "threads", "timeout_s", "emu_board"}
	for _, tc := range []struct{ name, want string }{
		{"budget", "budget_s"},
		{"cdua", "cuda"},
		{"thread", "threads"},
		{"Threads", "threads"},
		{"timeout", "timeout_s"},
		{"emuboard", "emu_board"},
		{"recrod", "record"},
		{"cbla", "cblas"},
		{"vulkan", ""},
		{"x", "c"},
		{"", "c"},
		{"zzzzzzzz", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, Suggest(tc.name, known))
		})
	}
	require.Equal(t, "", Suggest("cuda", nil))
}

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		err  Error
		want string
	}{
		{Error{File: "/h/zyx/config.json", Line: 3, Column: 7, Field: "c.threads", Msg: "bad"}, "/h/zyx/config.json:3:7: c.threads: bad"},
		{Error{Line: 1, Column: 1, Msg: "the file is empty"}, "config:1:1: the file is empty"},
		{Error{File: "/f", Msg: "no place"}, "/f: no place"},
	} {
		require.Equal(t, tc.want, tc.err.Error())
	}
}

// Load names the file in every fault, and Section and Check do too.
func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	require.NoError(t, os.WriteFile(path, []byte("{\n  \"test-check\": {\"threads\": -2}\n}"), 0o600))
	cfg, err := Load(path)
	require.NoError(t, err)
	faults := cfg.Check()
	require.Len(t, faults, 1)
	require.Equal(t, path+":2:29: test-check.threads: must be between 0 and 4096, got -2", faults[0].Error())
	var v testSection
	require.EqualError(t, cfg.Section("test-check", &v), faults[0].Error())

	require.NoError(t, os.WriteFile(path, []byte("{\"c\": {}}\n\n,"), 0o600))
	_, err = Load(path)
	var ce *Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, Error{File: path, Line: 3, Column: 1, Msg: `unexpected "," after the top-level object (byte offset 11); the file must hold one JSON object`}, *ce)
	require.True(t, strings.HasPrefix(err.Error(), path+":3:1: "))
}
