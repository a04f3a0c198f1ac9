package backends_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The user package stays small: at most this many exported top-level
// names (types, functions, constants, variables; methods not counted).
const maxUserExports = 150

// exportedNames lists the exported top-level names of the package in dir
// (test files left out).
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var names []string
	for _, p := range pkgs {
		for _, f := range p.Files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() {
						names = append(names, d.Name.Name)
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						switch s := s.(type) {
						case *ast.TypeSpec:
							if s.Name.IsExported() {
								names = append(names, s.Name.Name)
							}
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if n.IsExported() {
									names = append(names, n.Name)
								}
							}
						}
					}
				}
			}
		}
	}
	return names
}

func TestUserPackageSurface(t *testing.T) {
	names := exportedNames(t, ".")
	require.LessOrEqual(t, len(names), maxUserExports, "package backends exports %d names: %v", len(names), names)
	for _, dir := range []string{".", "driver"} {
		for _, n := range exportedNames(t, dir) {
			require.False(t, strings.HasPrefix(n, "TT") && len(n) > 2 && n[2] >= 'A' && n[2] <= 'Z',
				"%s: Tenstorrent type %s belongs in package tt", dir, n)
		}
	}
}

// The driver package imports nothing of the user package: drivers see
// only what they implement and call.
func TestDriverPackageBelowUserPackage(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/zyxtt/zyxtt/backends/driver").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, dep := range strings.Fields(string(out)) {
		require.NotEqual(t, "github.com/zyxtt/zyxtt/backends", dep, "backends/driver depends on the user package")
	}
}
