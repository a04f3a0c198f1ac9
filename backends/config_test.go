package backends

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/registry"
)

// sectioned is a driver whose config section is not its name.
type sectioned struct{ driverFunc }

func (sectioned) ConfigSection() string { return "beta-section" }

// configRuntime opens a runtime of backend alpha alone, over a registry that
// also holds beta (which reads "beta-section"), with config text.
func configRuntime(t *testing.T, text string) *Runtime {
	t.Helper()
	none := driverFunc(func(context.Context, *registry.Env) ([]driver.Device, error) { return nil, ErrNoDevice })
	drivers := map[string]any{"alpha": none, "beta": sectioned{none}}
	lookup := func(name string) (any, error) { return drivers[name], nil }
	cfg, err := ParseConfig([]byte(text))
	require.NoError(t, err)
	rt, err := openRuntime(bg, Options{Config: cfg, Backends: []string{"alpha"}}, lookup, []string{"alpha", "beta"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

func TestConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"clean", `{"alpha": {}, "select": {"budget_s": 2, "record": "off"}}`, nil},
		{"the section of a backend this runtime does not open", `{"beta-section": {"device_ids": [0]}}`, nil},
		{"select key typo", `{"select": {"budget": 1}}`, []string{`config:1:13: select: unknown key "budget"; did you mean "budget_s"?`}},
		{"select wrong type", `{"select": {"budget_s": "1"}}`, []string{`config:1:25: select.budget_s: want a number of seconds between 0 and 86400, got "1"`}},
		{"select negative", `{"select": {"budget_s": -5}}`, []string{`select.budget_s: must be between 0 and 86400 seconds, got -5`}},
		{"select beyond a day", `{"select": {"budget_s": 1e18}}`, []string{`select.budget_s: must be between 0 and 86400 seconds, got 1e18`}},
		{"select record not a string", `{"select": {"record": false}}`, []string{`select.record: want a string, got false`}},
		{"unknown section", `{"alpa": {}, "beta-sektion": {}}`, []string{
			`config:1:2: unknown section "alpa"; did you mean "alpha"?`,
			`config:1:14: unknown section "beta-sektion"; did you mean "beta-section"?`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := configRuntime(t, tc.in)
			require.NoError(t, rt.ConfigErr())
			require.Equal(t, len(tc.want), len(rt.ConfigProblems()), "%q", rt.ConfigProblems())
			for i, w := range tc.want {
				require.Contains(t, rt.ConfigProblems()[i], w)
			}
		})
	}
}

func TestSelectSection(t *testing.T) {
	rt := configRuntime(t, `{"select": {"budget_s": 2.5, "record": "off"}}`)
	require.Equal(t, SelectConfig{BudgetS: 2.5, Record: "off"}, rt.selectCfg)
	var o selectOpts
	for _, opt := range rt.selectDefaults() {
		opt(&o)
	}
	require.Equal(t, 2500*time.Millisecond, o.budget)

	rt = configRuntime(t, `{"select": {"budget_s": 2.5, "record": 7}}`)
	require.Equal(t, SelectConfig{}, rt.selectCfg, "a bad select section keeps every default")
	require.Len(t, rt.ConfigProblems(), 1)
}

// The config file a runtime reads itself: a file it cannot parse is
// ConfigErr, at its line and column, and the runtime runs on the defaults.
func TestConfigErrNamesTheFault(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "zyx"), 0o700))
	path := filepath.Join(dir, "zyx", "config.json")
	require.NoError(t, os.WriteFile(path, []byte("{\"select\": {\"budget_s\": 1,\n \"budget_s\": 2}}"), 0o600))
	t.Setenv("XDG_CONFIG_HOME", dir)
	rt, err := openRuntime(bg, Options{}, func(string) (any, error) { return nil, nil }, nil)
	require.NoError(t, err)
	defer rt.Close()
	require.EqualError(t, rt.ConfigErr(), path+`:2:2: select.budget_s: duplicate key "budget_s" (first at line 1, column 13)`)
	require.Empty(t, rt.ConfigProblems())
	require.Empty(t, rt.Config().Path, "the file is not used")
}
