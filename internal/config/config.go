// Package config reads the zyx config file: one JSON object with a section
// per backend, each holding device_ids and the backend's own keys. Package
// backends re-exports the type; drivers decode their section through
// backends/driver.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sync"
)

// Config is the backend config file: one JSON object with a section per
// backend ("c", "cblas", "cuda", "opencl", "vulkan", "tenstorrent", "dummy")
// and "select". Every section may hold device_ids; the other keys are the
// section's own and documented in README.md.
type Config struct {
	// Path is the file the config came from; empty for defaults.
	Path string
	data []byte
	root *value // nil for defaults
}

// Common holds the keys every section understands.
type Common struct {
	// DeviceIDs: absent means every device, [] means none, a list means
	// those device ordinals only.
	DeviceIDs *[]int `json:"device_ids" min:"0"`
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

// commonKey is the key every section has.
const commonKey = "device_ids"

// Parse decodes a config file's bytes: one JSON object whose every value is
// an object (a section), with no key twice in any object, nothing after the
// object, and device_ids, where given, a list of device ordinals. Every
// fault is an *Error at its line and column (several are joined).
func Parse(data []byte) (*Config, error) { return parse(data, "") }

func parse(data []byte, file string) (*Config, error) {
	root, err := parseTree(data)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = file
		}
		return nil, err
	}
	d := &decoder{data: data, file: file}
	if root.kind != kindObject {
		d.fault(root.start, "", "the top level must be a JSON object (a section per backend), got %s", gotText(data, root))
		return nil, errors.Join(d.errs...)
	}
	for _, m := range root.members {
		if m.val.kind != kindObject {
			d.fault(m.val.start, m.key, "a section must be an object, got %s", gotText(data, m.val))
			continue
		}
		var cm Common
		decodeCommon(d, m, &cm)
	}
	if len(d.errs) > 0 {
		return nil, errors.Join(d.errs...)
	}
	return &Config{Path: file, data: data, root: root}, nil
}

// decodeCommon decodes section m's device_ids into cm.
func decodeCommon(d *decoder, m member, cm *Common) {
	ids := m.val.lookup(commonKey)
	if ids == nil {
		return
	}
	s, _ := schemaOf(reflect.TypeFor[Common]())
	f := s.field(commonKey)
	d.value(reflect.ValueOf(cm).Elem().Field(f.index), ids.val, joinPath(m.key, commonKey), f.lim)
}

// Section decodes the named section into v, a pointer to a struct that
// holds the defaults. A missing section leaves v alone. Every key must be
// one of the struct's (device_ids, every section's key, is decoded into the
// struct when it has the field) and every value of its field's type and
// within its bounds (see the tags below); a key that is not is an *Error
// naming the key path, with the closest known key. Every fault is reported
// (several are joined), and on any fault v is left as it was.
func (c *Config) Section(name string, v any) error {
	if c == nil || c.root == nil {
		return nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("config: section %q: decode target must be a non-nil pointer to a struct, not %T", name, v)
	}
	return errors.Join(c.section(name, rv)...)
}

// section decodes section name into the struct rv points to, all or
// nothing, and returns every fault.
func (c *Config) section(name string, rv reflect.Value) []error {
	m := c.root.lookup(name)
	if m == nil {
		return nil
	}
	// Decode into a copy of the defaults so a bad section changes nothing.
	scratch := reflect.New(rv.Elem().Type())
	scratch.Elem().Set(rv.Elem())
	d := &decoder{data: c.data, file: c.Path}
	d.object(scratch.Elem(), m.val, name, commonKey)
	if len(d.errs) == 0 {
		if v, ok := scratch.Interface().(Validator); ok {
			d.validation(m.val, name, v.Validate())
		}
	}
	if len(d.errs) > 0 {
		return d.errs
	}
	rv.Elem().Set(scratch.Elem())
	return nil
}

// Validator is a section type with checks beyond its keys' types and
// bounds: a name from a list, keys that go together. Validate runs on the
// decoded section (the defaults with the file's keys over them); a fault it
// returns as a *KeyError (several may be joined) is reported at that key.
type Validator interface{ Validate() error }

// KeyError is a fault of one key of a section, found by Validate.
type KeyError struct {
	Key string // the key within the section: "emu_board"
	Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

// validation reports what Validate returned for section sec.
func (d *decoder) validation(sec *value, name string, err error) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			d.validation(sec, name, e)
		}
		return
	}
	var ke *KeyError
	if errors.As(err, &ke) {
		at := sec.start
		if m := sec.lookup(ke.Key); m != nil {
			at = m.val.start
		}
		d.fault(at, joinPath(name, ke.Key), "%s", ke.Msg)
		return
	}
	d.fault(sec.start, name, "%v", err)
}

// Common decodes the keys every section shares.
func (c *Config) Common(name string) Common {
	var cm Common
	if c == nil || c.root == nil {
		return cm
	}
	if m := c.root.lookup(name); m != nil {
		decodeCommon(&decoder{data: c.data}, *m, &cm) // checked by Parse
	}
	return cm
}

// Sections lists the section names present, in file order.
func (c *Config) Sections() []string {
	if c == nil || c.root == nil {
		return nil
	}
	out := make([]string, 0, len(c.root.members))
	for _, m := range c.root.members {
		out = append(out, m.key)
	}
	return out
}

// Check decodes every section of the file: a section registered with
// RegisterSection into its defaults, as Section does; a section in also (one
// that a driver decodes with a type of its own) only as far as Parse did.
// Any other section is unknown, reported with the closest known name. It
// returns every fault, in file order.
func (c *Config) Check(also ...string) []error {
	if c == nil || c.root == nil {
		return nil
	}
	registered := registeredSections()
	var errs []error
	for _, m := range c.root.members {
		if defaults, ok := registered[m.key]; ok {
			v := reflect.New(defaults.Type())
			v.Elem().Set(defaults)
			errs = append(errs, c.section(m.key, v)...)
			continue
		}
		if contains(also, m.key) {
			continue
		}
		known := append([]string(nil), also...)
		for name := range registered {
			known = append(known, name)
		}
		e := errorAt(c.data, m.keyPos, "", "%s", unknownName("section", m.key, known))
		e.File = c.Path
		errs = append(errs, e)
	}
	return errs
}

var (
	sectionsMu sync.RWMutex
	sections   = map[string]reflect.Value{}
)

// RegisterSection makes section name known, with defaults (a struct, or a
// pointer to one) as its keys, types, bounds and default values, so that
// Check validates the section before anything reads it. Like a driver's
// registration, it panics when a name is registered twice or the type is
// not one a config can hold: both are programming errors caught at init.
func RegisterSection(name string, defaults any) {
	v := reflect.ValueOf(defaults)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || v.Kind() != reflect.Struct {
		panic(fmt.Sprintf("config: RegisterSection %s: defaults must be a struct, not %T", name, defaults))
	}
	if _, err := schemaOf(v.Type()); err != nil {
		panic("config: RegisterSection " + name + ": " + err.Error())
	}
	sectionsMu.Lock()
	defer sectionsMu.Unlock()
	if _, dup := sections[name]; dup {
		panic("config: RegisterSection called twice for " + name)
	}
	copied := reflect.New(v.Type()).Elem()
	copied.Set(v)
	sections[name] = copied
}

// registeredSections is a copy of the registered sections and their
// defaults.
func registeredSections() map[string]reflect.Value {
	sectionsMu.RLock()
	defer sectionsMu.RUnlock()
	out := make(map[string]reflect.Value, len(sections))
	for k, v := range sections {
		out[k] = v
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
	cfg, err := parse(data, path)
	if err != nil {
		return &Config{}, err
	}
	return cfg, nil
}
