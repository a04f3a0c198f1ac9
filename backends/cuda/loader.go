package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/internal/dl"
)

// library is a shared object opened with dlopen.
type library struct {
	handle uintptr
	path   string // the name or path that opened it
}

// dlopen is the opener (RTLD_NOW|RTLD_GLOBAL, so that the toolkit's
// libraries find the driver's symbols); tests replace it to check how
// failures are joined.
var dlopen = func(path string) (uintptr, error) {
	return dl.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// openLibrary opens the first candidate that loads and binds (bind
// resolves the entry points; nil accepts any library), through
// internal/dl as every purego backend does. Empty and repeated names are
// skipped. When none works, the error joins every candidate's failure,
// each naming what was tried, so a user can see why ("CUDA driver not
// loaded: libcuda.so.1: cannot open shared object file: …").
func openLibrary(what string, candidates []string, bind func(handle uintptr) error) (library, error) {
	h, name, err := dl.Loader{What: what, Open: dlopen}.OpenFirst(candidates, bind)
	if err != nil {
		return library{}, err
	}
	return library{handle: h, path: name}, nil
}

// openFirst opens the first candidate that loads.
func openFirst(what string, candidates []string) (library, error) {
	return openLibrary(what, candidates, nil)
}

// entryPoints binds a library's symbol table; a failure names every
// missing entry point.
func entryPoints(handle uintptr, syms []dl.Symbol) error {
	if err := dl.Resolve(handle, syms); err != nil {
		return fmt.Errorf("lacks entry points: %w", err)
	}
	return nil
}

// symbol resolves the first of names that the library exports.
func (l library) symbol(names ...string) (uintptr, string, error) {
	var p uintptr
	if err := dl.Resolve(l.handle, []dl.Symbol{{Addr: &p, Name: names[0], Alt: names[1:]}}); err != nil {
		return 0, "", fmt.Errorf("%s: %w", l.path, err)
	}
	return p, "", nil
}

// libDirs are the directories searched for versioned toolkit libraries
// (NVRTC, cuBLAS) that the loader path may not list.
func libDirs() []string {
	dirs := []string{}
	for _, env := range []string{"CUDA_PATH", "CUDA_HOME", "CUDA_ROOT"} {
		if v := os.Getenv(env); v != "" {
			dirs = append(dirs, filepath.Join(v, "lib64"), filepath.Join(v, "lib"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib")
	if m, _ := filepath.Glob("/usr/local/cuda-*/lib64"); len(m) > 0 {
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		dirs = append(dirs, m...)
	}
	if m, _ := filepath.Glob("/usr/local/cuda-*/targets/x86_64-linux/lib"); len(m) > 0 {
		sort.Sort(sort.Reverse(sort.StringSlice(m)))
		dirs = append(dirs, m...)
	}
	dirs = append(dirs, "/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib")
	return dirs
}

// toolkitCandidates lists what to dlopen for a toolkit library with base
// name base ("libnvrtc"): an explicit path from the config first, then the
// plain sonames in the order given, then every versioned file of that name
// found in the library directories, newest version first.
func toolkitCandidates(explicit, base string, sonames []string, dirs []string) []string {
	var out []string
	if explicit != "" {
		out = append(out, explicit)
	}
	out = append(out, sonames...)
	var found []string
	for _, d := range dirs {
		m, _ := filepath.Glob(filepath.Join(d, base+".so*"))
		found = append(found, m...)
	}
	sort.SliceStable(found, func(i, j int) bool {
		return versionLess(filepath.Base(found[j]), filepath.Base(found[i]))
	})
	return append(out, found...)
}

// versionLess orders library file names by the numbers after ".so":
// libx.so < libx.so.11.2 < libx.so.12 < libx.so.13.0.
func versionLess(a, b string) bool {
	va, vb := soVersion(a), soVersion(b)
	for i := 0; i < len(va) && i < len(vb); i++ {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return len(va) < len(vb)
}

func soVersion(name string) []int {
	_, rest, ok := strings.Cut(name, ".so")
	if !ok {
		return nil
	}
	var out []int
	for _, part := range strings.Split(strings.TrimPrefix(rest, "."), ".") {
		n := 0
		valid := part != ""
		for _, r := range part {
			if r < '0' || r > '9' {
				valid = false
				break
			}
			n = n*10 + int(r-'0')
		}
		if !valid {
			break
		}
		out = append(out, n)
	}
	return out
}
