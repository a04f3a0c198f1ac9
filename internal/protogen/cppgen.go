package protogen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CppEnums is cpp/src/protocol_enums_gen.hpp: the protocol version, and
// for the commands and each enum a C++ enum class with its name table.
func CppEnums(s *Schema) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n// To change the protocol, %s.\n", generatedBy, regenerate)
	b.WriteString(`//
// The protocol's version and enums (docs/protocol.md): a C++ enum and a name
// table per enum of the schema, in the schema's order. The request parser
// reads names to values from the tables (and lists them when a name is
// unknown); name_in reads values to names.
#pragma once

#include <cstdint>

#include "protocol_schema.hpp"

namespace zyx {

`)
	fmt.Fprintf(&b, "inline constexpr int kProtocolVersion = %d;\n", s.Version)
	for _, l := range s.Limits {
		fmt.Fprintf(&b, "\n// %s\ninline constexpr uint32_t k%s = %d;\n", l.Doc, goName(l.Name), l.Value)
	}
	cmds := &Enum{Name: "Cmd", Doc: "The commands."}
	for _, c := range s.Commands {
		cmds.Values = append(cmds.Values, EnumValue{Name: c.Name, Doc: c.Doc})
	}
	for _, e := range append([]*Enum{cmds}, s.Enums...) {
		writeCppEnum(&b, e)
	}
	b.WriteString("\n}  // namespace zyx\n")
	return b.Bytes()
}

func writeCppEnum(b *bytes.Buffer, e *Enum) {
	b.WriteString("\n")
	writeComment(b, "", e.Doc)
	numbered := false
	for _, v := range e.Values {
		numbered = numbered || v.CppValue != nil
	}
	if numbered {
		fmt.Fprintf(b, "enum class %s : uint32_t {\n", e.Name)
	} else {
		fmt.Fprintf(b, "enum class %s {\n", e.Name)
	}
	for _, v := range append(append([]EnumValue(nil), e.Values...), e.CppExtra...) {
		writeComment(b, "  ", v.Doc)
		fmt.Fprintf(b, "  %s", cppEnumerator(v.Name))
		if v.CppValue != nil {
			fmt.Fprintf(b, " = %d", *v.CppValue)
		}
		b.WriteString(",\n")
	}
	b.WriteString("};\n")
	fmt.Fprintf(b, "inline constexpr NameTable<%s, %d> k%sNames = {{\n", e.Name, len(e.Values), e.Name)
	for _, v := range e.Values {
		fmt.Fprintf(b, "    {%s, %s::%s},\n", strconv.Quote(v.Name), e.Name, cppEnumerator(v.Name))
	}
	b.WriteString("}};\n")
	fmt.Fprintf(b, "constexpr const NameTable<%s, %d>& names_of(%s) { return k%sNames; }\n", e.Name, len(e.Values), e.Name, e.Name)
}

// CppFields is cpp/src/protocol_fields_gen.hpp: for each message a request
// holds, its fields as a table (proto::FieldSpec) and a typed handle per
// field in a namespace named after the message (proto::kernel::noc), and a
// message per command (the request header's fields and the command's).
func CppFields(s *Schema) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s\n// To change the protocol, %s.\n", generatedBy, regenerate)
	b.WriteString(`//
// The request messages of the protocol (docs/protocol.md) as field tables,
// for the request parser (request.cpp): each message's fields in the
// schema's order (the order the parser checks them in and lists them in),
// their JSON types, whether they are required, the variants that take them,
// and a typed handle per field (proto::<message>::<field>) that the parser
// reads the field with.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol_enums_gen.hpp"
#include "protocol_schema.hpp"

namespace zyx::proto {
`)
	for _, m := range requestMessages(s) {
		writeCppMessage(&b, s, m)
	}
	b.WriteString("\n// The fields of each command's request: the request header's, then the\n// command's own.\n")
	for _, c := range s.Commands {
		var flat []string
		for _, f := range s.Flat(s.Message(RequestHeader)) {
			flat = append(flat, specRef(s, s.Message(RequestHeader), f))
		}
		tag := -1
		if c.Request != "" {
			m := s.Message(c.Request)
			tag = tagIndex(s, m)
			if tag >= 0 {
				tag += len(flat)
			}
			for _, f := range s.Flat(m) {
				flat = append(flat, specRef(s, m, f))
			}
		}
		fmt.Fprintf(&b, "inline constexpr const FieldSpec* k%sCommandFields[] = {\n    %s};\n", goName(c.Name), strings.Join(flat, ",\n    "))
		fmt.Fprintf(&b, "inline constexpr MessageSpec k%sCommand{%q, k%sCommandFields, %d};\n", goName(c.Name), c.Name, goName(c.Name), tag)
	}
	b.WriteString("\n// command_message is the message of a command's requests.\n")
	b.WriteString("inline constexpr const MessageSpec* kCommandMessages[] = {\n")
	for _, c := range s.Commands {
		fmt.Fprintf(&b, "    &k%sCommand,\n", goName(c.Name))
	}
	b.WriteString("};\nconstexpr const MessageSpec& command_message(Cmd c) { return *kCommandMessages[static_cast<int>(c)]; }\n")
	b.WriteString("\n}  // namespace zyx::proto\n")
	return b.Bytes()
}

// requestMessages are the messages a request holds, each after the
// messages its fields name (the order C++ declares them in).
func requestMessages(s *Schema) []*Message {
	roots := commandMessages(s, RequestHeader, func(c *Command) string { return c.Request })
	return reachable(roots, true, func(m *Message) []*Message {
		var out []*Message
		for _, f := range m.Fields {
			if f.Embed != "" {
				out = append(out, s.Message(f.Embed))
				continue
			}
			out = append(out, typeMessages(f.typ)...)
		}
		return out
	})
}

// commandMessages are the header message and the commands' messages that
// name picks (a command without one is skipped).
func commandMessages(s *Schema, header string, name func(c *Command) string) []*Message {
	out := []*Message{s.Message(header)}
	for _, c := range s.Commands {
		if n := name(c); n != "" {
			out = append(out, s.Message(n))
		}
	}
	return out
}

// reachable lists roots and the messages they name through next, each
// once, depth first: each after the messages it names with post, before
// them without.
func reachable(roots []*Message, post bool, next func(m *Message) []*Message) []*Message {
	var out []*Message
	seen := map[string]bool{}
	var visit func(m *Message)
	visit = func(m *Message) {
		if seen[m.Name] {
			return
		}
		seen[m.Name] = true
		if !post {
			out = append(out, m)
		}
		for _, n := range next(m) {
			visit(n)
		}
		if post {
			out = append(out, m)
		}
	}
	for _, m := range roots {
		visit(m)
	}
	return out
}

// typeMessages are the messages type t holds, t's own first and then its
// elements'.
func typeMessages(t *Type) []*Message {
	var out []*Message
	for ; t != nil; t = t.Elem {
		if t.Message != nil {
			out = append(out, t.Message)
		}
	}
	return out
}

// specRef is the C++ expression of the FieldSpec of f (a field of m or of
// a message m embeds).
func specRef(s *Schema, m *Message, f *Field) string {
	owner := ownerOf(s, m, f)
	return fmt.Sprintf("&k%sSpecs[%d]", owner.Name, ownIndex(owner, f))
}

// ownIndex is f's index among m's own fields (embeds not counted).
func ownIndex(m *Message, f *Field) int {
	i := 0
	for _, g := range m.Fields {
		if g == f {
			return i
		}
		if g.Embed == "" {
			i++
		}
	}
	return -1
}

// ownerOf is the message whose own field f is: m or one m embeds.
func ownerOf(s *Schema, m *Message, f *Field) *Message {
	for _, g := range m.Fields {
		if g == f {
			return m
		}
		if g.Embed != "" {
			if o := ownerOf(s, s.Message(g.Embed), f); o != nil {
				return o
			}
		}
	}
	return nil
}

func tagIndex(s *Schema, m *Message) int {
	tag := s.TagOf(m)
	for i, f := range s.Flat(m) {
		if f == tag {
			return i
		}
	}
	return -1
}

func writeCppMessage(b *bytes.Buffer, s *Schema, m *Message) {
	fmt.Fprintf(b, "\n// ---- %s\n", m.Name)
	fmt.Fprintf(b, "inline constexpr FieldSpec k%sSpecs[] = {\n", m.Name)
	var tagEnum *Enum
	if tag := s.TagOf(m); tag != nil {
		tagEnum = tag.typ.Enum
	}
	for _, f := range m.Fields {
		if f.Embed != "" {
			continue
		}
		vars := "kAllVariants"
		if len(f.When) > 0 {
			var vs []string
			for _, w := range f.When {
				vs = append(vs, tagEnum.Name+"::"+cppEnumerator(w))
			}
			vars = "variants(" + strings.Join(vs, ", ") + ")"
		}
		fmt.Fprintf(b, "    {%q, Type::%s, %t, %s, %s, %s},\n", f.Name, cppTypeTag(f.typ), f.Required, vars,
			strconv.Quote(f.Refused), strconv.Quote(f.Missing))
	}
	b.WriteString("};\n")
	var refs []string
	for _, f := range s.Flat(m) {
		refs = append(refs, specRef(s, m, f))
	}
	fmt.Fprintf(b, "inline constexpr const FieldSpec* k%sFields[] = {\n    %s};\n", m.Name, strings.Join(refs, ",\n    "))
	fmt.Fprintf(b, "inline constexpr MessageSpec k%s{%q, k%sFields, %d};\n", m.Name, m.Name, m.Name, tagIndex(s, m))
	fmt.Fprintf(b, "namespace %s {\n", snake(m.Name))
	for _, f := range m.Fields {
		if f.Embed != "" {
			continue
		}
		spec := fmt.Sprintf("&k%sSpecs[%d]", m.Name, ownIndex(m, f))
		fmt.Fprintf(b, "inline constexpr %s %s{%s};\n", cppHandleType(f), cppIdent(f.Name), cppHandleInit(f, spec))
	}
	fmt.Fprintf(b, "}  // namespace %s\n", snake(m.Name))
}

func cppTypeTag(t *Type) string {
	return [...]string{
		KindU32: "U32", KindU64: "U64", KindBool: "Bool", KindString: "String", KindEnum: "Enum",
		KindCore: "Core", KindCoreRangeSet: "CoreRangeSet", KindU32Pair: "U32Pair", KindList: "List",
		KindMap: "Map", KindMessage: "Object",
	}[t.Kind]
}

// scalar reports whether the field reads as one C++ value.
func scalar(t *Type) bool {
	switch t.Kind {
	case KindU32, KindU64, KindBool, KindString, KindEnum:
		return true
	}
	return false
}

func cppScalar(t *Type) string {
	if t.Kind == KindEnum {
		return t.Enum.Name
	}
	return kindNames[t.Kind].cpp
}

func cppHandleType(f *Field) string {
	switch {
	case !scalar(f.typ):
		return "RawField"
	case f.Required || len(f.Default) > 0:
		return "Field<" + cppScalar(f.typ) + ">"
	default:
		return "OptField<" + cppScalar(f.typ) + ">"
	}
}

func cppHandleInit(f *Field, spec string) string {
	switch {
	case !scalar(f.typ):
		elem := "nullptr"
		for t := f.typ; t != nil; t = t.Elem {
			if t.Message != nil {
				elem = "&k" + t.Message.Name
			}
		}
		return spec + ", " + elem
	case f.Required:
		return spec + ", {}"
	case len(f.Default) > 0:
		return spec + ", " + cppValue(f.typ, f.Default)
	default:
		return spec
	}
}

// cppValue is a default as a C++ constant of the field's type.
func cppValue(t *Type, raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v) // checked by Parse
	switch t.Kind {
	case KindEnum:
		return t.Enum.Name + "::" + cppEnumerator(v.(string))
	case KindString:
		return strconv.Quote(v.(string))
	case KindBool:
		return strconv.FormatBool(v.(bool))
	default:
		return strconv.FormatUint(uint64(v.(float64)), 10)
	}
}
