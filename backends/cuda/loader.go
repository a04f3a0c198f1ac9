package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ebitengine/purego"
)

// library is a shared object opened with dlopen.
type library struct {
	handle uintptr
	path   string // the name or path that opened it
}

// dlopen is the opener; tests replace it to check how failures are joined.
var dlopen = func(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// openFirst opens the first candidate that loads. When none does, the error
// joins every candidate's failure, each naming what was tried, so a user can
// see why ("libcuda.so.1: cannot open shared object file: …").
func openFirst(what string, candidates []string) (library, error) {
	if len(candidates) == 0 {
		return library{}, fmt.Errorf("%s: no library names to try", what)
	}
	var errs []error
	seen := map[string]bool{}
	for _, c := range candidates {
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		h, err := dlopen(c)
		if err == nil {
			return library{handle: h, path: c}, nil
		}
		msg := err.Error()
		if !strings.Contains(msg, c) {
			msg = c + ": " + msg
		}
		errs = append(errs, errors.New(msg))
	}
	return library{}, fmt.Errorf("%s not loaded: %w", what, errors.Join(errs...))
}

// symbol resolves the first of names that the library exports. Versioned
// names come first in every list the package passes, so a bare legacy name
// is only taken where no versioned one exists.
func (l library) symbol(names ...string) (uintptr, string, error) {
	var errs []error
	for _, n := range names {
		p, err := purego.Dlsym(l.handle, n)
		if err == nil && p != 0 {
			return p, n, nil
		}
		if err == nil {
			err = errors.New("null address")
		}
		errs = append(errs, fmt.Errorf("%s: %w", n, err))
	}
	return 0, "", fmt.Errorf("%s: %w", l.path, errors.Join(errs...))
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
