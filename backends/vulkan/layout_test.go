package vulkan

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "regenerate testdata/layout.golden with the C compiler and the Vulkan headers")

const layoutGolden = "testdata/layout.golden"

// goLayout describes every struct in structs.go as "Name size" and
// "Name.field offset" lines, in the C field names.
func goLayout() []string {
	var out []string
	for name, v := range layoutTypes {
		t := reflect.TypeOf(v)
		out = append(out, fmt.Sprintf("%s %d", name, t.Size()))
		for i := range t.NumField() {
			f := t.Field(i)
			out = append(out, fmt.Sprintf("%s.%s %d", name, cName(f.Name), f.Offset))
		}
	}
	sort.Strings(out)
	return out
}

func cName(goName string) string {
	r := []rune(goName)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

// cLayout compiles and runs a C program that prints the same lines from
// the real headers.
func cLayout(t *testing.T) []string {
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stddef.h>\n#include <vulkan/vulkan_core.h>\nint main(void) {\n")
	for name, v := range layoutTypes {
		tp := reflect.TypeOf(v)
		fmt.Fprintf(&src, "printf(\"%s %%zu\\n\", sizeof(%s));\n", name, name)
		for i := range tp.NumField() {
			f := cName(tp.Field(i).Name)
			fmt.Fprintf(&src, "printf(\"%s.%s %%zu\\n\", offsetof(%s, %s));\n", name, f, name, f)
		}
	}
	src.WriteString("return 0;\n}\n")
	dir := t.TempDir()
	c := filepath.Join(dir, "layout.c")
	require.NoError(t, os.WriteFile(c, []byte(src.String()), 0o644))
	bin := filepath.Join(dir, "layout")
	out, err := exec.Command("cc", "-o", bin, c).CombinedOutput()
	require.NoError(t, err, "cc: %s", out)
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(lines)
	return lines
}

// TestStructLayouts checks every Go mirror of a Vulkan struct against the
// sizes and offsets the C compiler gives the header's definition.
func TestStructLayouts(t *testing.T) {
	if *update {
		if _, err := os.Stat("/usr/include/vulkan/vulkan_core.h"); err != nil {
			t.Fatal("-update needs the Vulkan headers (apt-get install libvulkan-dev)")
		}
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(layoutGolden, []byte(strings.Join(cLayout(t), "\n")+"\n"), 0o644))
	}
	data, err := os.ReadFile(layoutGolden)
	require.NoError(t, err)
	want := strings.Split(strings.TrimSpace(string(data)), "\n")
	require.Equal(t, want, goLayout())
}
