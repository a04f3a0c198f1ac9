package protogen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/protogen"
)

// schemaWith is a small valid schema whose message Thing has the given
// fields, after the message keys in head (tag, one_of), for the table of
// schema mistakes.
func schemaWith(head, fields string) string {
	return `{"version": 2,
  "commands": [{"name": "ping", "doc": "d"}, {"name": "thing", "request": "Thing", "doc": "d"}],
  "enums": [{"name": "Kind", "doc": "d", "values": [{"name": "a"}, {"name": "b"}]}],
  "messages": [
    {"name": "RequestHeader", "doc": "d", "fields": [{"name": "id", "type": "u64", "required": true, "doc": "d"}]},
    {"name": "ReplyHeader", "doc": "d", "fields": [{"name": "id", "type": "u64", "required": true, "doc": "d"}]},
    {"name": "Base", "doc": "d", "fields": [{"name": "size", "type": "u64", "doc": "d"}]},
    {"name": "Thing", "doc": "d", ` + head + `"fields": [` + fields + `]}
  ]}`
}

func TestParseRefusesMistakes(t *testing.T) {
	const kind = `{"name": "kind", "type": "Kind", "required": true, "doc": "d"}, `
	for _, tc := range []struct {
		name, tag, fields, want string
	}{
		{"valid", `"tag": "kind", `, kind + `{"name": "x", "type": "u32", "when": ["b"], "doc": "d"}`, ""},
		{"unknown key", "", `{"name": "x", "type": "u32", "doc": "d", "requird": true}`, "requird: unknown field"},
		{"no such type", "", `{"name": "x", "type": "u16", "doc": "d"}`, `messages[Thing]: fields[x]: type: "u16" is not a type`},
		{"list of no such type", "", `{"name": "x", "type": "list<Nope>", "doc": "d"}`, `type: "Nope" is not a type`},
		{"no doc", "", `{"name": "x", "type": "u32"}`, "fields[x]: doc is required"},
		{"required with a default", "", `{"name": "x", "type": "u32", "required": true, "default": 1, "doc": "d"}`, "a required field has no default"},
		{"default of the wrong type", "", `{"name": "x", "type": "u32", "default": "one", "doc": "d"}`, "default: one is not a u32"},
		{"default past 32 bits", "", `{"name": "x", "type": "u32", "default": 4294967296, "doc": "d"}`, "is not a u32"},
		{"default not an enum name", "", `{"name": "x", "type": "Kind", "default": "c", "doc": "d"}`, "default: c is not a value of Kind"},
		{"when without a tag", "", `{"name": "x", "type": "u32", "when": ["a"], "doc": "d"}`, "when needs the message's tag"},
		{"when of another enum's value", `"tag": "kind", `, kind + `{"name": "x", "type": "u32", "when": ["z"], "doc": "d"}`, `when names "z", which is not a value of Kind`},
		{"tag that is no enum", `"tag": "x", `, `{"name": "x", "type": "u32", "doc": "d"}`, `tag: "x" is not an enum field`},
		{"refused without when", "", `{"name": "x", "type": "u32", "refused": "no", "doc": "d"}`, "refused is the message for a field of some variants"},
		{"field twice through an embed", "", `{"name": "size", "type": "u32", "doc": "d"}, {"embed": "Base"}`, "fields[size]: given twice"},
		{"embed of no message", "", `{"name": "x", "type": "u32", "doc": "d"}, {"embed": "Nope"}`, `embeds "Nope", which is not a message`},
		{"field name not lower_case", "", `{"name": "X", "type": "u32", "doc": "d"}`, "a field name is lower_case"},
		{"one_of of a required field", `"one_of": [["x", "y"]], `, `{"name": "x", "type": "u32", "required": true, "doc": "d"}, {"name": "y", "type": "u32", "doc": "d"}`, `one_of: "x" is not an optional field`},
		{"one_of of one field", `"one_of": [["x"]], `, `{"name": "x", "type": "u32", "doc": "d"}`, "one_of: a group has two fields or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := schemaWith(tc.tag, tc.fields)
			s, err := protogen.Parse([]byte(src))
			if tc.want == "" {
				require.NoError(t, err)
				require.NotNil(t, s.Message("Thing"))
				return
			}
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.True(t, strings.HasPrefix(err.Error(), protogen.SchemaPath+": "), "the error names the schema: %v", err)
		})
	}
}

func TestParseRefusesBadCommands(t *testing.T) {
	src := strings.Replace(schemaWith("", `{"name": "x", "type": "u32", "doc": "d"}`), `"request": "Thing"`, `"request": "Nope"`, 1)
	_, err := protogen.Parse([]byte(src))
	require.ErrorContains(t, err, `commands[thing]: no message "Nope"`)

	src = strings.Replace(schemaWith("", `{"name": "x", "type": "u32", "doc": "d"}`), `{"name": "ping", "doc": "d"}`, `{"name": "thing", "doc": "d"}`, 1)
	_, err = protogen.Parse([]byte(src))
	require.ErrorContains(t, err, "commands[thing]: a command name is lower_case and given once")
}

// TestCommittedSchemaShapes pins down what the runtime and the driver rely
// on in the committed schema: the header messages, the tags and the one_of
// groups that the parser's custom checks stand for.
func TestCommittedSchemaShapes(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), protogen.SchemaPath))
	require.NoError(t, err)
	s, err := protogen.Parse(data)
	require.NoError(t, err)
	for msg, tag := range map[string]string{"ArgEntry": "kind", "Kernel": "processor", "BufferSpec": "layout", "AllocRequest": "layout", "BufferDecl": "layout"} {
		m := s.Message(msg)
		require.NotNil(t, m, msg)
		require.NotNil(t, s.TagOf(m), msg)
		require.Equal(t, tag, s.TagOf(m).Name, msg)
	}
	for _, msg := range []string{"Kernel", "IncludeFile", "RunArg"} {
		require.Len(t, s.Message(msg).OneOf, 1, "%s: the parser checks exactly one of a pair", msg)
	}
}
