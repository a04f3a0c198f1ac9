package protogen

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// The markers of a generated section of docs/protocol.md. The begin marker
// names what the section holds:
//
//	<!-- generated: fields Kernel -->    the fields of a message
//	<!-- generated: variants ArgEntry --> a tagged message's fields by variant
//	<!-- generated: enum ErrorCode -->   the names of an enum
const endMarker = "<!-- end generated -->"

var beginMarker = regexp.MustCompile(`^<!-- generated: (fields|variants|enum) ([A-Za-z0-9]+) -->$`)

// Docs rewrites the generated sections of docs/protocol.md (doc) from the
// schema. Every message a request or reply holds must have a fields or
// variants section, so a new message cannot go undocumented.
func Docs(s *Schema, doc []byte) ([]byte, error) {
	lines := strings.SplitAfter(string(doc), "\n")
	var out strings.Builder
	documented := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		out.WriteString(lines[i])
		m := beginMarker.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != endMarker {
			if beginMarker.MatchString(strings.TrimSpace(lines[end])) {
				break
			}
			end++
		}
		if end == len(lines) || strings.TrimSpace(lines[end]) != endMarker {
			return nil, fmt.Errorf("%s:%d: %s has no %s after it", DocsPath, i+1, m[0], endMarker)
		}
		table, err := renderSection(s, m[1], m[2])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", DocsPath, i+1, err)
		}
		documented[m[2]] = true
		out.WriteString(table)
		out.WriteString(lines[end])
		i = end
	}
	for _, m := range protocolMessages(s) {
		if !documented[m.Name] && m.Name != RequestHeader {
			return nil, fmt.Errorf("%s: message %s has no table: add <!-- generated: fields %s --> and %s where it belongs",
				DocsPath, m.Name, m.Name, endMarker)
		}
	}
	return []byte(out.String()), nil
}

// protocolMessages are the messages that requests and replies hold
// (embedded ones are documented in their place).
func protocolMessages(s *Schema) []*Message {
	embedded := map[string]bool{}
	for _, m := range s.Messages {
		for _, f := range m.Fields {
			if f.Embed != "" {
				embedded[f.Embed] = true
			}
		}
	}
	var out []*Message
	for _, m := range append(requestMessages(s), replyMessages(s)...) {
		if !embedded[m.Name] {
			out = append(out, m)
		}
	}
	return out
}

// replyMessages are the messages replies hold.
func replyMessages(s *Schema) []*Message {
	roots := commandMessages(s, ReplyHeader, func(c *Command) string { return c.Reply })
	return reachable(roots, false, func(m *Message) []*Message {
		var out []*Message
		for _, f := range s.Flat(m) {
			out = append(out, typeMessages(f.typ)...)
		}
		return out
	})
}

func renderSection(s *Schema, kind, name string) (string, error) {
	switch kind {
	case "enum":
		e := s.Enum(name)
		if e == nil {
			return "", fmt.Errorf("no enum %s in the schema", name)
		}
		var b strings.Builder
		b.WriteString("| name | meaning |\n|---|---|\n")
		for _, v := range e.Values {
			fmt.Fprintf(&b, "| `%s` | %s |\n", v.Name, cell(v.Doc))
		}
		return b.String(), nil
	case "variants":
		m := s.Message(name)
		if m == nil || s.TagOf(m) == nil {
			return "", fmt.Errorf("no message %s with a tag in the schema", name)
		}
		return renderVariants(s, m), nil
	default:
		m := s.Message(name)
		if m == nil {
			return "", fmt.Errorf("no message %s in the schema", name)
		}
		return renderFields(s, m), nil
	}
}

func renderFields(s *Schema, m *Message) string {
	isReply := false
	for _, r := range replyMessages(s) {
		isReply = isReply || r == m
	}
	var b strings.Builder
	if isReply {
		b.WriteString("| field | type | meaning |\n|---|---|---|\n")
	} else {
		b.WriteString("| field | type | default | meaning |\n|---|---|---|---|\n")
	}
	tag := s.TagOf(m)
	for _, f := range s.Flat(m) {
		meaning := f.Doc
		if len(f.When) > 0 && !f.Required {
			meaning += " (only when " + whenText(tag, f) + ")"
		}
		if isReply {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, cell(typeDoc(f.typ)), cell(meaning))
			continue
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, cell(typeDoc(f.typ)), cell(defaultDoc(s, m, f)), cell(meaning))
	}
	return b.String()
}

func renderVariants(s *Schema, m *Message) string {
	tag := s.TagOf(m)
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | fields | meaning |\n|---|---|---|\n", tag.Name)
	for _, v := range tag.typ.Enum.Values {
		var fields []string
		for _, f := range s.Flat(m) {
			if f == tag || len(f.When) == 0 {
				continue
			}
			for _, w := range f.When {
				if w == v.Name {
					fields = append(fields, fmt.Sprintf("`%s` (%s)", f.Name, typeDoc(f.typ)))
				}
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, cell(strings.Join(fields, ", ")), cell(v.Doc))
	}
	return b.String()
}

// whenText says which variants take f: "`layout` is `a`, `b` or `c`".
func whenText(tag, f *Field) string {
	names := codeList(f.When, ", ")
	if i := strings.LastIndex(names, ", "); i >= 0 {
		names = names[:i] + " or " + names[i+2:]
	}
	return "`" + tag.Name + "` is " + names
}

func defaultDoc(s *Schema, m *Message, f *Field) string {
	switch {
	case f.Required && len(f.When) > 0:
		return "(required when " + whenText(s.TagOf(m), f) + ")"
	case f.Required:
		return "(required)"
	case len(f.Default) > 0:
		return formatValue(f.typ, f.Default)
	case f.DefaultDoc != "":
		return f.DefaultDoc
	case m.OneOfGroup(f) != nil:
		return "exactly one of " + codeList(m.OneOfGroup(f), ", ")
	case f.typ.Kind == KindList || f.typ.Kind == KindMap:
		return "empty"
	}
	return "none"
}

func formatValue(t *Type, raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v) // checked by Parse
	switch x := v.(type) {
	case string:
		return "`" + x + "`"
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, fmt.Sprint(e))
		}
		return "`[" + strings.Join(parts, ", ") + "]`"
	}
	return fmt.Sprint(v)
}

// typeDoc is a type as docs/protocol.md writes it.
func typeDoc(t *Type) string {
	switch t.Kind {
	case KindEnum:
		if t.Enum.Title != "" {
			return t.Enum.Title
		}
		var names []string
		for _, v := range t.Enum.Values {
			names = append(names, v.Name)
		}
		return codeList(names, ", ")
	case KindList:
		return "array of " + elemDoc(t.Elem)
	case KindMap:
		return "object of " + elemDoc(t.Elem)
	case KindMessage:
		return titleOf(t.Message) + "object"
	}
	return kindNames[t.Kind].doc
}

func elemDoc(t *Type) string {
	switch t.Kind {
	case KindString:
		return "strings"
	case KindMessage:
		return titleOf(t.Message) + "objects"
	case KindCoreRangeSet:
		return "core range sets"
	case KindEnum:
		return "names (" + typeDoc(t) + ")"
	}
	return typeDoc(t)
}

func titleOf(m *Message) string {
	if m.Title == "" {
		return ""
	}
	return m.Title + " "
}

func codeList(names []string, sep string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, sep)
}

// cell makes text safe in a Markdown table cell.
func cell(text string) string {
	return strings.ReplaceAll(strings.ReplaceAll(text, "|", `\|`), "\n", " ")
}
