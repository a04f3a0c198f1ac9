package backends

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"

	json "github.com/goccy/go-json"
)

// Config is the backend config file: one JSON object with a section per
// backend ("c", "cblas", "cuda", "opencl", "vulkan", "tenstorrent", "dummy").
// Every section may hold device_ids; the other keys are the backend's own
// and documented in README.md.
type Config struct {
	// Path is the file the config came from; empty for defaults.
	Path     string
	sections map[string]json.RawMessage
}

// Common holds the keys every section understands.
type Common struct {
	// DeviceIDs: absent means every device, [] means none, a list means
	// those device ordinals only.
	DeviceIDs *[]int `json:"device_ids"`
}

// Allows reports whether device ordinal i may be used.
func (c Common) Allows(i int) bool {
	if c.DeviceIDs == nil {
		return true
	}
	for _, id := range *c.DeviceIDs {
		if id == i {
			return true
		}
	}
	return false
}

// ParseConfig decodes a config file's bytes. Every top-level value must be
// an object (a section).
func ParseConfig(data []byte) (*Config, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if raw == nil {
		return nil, fmt.Errorf("config: top level must be an object")
	}
	if dec.More() {
		return nil, fmt.Errorf("config: trailing data after the object")
	}
	for name, sec := range raw {
		t := bytes.TrimSpace(sec)
		if len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("config: section %q must be an object", name)
		}
		var c Common
		if err := json.Unmarshal(sec, &c); err != nil {
			return nil, fmt.Errorf("config: section %q: device_ids: %w", name, err)
		}
	}
	return &Config{sections: raw}, nil
}

// Section decodes the named section into v, which holds the defaults. A
// missing section leaves v alone. On a decode error v is left as it was and
// the error says which section failed.
func (c *Config) Section(name string, v any) error {
	if c == nil {
		return nil
	}
	sec, ok := c.sections[name]
	if !ok {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("config: section %q: decode target must be a non-nil pointer", name)
	}
	// Decode into a copy of the defaults so a bad section changes nothing.
	scratch := reflect.New(rv.Elem().Type())
	scratch.Elem().Set(rv.Elem())
	if err := json.Unmarshal(sec, scratch.Interface()); err != nil {
		return fmt.Errorf("config %s: section %q: %w", c.Path, name, err)
	}
	rv.Elem().Set(scratch.Elem())
	return nil
}

// Common decodes the keys every section shares.
func (c *Config) Common(name string) Common {
	var cm Common
	if c == nil {
		return cm
	}
	if sec, ok := c.sections[name]; ok {
		_ = json.Unmarshal(sec, &cm) // validated by ParseConfig
	}
	return cm
}

// Sections lists the section names present.
func (c *Config) Sections() []string {
	if c == nil {
		return nil
	}
	out := make([]string, 0, len(c.sections))
	for k := range c.sections {
		out = append(out, k)
	}
	return out
}

// ConfigPath is where the config file is looked for:
// $XDG_CONFIG_HOME/zyx/config.json when XDG_CONFIG_HOME is absolute, else
// ~/.config/zyx/config.json. It is empty when neither can be formed.
func ConfigPath() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "zyx", "config.json")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".config", "zyx", "config.json")
	}
	return ""
}

// ConfigDir is the directory that holds the config file.
func ConfigDir() string {
	p := ConfigPath()
	if p == "" {
		return ""
	}
	return filepath.Dir(p)
}

// LoadConfig reads the config file at path. A missing or unparsable file
// gives the defaults (an empty config) and a debug line saying why.
func LoadConfig(path string) *Config {
	if path == "" {
		Debug(DebugDevice, "no config path (no XDG_CONFIG_HOME or home directory); using defaults")
		return &Config{}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		Debug(DebugDevice, "config not read; using defaults", "path", path, "err", err)
		return &Config{}
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		Debug(DebugDevice, "config not parsed; using defaults", "path", path, "err", err)
		return &Config{}
	}
	cfg.Path = path
	Debug(DebugDevice, "config loaded", "path", path, "sections", strings.Join(cfg.Sections(), ","))
	return cfg
}

var (
	configOnce sync.Once
	configVal  *Config
	configSet  *Config
	configMu   sync.Mutex
)

// CurrentConfig is the process-wide config, read once on first use.
func CurrentConfig() *Config {
	configMu.Lock()
	over := configSet
	configMu.Unlock()
	if over != nil {
		return over
	}
	configOnce.Do(func() { configVal = LoadConfig(ConfigPath()) })
	return configVal
}

// SetConfig replaces the process-wide config; backends opened afterwards see
// it. It exists for tests and for programs that build their config in code.
func SetConfig(c *Config) {
	configMu.Lock()
	configSet = c
	configMu.Unlock()
}

// DebugMask is the ZYX_DEBUG bitmask, with zyx's meanings.
type DebugMask uint32

// The debug bits.
const (
	DebugDevice   DebugMask = 1  // device and backend initialisation, allocations
	DebugPerf     DebugMask = 2  // timings
	DebugSched    DebugMask = 4  // scheduling and device selection
	DebugCompile  DebugMask = 8  // program compilation
	DebugAssembly DebugMask = 16 // generated source and assembly
)

var debugMask = sync.OnceValue(func() DebugMask {
	v, err := strconv.ParseUint(strings.TrimSpace(os.Getenv("ZYX_DEBUG")), 0, 32)
	if err != nil {
		return 0
	}
	return DebugMask(v)
})

// DebugEnabled reports whether any of the bits in m are set in ZYX_DEBUG.
func DebugEnabled(m DebugMask) bool { return debugMask()&m != 0 }

// Debug logs msg through slog when ZYX_DEBUG enables m. It logs at info
// level so that the default handler shows it.
func Debug(m DebugMask, msg string, args ...any) {
	if DebugEnabled(m) {
		slog.Info("zyx: "+msg, args...)
	}
}
