// Package config reads the zyx config file: one JSON object with a section
// per backend, each holding device_ids and the backend's own keys. Package
// backends re-exports the type; drivers decode their section through
// backends/driver.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"

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

// Parse decodes a config file's bytes. Every top-level value must be
// an object (a section).
func Parse(data []byte) (*Config, error) {
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
// missing section leaves v alone. Keys the section's type does not know
// (besides device_ids, which every section has) are an error, so a typo
// never silently leaves a default in place. On any error v is left as it was
// and the error says which section and key failed.
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
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(sec, &fields); err != nil {
		return c.errorf(name, err)
	}
	delete(fields, "device_ids") // the common key, checked by Parse
	own, err := json.Marshal(fields)
	if err != nil {
		return c.errorf(name, err)
	}
	// Decode into a copy of the defaults so a bad section changes nothing.
	scratch := reflect.New(rv.Elem().Type())
	scratch.Elem().Set(rv.Elem())
	dec := json.NewDecoder(bytes.NewReader(own))
	if rv.Elem().Kind() == reflect.Struct {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(scratch.Interface()); err != nil {
		return c.errorf(name, err)
	}
	rv.Elem().Set(scratch.Elem())
	return nil
}

func (c *Config) errorf(section string, err error) error {
	where := "config"
	if c.Path != "" {
		where += " " + c.Path
	}
	return fmt.Errorf("%s: section %q: %w", where, section, err)
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

// Path is where the config file is looked for:
// $XDG_CONFIG_HOME/zyx/config.json when XDG_CONFIG_HOME is absolute, else
// ~/.config/zyx/config.json. It is empty when neither can be formed.
func Path() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "zyx", "config.json")
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		return filepath.Join(home, ".config", "zyx", "config.json")
	}
	return ""
}

// Dir is the directory that holds the config file.
func Dir() string {
	p := Path()
	if p == "" {
		return ""
	}
	return filepath.Dir(p)
}

// Load reads the config file at path. A missing file (or an empty path) is
// no config: the defaults, with no error. A file that cannot be read or
// parsed gives the defaults and the error, which callers show (zyx-tt probe
// does) rather than swallow.
func Load(path string) (*Config, error) {
	if path == "" {
		return &Config{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return &Config{}, fmt.Errorf("config %s: %w", path, err)
	}
	cfg, err := Parse(data)
	if err != nil {
		return &Config{}, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}
