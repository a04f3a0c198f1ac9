package protogen_test

import (
	"encoding/json"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zyxtt/zyxtt/internal/protogen"
)

// copyTree copies the schema and the files made from it into a new
// directory laid out as the repository is.
func copyTree(t *testing.T, root string) string {
	t.Helper()
	tmp := t.TempDir()
	for _, rel := range []string{protogen.SchemaPath, protogen.DocsPath, protogen.GoPath, protogen.CppEnumsPath, protogen.CppFieldsPath} {
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(filepath.Join(tmp, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(tmp, rel), data, 0o644))
	}
	return tmp
}

// recipeSteps are the numbered steps of "Add a protocol field" in
// docs/protocol.md, each on one line.
func recipeSteps(t *testing.T, doc string) []string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Add a protocol field\n")
	require.True(t, ok, "docs/protocol.md has the section \"Add a protocol field\"")
	section, _, _ = strings.Cut(section, "\n## ")
	var steps []string
	inStep := false
	for _, line := range strings.Split(section, "\n") {
		if m := stepStart.FindStringSubmatch(line); m != nil {
			steps = append(steps, m[1])
			inStep = true
			continue
		}
		if strings.TrimSpace(line) == "" || !strings.HasPrefix(line, " ") {
			inStep = false
		}
		if inStep {
			steps[len(steps)-1] += " " + strings.TrimSpace(line)
		}
	}
	return steps
}

var stepStart = regexp.MustCompile(`^\d+\. (.*)$`)

// editSchema applies edit to the schema of the copy as a JSON document.
func editSchema(t *testing.T, tmp string, edit func(doc map[string]any)) {
	t.Helper()
	path := filepath.Join(tmp, protogen.SchemaPath)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(data, &doc))
	edit(doc)
	out, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, out, 0o644))
}

func named(list any, name string) map[string]any {
	for _, x := range list.([]any) {
		if m := x.(map[string]any); m["name"] == name {
			return m
		}
	}
	return nil
}

// TestAddFieldRecipe follows the steps of docs/protocol.md "Add a protocol
// field" on a copy of the schema: it adds a field to a message and a name to
// an enum (step 1), runs the generator as go generate does (step 2), and
// checks that the Go type, the runtime's table and handle (which step 3
// reads the field with) and this page's table all have them.
func TestAddFieldRecipe(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, protogen.DocsPath))
	require.NoError(t, err)
	steps := recipeSteps(t, string(doc))
	require.Len(t, steps, 5, "the recipe's steps: %q", steps)
	require.Contains(t, steps[0], "`protocol/protocol.json`")
	require.Contains(t, steps[0], "`fields`")
	require.Contains(t, steps[1], "`go generate ./ttruntime`")
	require.Contains(t, steps[2], "`cpp/src/request.cpp`")
	require.Contains(t, steps[2], "o.read(proto::<message>::<field>)")
	require.Contains(t, steps[4], "go test ./internal/protogen ./ttruntime")

	tmp := copyTree(t, root)
	// Step 1.
	editSchema(t, tmp, func(doc map[string]any) {
		m := named(doc["messages"], "ComputeConfig")
		require.NotNil(t, m)
		m["fields"] = append(m["fields"].([]any), map[string]any{
			"name": "recipe_probe", "type": "u32", "default": 0, "doc": "a field the recipe test adds",
		})
		e := named(doc["enums"], "MathFidelity")
		require.NotNil(t, e)
		e["values"] = append(e["values"].([]any), map[string]any{"name": "HiFi5"})
	})
	// Step 2: what `go generate ./ttruntime` runs.
	files, err := protogen.Generate(tmp)
	require.NoError(t, err)
	changed, err := protogen.Write(tmp, files)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{protogen.GoPath, protogen.CppEnumsPath, protogen.CppFieldsPath, protogen.DocsPath}, changed)

	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(tmp, rel))
		require.NoError(t, err)
		return string(data)
	}
	typ, tag := goField(t, read(protogen.GoPath), "ComputeConfig", "RecipeProbe")
	require.Equal(t, "uint32", typ)
	require.Equal(t, "`json:\"recipe_probe,omitempty\"`", tag)

	fields := read(protogen.CppFieldsPath)
	require.Contains(t, fields, `{"recipe_probe", Type::U32, false, kAllVariants, "", ""},`)
	require.Regexp(t, `(?s)namespace compute_config \{.*inline constexpr Field<uint32_t> recipe_probe\{&kComputeConfigSpecs\[\d+\], 0\};`, fields,
		"the handle step 3 reads the field with")
	enums := read(protogen.CppEnumsPath)
	require.Regexp(t, `(?s)enum class MathFidelity \{[^}]*HiFi5,`, enums)
	require.Contains(t, enums, `{"HiFi5", MathFidelity::HiFi5},`)

	docs := read(protogen.DocsPath)
	require.Contains(t, docs, "| `recipe_probe` | u32 | 0 | a field the recipe test adds |\n<!-- end generated -->")
	require.Contains(t, docs, "| `math_fidelity` | `LoFi`, `HiFi2`, `HiFi3`, `HiFi4`, `HiFi5` | `HiFi4` |")
	require.Empty(t, protogen.Stale(tmp, files))
}

// goField returns the type and tag of field name of struct typeName in src.
func goField(t *testing.T, src, typeName, name string) (string, string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "protocol_gen.go", src, 0)
	require.NoError(t, err)
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range gd.Specs {
			ts, ok := spec.(*ast.TypeSpec)
			if !ok || ts.Name.Name != typeName {
				continue
			}
			st, ok := ts.Type.(*ast.StructType)
			require.True(t, ok, "%s is a struct", typeName)
			for _, fl := range st.Fields.List {
				for _, n := range fl.Names {
					if n.Name == name {
						var b strings.Builder
						require.NoError(t, format.Node(&b, fset, fl.Type))
						return b.String(), fl.Tag.Value
					}
				}
			}
		}
	}
	t.Fatalf("%s has no field %s", typeName, name)
	return "", ""
}
