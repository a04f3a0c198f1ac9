package ttruntime_test

// The C++ runtime against the protocol's one description,
// protocol/protocol.json: every request message, with every field the
// schema gives it (in each variant of a tagged message and each field of a
// one_of group) and with only its required fields, gets past the runtime's
// parser (an error reply, if any, is about values, not shape, and is not
// internal: the parser reads every field); a field the schema does not give
// an object is refused with the path of the field and exactly the schema's
// list of the fields the object takes; and the runtime's replies hold
// exactly the fields the schema gives them.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/protogen"
	"github.com/zyxtt/zyxtt/ttruntime"
)

func loadSchema(t *testing.T) *protogen.Schema {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := protogen.RepoRoot(wd)
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, protogen.SchemaPath))
	require.NoError(t, err)
	s, err := protogen.Parse(data)
	require.NoError(t, err)
	return s
}

// sampleNode is one object of a sample request: where it is and the
// fields the schema says it takes, in the schema's order.
type sampleNode struct {
	obj   map[string]any
	path  string
	takes []string
}

// sampler builds sample requests from the schema and records their
// objects.
type sampler struct {
	s     *protogen.Schema
	full  bool // every field the variant takes; else only the required ones
	nodes []sampleNode
}

// count is how many samples of m cover each variant of its tag and each
// field of its one_of groups.
func (sm *sampler) count(m *protogen.Message) int {
	n := 1
	if tag := sm.s.TagOf(m); tag != nil {
		n = len(tag.Typ().Enum.Values)
	}
	for _, g := range m.OneOf {
		n = max(n, len(g))
	}
	return n
}

// object is the i-th sample of m at path; header are fields before m's own
// (the request header's at the top: id and cmd the client writes itself).
func (sm *sampler) object(m *protogen.Message, header []*protogen.Field, i int, path string) map[string]any {
	tag := sm.s.TagOf(m)
	variant := ""
	if tag != nil {
		values := tag.Typ().Enum.Values
		variant = values[i%len(values)].Name
	}
	obj := map[string]any{}
	var takes []string
	for _, f := range append(slices.Clip(header), sm.s.Flat(m)...) {
		taken := len(f.When) == 0 || slices.Contains(f.When, variant)
		if taken || f.Refused != "" {
			takes = append(takes, f.Name)
		}
		group := m.OneOfGroup(f)
		switch {
		case !taken || slices.Contains(header, f) && (f.Name == "id" || f.Name == "cmd"):
		case f == tag:
			obj[f.Name] = variant
		case group != nil:
			if group[i%len(group)] == f.Name {
				obj[f.Name] = sm.value(f, f.Typ(), path+"."+f.Name)
			}
		case f.Required || sm.full:
			obj[f.Name] = sm.value(f, f.Typ(), path+"."+f.Name)
		}
	}
	sm.nodes = append(sm.nodes, sampleNode{obj, path, takes})
	return obj
}

// value is a sample value of type t for field f: f's example, or one
// that fits the type.
func (sm *sampler) value(f *protogen.Field, t *protogen.Type, path string) any {
	if len(f.Example) > 0 && t == f.Typ() {
		var v any
		if err := json.Unmarshal(f.Example, &v); err == nil {
			return v
		}
	}
	switch t.Kind {
	case protogen.KindU32, protogen.KindU64:
		return 1
	case protogen.KindBool:
		return true
	case protogen.KindString:
		return "x"
	case protogen.KindEnum:
		return t.Enum.Values[0].Name
	case protogen.KindCore:
		return []any{0, 0}
	case protogen.KindCoreRangeSet:
		return []any{[]any{0, 0, 0, 0}}
	case protogen.KindU32Pair:
		return []any{1, 1}
	case protogen.KindMessage:
		return sm.object(t.Message, nil, 0, path)
	case protogen.KindList:
		if t.Elem.Kind != protogen.KindMessage {
			return []any{sm.value(f, t.Elem, path+"[0]")}
		}
		var out []any
		for i := range sm.count(t.Elem.Message) {
			out = append(out, sm.object(t.Elem.Message, nil, i, fmt.Sprintf("%s[%d]", path, i)))
		}
		return out
	default: // map
		out := map[string]any{}
		n := 1
		if t.Elem.Kind == protogen.KindMessage {
			n = sm.count(t.Elem.Message)
		}
		for i := range n {
			key := fmt.Sprintf("k%d", i)
			if t.Elem.Kind == protogen.KindMessage {
				out[key] = sm.object(t.Elem.Message, nil, i, path+"."+key)
			} else {
				out[key] = sm.value(f, t.Elem, path+"."+key)
			}
		}
		return out
	}
}

// requests are the sample requests of a command (its request message's
// samples, each with the request header), with the objects of each.
func sampleRequests(s *protogen.Schema, cmd *protogen.Command, full bool) ([]map[string]any, [][]sampleNode) {
	m := &protogen.Message{Name: cmd.Name} // a command without fields of its own
	if cmd.Request != "" {
		m = s.Message(cmd.Request)
	}
	header := s.Flat(s.Message(protogen.RequestHeader))
	var reqs []map[string]any
	var nodes [][]sampleNode
	count := (&sampler{s: s}).count(m)
	for i := range count {
		sm := &sampler{s: s, full: full}
		reqs = append(reqs, sm.object(m, header, i, cmd.Name))
		nodes = append(nodes, sm.nodes)
	}
	return reqs, nodes
}

// requireParsed checks that a request got past the runtime's parser.
func requireParsed(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var re *ttruntime.RemoteError
	require.ErrorAs(t, err, &re, "an error reply, not a lost runtime")
	require.NotContains(t, []string{ttruntime.CodeBadRequest, ttruntime.CodeInternal, ttruntime.CodeUnknownCommand}, re.Code,
		"the runtime refused a request of the schema: %s", re.Message)
}

func TestRuntimeTakesTheSchemasFields(t *testing.T) {
	s := loadSchema(t)
	c := startEmu(t)
	ctx := context.Background()
	for _, cmd := range s.Commands {
		if cmd.Name == ttruntime.CmdExit {
			continue // it would end the runtime; it has no fields of its own
		}
		t.Run(cmd.Name, func(t *testing.T) {
			for _, full := range []bool{true, false} {
				reqs, nodes := sampleRequests(s, cmd, full)
				for i, req := range reqs {
					requireParsed(t, c.RawCall(ctx, cmd.Name, req, nil))
					if !full {
						continue
					}
					for _, n := range nodes[i] {
						n.obj["zz_unknown"] = 1
						err := c.RawCall(ctx, cmd.Name, req, nil)
						delete(n.obj, "zz_unknown")
						var re *ttruntime.RemoteError
						require.ErrorAs(t, err, &re, "an unknown field in %s", n.path)
						require.Equal(t, ttruntime.CodeBadRequest, re.Code, re.Message)
						require.Equal(t, n.path+".zz_unknown: unknown field (this object takes: "+strings.Join(n.takes, ", ")+")", re.Message)
					}
				}
			}
		})
	}
}

// requireSchemaFields checks that obj holds only fields the schema gives
// it and every required one, and each nested object likewise.
func requireSchemaFields(t *testing.T, s *protogen.Schema, obj map[string]any, fields []*protogen.Field, path string) {
	t.Helper()
	known := map[string]bool{}
	for _, f := range fields {
		known[f.Name] = true
	}
	for k := range obj {
		require.True(t, known[k], "%s.%s: a field the schema does not give the reply", path, k)
	}
	for _, f := range fields {
		v, ok := obj[f.Name]
		require.True(t, ok || !f.Required, "%s.%s: the reply lacks a required field", path, f.Name)
		if !ok || f.Typ().Kind != protogen.KindMessage {
			continue
		}
		sub, isObj := v.(map[string]any)
		require.True(t, isObj, "%s.%s is an object", path, f.Name)
		requireSchemaFields(t, s, sub, s.Flat(f.Typ().Message), path+"."+f.Name)
	}
}

func TestRuntimeRepliesAreTheSchemas(t *testing.T) {
	s := loadSchema(t)
	r := startRaw(t)
	replyOf := map[string]*protogen.Message{}
	for _, c := range s.Commands {
		replyOf[c.Name] = s.Message(c.Reply) // nil: an empty success reply
	}
	id := 0
	send := func(cmd string, body any) map[string]any {
		t.Helper()
		req := map[string]any{}
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &req))
		}
		id++
		req["id"], req["cmd"] = id, cmd
		line, err := json.Marshal(req)
		require.NoError(t, err)
		_, err = r.in.Write(append(line, '\n'))
		require.NoError(t, err)
		out, err := r.out.ReadBytes('\n')
		require.NoError(t, err, "the runtime must answer")
		var reply map[string]any
		require.NoError(t, json.Unmarshal(out, &reply))
		require.Equal(t, true, reply["ok"], "%s: %s", cmd, out)
		fields := s.Flat(s.Message(protogen.ReplyHeader))
		if m := replyOf[cmd]; m != nil {
			fields = append(fields, s.Flat(m)...)
		}
		requireSchemaFields(t, s, reply, fields, cmd)
		return reply
	}
	send(ttruntime.CmdInit, ttruntime.InitRequest{Protocol: ttruntime.ProtocolVersion, Layer: "emu", Board: "n150", CacheDir: t.TempDir()})
	send(ttruntime.CmdPing, nil)
	a := send(ttruntime.CmdAlloc, ttruntime.AllocRequest{Size: 4096})
	buf := uint64(a["buffer"].(float64))
	p := send(ttruntime.CmdCompile, emptyProgram())
	prog := uint64(p["program"].(float64))
	send(ttruntime.CmdRun, ttruntime.RunRequest{Program: prog, Args: []ttruntime.RunArg{ttruntime.BufferArg(buf), ttruntime.ValueArg(7)}, Timed: true})
	send(ttruntime.CmdRelease, ttruntime.ProgramRequest{Program: prog})
	send(ttruntime.CmdFree, ttruntime.BufferRequest{Buffer: buf})
}

// FormatTileBytes is written by hand (tile sizes are no part of the
// protocol); it must know exactly the schema's data formats.
func TestFormatTileBytesCoversTheSchemasFormats(t *testing.T) {
	e := loadSchema(t).Enum("DataFormat")
	require.NotNil(t, e)
	var names []string
	for _, v := range e.Values {
		names = append(names, v.Name)
	}
	var known []string
	for name := range ttruntime.FormatTileBytes {
		known = append(known, name)
	}
	require.ElementsMatch(t, names, known)
}
