// Package protogen reads the one description of the tt-runtime protocol,
// protocol/protocol.json, and writes what is derived from it: the Go types
// of package ttruntime (ttruntime/protocol_gen.go), the C++ enums and field
// tables the runtime's request parser reads requests with
// (cpp/src/protocol_enums_gen.hpp, cpp/src/protocol_fields_gen.hpp), and the
// field tables of docs/protocol.md. `go generate ./ttruntime` runs it; the
// package's tests fail when a committed file is not what the schema makes.
package protogen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/zyxtt/zyxtt/internal/strictjson"
)

// Schema is protocol/protocol.json.
type Schema struct {
	// Version is the protocol version (init's protocol field).
	Version int `json:"version"`
	// Limits are the program model's fixed counts, each a named constant in
	// Go and C++ so that no rule writes the number itself.
	Limits   []*Limit   `json:"limits"`
	Commands []*Command `json:"commands"`
	Enums    []*Enum    `json:"enums"`
	Messages []*Message `json:"messages"`

	enums    map[string]*Enum
	messages map[string]*Message
}

// Limit is one fixed count of the program model (the circular buffers of a
// core, say): ttruntime gets a Go constant and the runtime a C++ constant of
// that value.
type Limit struct {
	Name  string `json:"name"`
	Value uint32 `json:"value"`
	Doc   string `json:"doc"`
}

// Command is one command: its name (the request's cmd) and the messages of
// its request's fields and of its success reply's fields (none when empty).
type Command struct {
	Name    string `json:"name"`
	Request string `json:"request"`
	Reply   string `json:"reply"`
	Doc     string `json:"doc"`
}

// Enum is a set of names a string field takes.
type Enum struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Title, when set, is what docs/protocol.md writes for the type of a
	// field of this enum, instead of listing the names (an enum with a table
	// of its own).
	Title string `json:"title"`
	// GoPrefix, when set, makes a Go constant of each value: the prefix and
	// the value's name in Go spelling.
	GoPrefix string      `json:"go_prefix"`
	Values   []EnumValue `json:"values"`
	// CppExtra are enumerators the C++ enum has beyond the protocol's names.
	CppExtra []EnumValue `json:"cpp_extra"`
}

// EnumValue is one name of an enum.
type EnumValue struct {
	Name string `json:"name"`
	Doc  string `json:"doc"`
	// Go overrides the Go constant's name.
	Go string `json:"go"`
	// CppValue gives the C++ enumerator a number of its own.
	CppValue *int64 `json:"cpp_value"`
}

// Message is the fields of one JSON object.
type Message struct {
	Name string `json:"name"`
	// Title names the object in docs/protocol.md ("kernel").
	Title string `json:"title"`
	// Doc is the Go type's doc comment.
	Doc string `json:"doc"`
	// Tag names the enum field whose value selects the fields of a variant
	// (see Field.When).
	Tag string `json:"tag"`
	// OneOf lists groups of optional fields of which a request gives
	// exactly one.
	OneOf [][]string `json:"one_of"`
	// GoSkip: no Go type (the request header, which the driver writes
	// itself).
	GoSkip bool     `json:"go_skip"`
	Fields []*Field `json:"fields"`
}

// Field is one field of a message, or (Embed) the fields of another
// message in its place.
type Field struct {
	Embed    string `json:"embed"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	// Default is the value the runtime takes when the field is absent.
	Default json.RawMessage `json:"default"`
	// DefaultDoc describes a default that depends on other fields.
	DefaultDoc string `json:"default_doc"`
	// When lists the values of the message's tag whose variants take the
	// field; empty: every variant.
	When []string `json:"when"`
	// Refused is the error message for the field given in another variant;
	// empty: it is an unknown field there.
	Refused string `json:"refused"`
	// Missing is a note on the error for a missing required field.
	Missing string `json:"missing"`
	// Example is the value the protocol tests send (else one of the type's).
	Example json.RawMessage `json:"example"`
	Doc     string          `json:"doc"`
	Go      GoField         `json:"go"`

	typ *Type
}

// GoField overrides how a field looks in Go.
type GoField struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Omitempty *bool  `json:"omitempty"`
}

// Kind is the shape of a field's type.
type Kind int

// The kinds of types.
const (
	KindU32 Kind = iota
	KindU64
	KindBool
	KindString
	KindEnum
	KindCore
	KindCoreRangeSet
	KindU32Pair
	KindList
	KindMap
	KindMessage
)

// Type is a parsed field type.
type Type struct {
	Kind    Kind
	Elem    *Type    // list, map
	Enum    *Enum    // enum
	Message *Message // message
}

var builtinTypes = map[string]Kind{
	"u32": KindU32, "u64": KindU64, "bool": KindBool, "string": KindString,
	"core": KindCore, "core_range_set": KindCoreRangeSet, "u32x2": KindU32Pair,
}

// Typ is the field's parsed type (nil for an embed).
func (f *Field) Typ() *Type { return f.typ }

// Enum returns the named enum, or nil.
func (s *Schema) Enum(name string) *Enum { return s.enums[name] }

// Message returns the named message, or nil.
func (s *Schema) Message(name string) *Message { return s.messages[name] }

// Parse reads a schema and checks it; an error names the schema path of
// what is wrong.
func Parse(data []byte) (*Schema, error) {
	var s Schema
	if err := strictjson.Decode(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaPath, err)
	}
	if err := s.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", SchemaPath, err)
	}
	return &s, nil
}

var (
	identName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	typeName  = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	enumName  = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
)

func (s *Schema) check() error {
	if s.Version <= 0 {
		return fmt.Errorf("version: must be a positive integer")
	}
	seen := map[string]bool{}
	for _, l := range s.Limits {
		if !identName.MatchString(l.Name) || seen[l.Name] {
			return fmt.Errorf("limits[%s]: a limit has a unique snake_case name", l.Name)
		}
		if l.Value == 0 || l.Doc == "" {
			return fmt.Errorf("limits[%s]: a limit has a positive value and a doc", l.Name)
		}
		seen[l.Name] = true
	}
	s.enums = map[string]*Enum{}
	s.messages = map[string]*Message{}
	for _, e := range s.Enums {
		if err := s.checkEnum(e); err != nil {
			return fmt.Errorf("enums[%s]: %w", e.Name, err)
		}
	}
	for _, m := range s.Messages {
		if !typeName.MatchString(m.Name) {
			return fmt.Errorf("messages[%s]: a message name is CamelCase", m.Name)
		}
		if s.enums[m.Name] != nil || s.messages[m.Name] != nil {
			return fmt.Errorf("messages[%s]: the name is taken", m.Name)
		}
		s.messages[m.Name] = m
	}
	for _, m := range s.Messages {
		if err := s.checkMessage(m); err != nil {
			return fmt.Errorf("messages[%s]: %w", m.Name, err)
		}
	}
	if s.messages[RequestHeader] == nil || s.messages[ReplyHeader] == nil {
		return fmt.Errorf("messages: %s and %s are required", RequestHeader, ReplyHeader)
	}
	return s.checkCommands()
}

// The messages of every request's and every reply's own fields.
const (
	RequestHeader = "RequestHeader"
	ReplyHeader   = "ReplyHeader"
)

func (s *Schema) checkEnum(e *Enum) error {
	if !typeName.MatchString(e.Name) {
		return fmt.Errorf("an enum name is CamelCase")
	}
	if s.enums[e.Name] != nil {
		return fmt.Errorf("the name is taken")
	}
	s.enums[e.Name] = e
	if len(e.Values) == 0 {
		return fmt.Errorf("values: an enum needs at least one")
	}
	seen := map[string]bool{}
	for _, v := range append(append([]EnumValue(nil), e.Values...), e.CppExtra...) {
		if !enumName.MatchString(v.Name) {
			return fmt.Errorf("values[%s]: a name is letters, digits and _", v.Name)
		}
		if seen[v.Name] || seen[cppEnumerator(v.Name)] {
			return fmt.Errorf("values[%s]: given twice", v.Name)
		}
		seen[v.Name], seen[cppEnumerator(v.Name)] = true, true
	}
	return nil
}

func (s *Schema) checkCommands() error {
	seen := map[string]bool{}
	for _, c := range s.Commands {
		if !identName.MatchString(c.Name) || seen[c.Name] {
			return fmt.Errorf("commands[%s]: a command name is lower_case and given once", c.Name)
		}
		seen[c.Name] = true
		if c.Doc == "" {
			return fmt.Errorf("commands[%s]: doc is required", c.Name)
		}
		for _, m := range []string{c.Request, c.Reply} {
			if m != "" && s.messages[m] == nil {
				return fmt.Errorf("commands[%s]: no message %q", c.Name, m)
			}
		}
	}
	if len(s.Commands) == 0 {
		return fmt.Errorf("commands: the protocol needs at least one")
	}
	return nil
}

func (s *Schema) checkMessage(m *Message) error {
	if m.Doc == "" {
		return fmt.Errorf("doc is required")
	}
	own := 0
	for _, f := range m.Fields {
		if f.Embed == "" {
			own++
		}
	}
	if own == 0 {
		return fmt.Errorf("fields: a message needs a field of its own")
	}
	flat, err := s.flatten(m, map[string]bool{})
	if err != nil {
		return err
	}
	if len(flat) > 64 {
		return fmt.Errorf("%d fields (embedded ones counted): the C++ reader takes at most 64", len(flat))
	}
	names := map[string]bool{}
	for _, f := range flat {
		if names[f.Name] {
			return fmt.Errorf("fields[%s]: given twice (embedded messages counted)", f.Name)
		}
		names[f.Name] = true
	}
	for _, f := range m.Fields {
		if f.Embed != "" {
			continue
		}
		if err := s.checkField(m, f); err != nil {
			return fmt.Errorf("fields[%s]: %w", f.Name, err)
		}
	}
	if err := s.checkTag(m, flat); err != nil {
		return err
	}
	return checkOneOf(m, flat)
}

// flatten lists a message's fields with the embedded messages' fields in
// their place.
func (s *Schema) flatten(m *Message, open map[string]bool) ([]*Field, error) {
	if open[m.Name] {
		return nil, fmt.Errorf("embeds itself")
	}
	open[m.Name] = true
	defer delete(open, m.Name)
	var out []*Field
	for i, f := range m.Fields {
		if f.Embed == "" {
			out = append(out, f)
			continue
		}
		e := s.messages[f.Embed]
		if e == nil {
			return nil, fmt.Errorf("fields[%d]: embeds %q, which is not a message", i, f.Embed)
		}
		if f.Name != "" || f.Type != "" || f.Doc != "" || f.Required {
			return nil, fmt.Errorf("fields[%d]: an embed entry holds only \"embed\"", i)
		}
		sub, err := s.flatten(e, open)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// Flat is the message's fields with embedded messages' fields in their
// place (the object on the wire).
func (s *Schema) Flat(m *Message) []*Field {
	f, _ := s.flatten(m, map[string]bool{}) // checked by Parse
	return f
}

// TagOf is the flat message's tag field, or nil.
func (s *Schema) TagOf(m *Message) *Field {
	for _, f := range s.Flat(m) {
		if s.tagOwner(m, f) {
			return f
		}
	}
	return nil
}

// tagOwner reports whether f is the tag of m or of a message m embeds.
func (s *Schema) tagOwner(m *Message, f *Field) bool {
	if m.Tag == f.Name {
		for _, g := range m.Fields {
			if g == f {
				return true
			}
		}
	}
	for _, g := range m.Fields {
		if g.Embed != "" && s.tagOwner(s.messages[g.Embed], f) {
			return true
		}
	}
	return false
}

func (s *Schema) checkField(m *Message, f *Field) error {
	if !identName.MatchString(f.Name) {
		return fmt.Errorf("a field name is lower_case")
	}
	if f.Doc == "" {
		return fmt.Errorf("doc is required (one line for the docs table)")
	}
	t, err := s.parseType(f.Type)
	if err != nil {
		return fmt.Errorf("type: %w", err)
	}
	f.typ = t
	switch {
	case f.Required && (len(f.Default) > 0 || f.DefaultDoc != ""):
		return fmt.Errorf("a required field has no default")
	case len(f.Default) > 0 && f.DefaultDoc != "":
		return fmt.Errorf("give default or default_doc, not both")
	case f.Missing != "" && !f.Required:
		return fmt.Errorf("missing is a note for a required field")
	case f.Refused != "" && len(f.When) == 0:
		return fmt.Errorf("refused is the message for a field of some variants (when)")
	case len(f.When) > 0 && m.Tag == "":
		return fmt.Errorf("when needs the message's tag")
	}
	if len(f.Default) > 0 {
		if err := checkValue(t, f.Default); err != nil {
			return fmt.Errorf("default: %w", err)
		}
	}
	if len(f.Example) > 0 {
		if err := checkValue(t, f.Example); err != nil {
			return fmt.Errorf("example: %w", err)
		}
	}
	if f.Go.Name != "" && !typeName.MatchString(f.Go.Name) {
		return fmt.Errorf("go.name: an exported Go name")
	}
	return nil
}

func (s *Schema) checkTag(m *Message, flat []*Field) error {
	if m.Tag == "" {
		return nil
	}
	var tag *Field
	for i, f := range m.Fields {
		if f.Name == m.Tag {
			tag = f
			for _, g := range m.Fields[:i] {
				if len(g.When) > 0 {
					return fmt.Errorf("fields[%s]: a field with when comes after the tag %s", g.Name, m.Tag)
				}
			}
		}
	}
	if tag == nil || tag.typ == nil || tag.typ.Kind != KindEnum || len(tag.When) > 0 {
		return fmt.Errorf("tag: %q is not an enum field of the message (of every variant)", m.Tag)
	}
	if len(tag.typ.Enum.Values) > 64 {
		return fmt.Errorf("tag: %s has more than 64 values", tag.typ.Enum.Name)
	}
	for _, v := range tag.typ.Enum.Values {
		if v.CppValue != nil {
			return fmt.Errorf("tag: the values of %s are numbered in order (no cpp_value)", tag.typ.Enum.Name)
		}
	}
	tags := 0
	for _, f := range flat {
		if f.typ != nil && len(f.When) > 0 {
			for _, w := range f.When {
				if enumIndex(tag.typ.Enum, w) < 0 {
					return fmt.Errorf("fields[%s]: when names %q, which is not a value of %s", f.Name, w, tag.typ.Enum.Name)
				}
			}
		}
		if s.tagOwner(m, f) {
			tags++
		}
	}
	if tags != 1 {
		return fmt.Errorf("tag: a message has one tag, embedded messages counted")
	}
	return nil
}

func checkOneOf(m *Message, flat []*Field) error {
	byName := map[string]*Field{}
	for _, f := range flat {
		byName[f.Name] = f
	}
	for _, group := range m.OneOf {
		if len(group) < 2 {
			return fmt.Errorf("one_of: a group has two fields or more")
		}
		for _, n := range group {
			f := byName[n]
			if f == nil || f.Required || len(f.Default) > 0 || len(f.When) > 0 {
				return fmt.Errorf("one_of: %q is not an optional field of every variant without a default", n)
			}
		}
	}
	return nil
}

// OneOfGroup is the one_of group f belongs to in m, or nil.
func (m *Message) OneOfGroup(f *Field) []string {
	for _, g := range m.OneOf {
		for _, n := range g {
			if n == f.Name {
				return g
			}
		}
	}
	return nil
}

func enumIndex(e *Enum, name string) int {
	for i, v := range e.Values {
		if v.Name == name {
			return i
		}
	}
	return -1
}

func (s *Schema) parseType(expr string) (*Type, error) {
	if k, ok := builtinTypes[expr]; ok {
		return &Type{Kind: k}, nil
	}
	for prefix, kind := range map[string]Kind{"list<": KindList, "map<": KindMap} {
		if inner, ok := strings.CutPrefix(expr, prefix); ok && strings.HasSuffix(inner, ">") {
			elem, err := s.parseType(strings.TrimSuffix(inner, ">"))
			if err != nil {
				return nil, err
			}
			return &Type{Kind: kind, Elem: elem}, nil
		}
	}
	if e := s.enums[expr]; e != nil {
		return &Type{Kind: KindEnum, Enum: e}, nil
	}
	if m := s.messages[expr]; m != nil {
		return &Type{Kind: KindMessage, Message: m}, nil
	}
	return nil, fmt.Errorf("%q is not a type: u32, u64, bool, string, core, core_range_set, u32x2, list<T>, map<T>, an enum or a message", expr)
}

// checkValue checks a default or example against the field's type.
func checkValue(t *Type, raw json.RawMessage) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return checkAny(t, v)
}

func checkAny(t *Type, v any) error {
	switch t.Kind {
	case KindU32, KindU64:
		f, ok := v.(float64)
		if !ok || f < 0 || f != float64(uint64(f)) || (t.Kind == KindU32 && f > 1<<32-1) {
			return fmt.Errorf("%v is not a %s", v, kindName[t.Kind])
		}
	case KindBool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%v is not true or false", v)
		}
	case KindString:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%v is not a string", v)
		}
	case KindEnum:
		if n, ok := v.(string); !ok || enumIndex(t.Enum, n) < 0 {
			return fmt.Errorf("%v is not a value of %s", v, t.Enum.Name)
		}
	case KindU32Pair:
		a, ok := v.([]any)
		if !ok || len(a) != 2 {
			return fmt.Errorf("%v is not [u32, u32]", v)
		}
		for _, x := range a {
			if err := checkAny(&Type{Kind: KindU32}, x); err != nil {
				return err
			}
		}
	case KindList:
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%v is not an array", v)
		}
		for _, x := range a {
			if err := checkAny(t.Elem, x); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("a field of this type takes no default or example")
	}
	return nil
}

// kindNames are the names of the kinds that have no parts (no element,
// enum or message) in the generated Go, in C++ (scalars only) and in
// docs/protocol.md.
var kindNames = [...]struct{ goName, cpp, doc string }{
	KindU32:          {"uint32", "uint32_t", "u32"},
	KindU64:          {"uint64", "uint64_t", "u64"},
	KindBool:         {"bool", "bool", "bool"},
	KindString:       {"string", "std::string_view", "string"},
	KindCore:         {"CoreCoord", "", "`[row, col]`"},
	KindCoreRangeSet: {"CoreRangeSet", "", "core range set"},
	KindU32Pair:      {"[2]uint32", "", "`[u32, u32]`"},
}

var kindName = map[Kind]string{KindU32: "u32", KindU64: "u64"}
