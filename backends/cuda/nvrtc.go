package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/diskcache"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// nvrtcAPI holds NVRTC's entry points.
type nvrtcAPI struct {
	lib          library
	major, minor int32

	createProgram, compileProgram, destroyProgram, getProgramLogSize, getProgramLog uintptr
	getPTXSize, getPTX, getErrorString, version                                     uintptr
	// optional: absent in old releases
	getCUBINSize, getCUBIN, addNameExpression, getLoweredName, getNumSupportedArchs, getSupportedArchs uintptr
}

// nvrtcLib is NVRTC, loaded on the first compile of a CUDA C variant.
var nvrtcLib dl.Lazy[*nvrtcAPI]

// nvrtcSonames are tried before versioned files found on disk.
var nvrtcSonames = []string{"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

// symbols lists NVRTC's entry points; those absent in old releases are
// optional.
func (n *nvrtcAPI) symbols() []dl.Symbol {
	return []dl.Symbol{
		{Addr: &n.createProgram, Name: "nvrtcCreateProgram"},
		{Addr: &n.compileProgram, Name: "nvrtcCompileProgram"},
		{Addr: &n.destroyProgram, Name: "nvrtcDestroyProgram"},
		{Addr: &n.getProgramLogSize, Name: "nvrtcGetProgramLogSize"},
		{Addr: &n.getProgramLog, Name: "nvrtcGetProgramLog"},
		{Addr: &n.getPTXSize, Name: "nvrtcGetPTXSize"},
		{Addr: &n.getPTX, Name: "nvrtcGetPTX"},
		{Addr: &n.getErrorString, Name: "nvrtcGetErrorString"},
		{Addr: &n.version, Name: "nvrtcVersion"},
		{Addr: &n.getCUBINSize, Name: "nvrtcGetCUBINSize", Optional: true},
		{Addr: &n.getCUBIN, Name: "nvrtcGetCUBIN", Optional: true},
		{Addr: &n.addNameExpression, Name: "nvrtcAddNameExpression", Optional: true},
		{Addr: &n.getLoweredName, Name: "nvrtcGetLoweredName", Optional: true},
		{Addr: &n.getNumSupportedArchs, Name: "nvrtcGetNumSupportedArchs", Optional: true},
		{Addr: &n.getSupportedArchs, Name: "nvrtcGetSupportedArchs", Optional: true},
	}
}

// loadNVRTC opens NVRTC once: the explicit path, the sonames, then the
// versioned files on disk (the builtins library is not NVRTC).
func loadNVRTC(explicit string) (*nvrtcAPI, error) {
	return nvrtcLib.Load(func() (*nvrtcAPI, error) {
		cands := toolkitCandidates(explicit, "libnvrtc", nvrtcSonames, libDirs())
		cands = slices.DeleteFunc(cands, func(s string) bool { return strings.Contains(filepath.Base(s), "builtins") })
		n := &nvrtcAPI{}
		lib, err := openLibrary("NVRTC", cands, func(h uintptr) error { return entryPoints(h, n.symbols()) })
		if err != nil {
			return nil, err
		}
		n.lib = lib
		n.call(n.version, uintptr(unsafe.Pointer(&n.major)), uintptr(unsafe.Pointer(&n.minor)))
		return n, nil
	})
}

//go:uintptrescapes
func (n *nvrtcAPI) call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

func (n *nvrtcAPI) errorString(r int32) string {
	p, _, _ := purego.SyscallN(n.getErrorString, uintptr(r))
	if p == 0 {
		return "NVRTC error " + strconv.Itoa(int(r))
	}
	return goString(*(**byte)(unsafe.Pointer(&p))) // a static string NVRTC owns
}

// target is what NVRTC builds for a device: CUBIN for its exact arch when
// NVRTC knows the arch, else PTX for the newest virtual arch it knows that
// the device runs (the driver finishes the compile at load).
type target struct {
	arch  string // "sm_90" or "compute_90"
	cubin bool
}

func (t target) kind() string {
	if t.cubin {
		return "cubin"
	}
	return "ptx"
}

// pickTarget chooses the build target for compute capability want (major*10+
// minor) given the archs NVRTC lists (nil when it cannot list them).
func pickTarget(want int, supported []int, hasCUBIN bool) (target, error) {
	if supported == nil || slices.Contains(supported, want) {
		if hasCUBIN {
			return target{arch: "sm_" + strconv.Itoa(want), cubin: true}, nil
		}
		return target{arch: "compute_" + strconv.Itoa(want)}, nil
	}
	best := -1
	for _, a := range supported {
		if a <= want && a > best {
			best = a
		}
	}
	if best < 0 {
		return target{}, fmt.Errorf("NVRTC supports none of the archs up to sm_%d (it lists %v)", want, supported)
	}
	return target{arch: "compute_" + strconv.Itoa(best)}, nil
}

func (n *nvrtcAPI) supportedArchs() []int {
	if n.getNumSupportedArchs == 0 || n.getSupportedArchs == 0 {
		return nil
	}
	var count int32
	if n.call(n.getNumSupportedArchs, uintptr(unsafe.Pointer(&count))) != 0 || count <= 0 || count > 1024 {
		return nil
	}
	archs := make([]int32, count)
	if n.call(n.getSupportedArchs, uintptr(unsafe.Pointer(&archs[0]))) != 0 {
		return nil
	}
	out := make([]int, count)
	for i, a := range archs {
		out[i] = int(a)
	}
	return out
}

// compiled is a built module image and the symbol of its entry.
type compiled struct {
	kind    string // "cubin" or "ptx"
	symbol  string // the entry's (lowered) name in the module
	image   []byte // for PTX, NUL-terminated
	fromLog string // the compiler's log (warnings), empty from the cache
}

// compileOptions are the options NVRTC gets: the variant's, then the
// target arch unless the variant names one.
func compileOptions(user []string, t target) []string {
	opts := slices.Clone(user)
	for _, o := range user {
		if strings.HasPrefix(o, "--gpu-architecture") || strings.HasPrefix(o, "-arch") || strings.HasPrefix(o, "--gpu-arch") {
			return opts
		}
	}
	return append(opts, "--gpu-architecture="+t.arch)
}

// compile runs NVRTC on src. A failed build is driver.ErrCompile with the
// log; the lowered name of entry comes from a name expression, so entry may
// be extern "C" or a C++ name (a template instance too).
func (n *nvrtcAPI) compile(src, entry string, opts []string, t target) (*compiled, error) {
	strs := append([]string{src, "zyx_" + entry + ".cu", entry}, opts...)
	mem, ptrs, _, err := cStrings(strs...)
	if err != nil {
		return nil, err
	}
	defer mem.free()
	var prog uintptr
	if r := n.call(n.createProgram, uintptr(unsafe.Pointer(&prog)), ptrs[0], ptrs[1], 0, 0, 0); r != 0 {
		return nil, &driver.Error{Backend: Name, Op: "nvrtcCreateProgram", Native: n.errorString(r), Err: driver.ErrCompile}
	}
	defer n.call(n.destroyProgram, uintptr(unsafe.Pointer(&prog)))
	named := n.addNameExpression != 0 && n.getLoweredName != 0
	if named {
		if r := n.call(n.addNameExpression, prog, ptrs[2]); r != 0 {
			return nil, &driver.Error{Backend: Name, Op: "nvrtcAddNameExpression", Native: n.errorString(r), Err: driver.ErrCompile}
		}
	}
	optArray := mem.addr(8 * 3) // the pointer array entries for opts follow src, name and entry
	r := n.call(n.compileProgram, prog, uintptr(len(opts)), optArray)
	log := n.log(prog)
	if r != 0 {
		return nil, &driver.Error{Backend: Name, Op: "nvrtcCompileProgram", Native: strings.TrimSpace(n.errorString(r) + "\n" + log),
			Err: fmt.Errorf("%w: %s for %s", driver.ErrCompile, entry, t.arch)}
	}
	c := &compiled{kind: t.kind(), symbol: entry, fromLog: log}
	var size uintptr
	if t.cubin {
		if r := n.call(n.getCUBINSize, prog, uintptr(unsafe.Pointer(&size))); r != 0 || size == 0 {
			return nil, &driver.Error{Backend: Name, Op: "nvrtcGetCUBINSize", Native: n.errorString(r), Err: driver.ErrCompile}
		}
		c.image = make([]byte, size)
		if r := n.call(n.getCUBIN, prog, uintptr(unsafe.Pointer(&c.image[0]))); r != 0 {
			return nil, &driver.Error{Backend: Name, Op: "nvrtcGetCUBIN", Native: n.errorString(r), Err: driver.ErrCompile}
		}
	} else {
		if r := n.call(n.getPTXSize, prog, uintptr(unsafe.Pointer(&size))); r != 0 || size == 0 {
			return nil, &driver.Error{Backend: Name, Op: "nvrtcGetPTXSize", Native: n.errorString(r), Err: driver.ErrCompile}
		}
		c.image = make([]byte, size+1)
		if r := n.call(n.getPTX, prog, uintptr(unsafe.Pointer(&c.image[0]))); r != 0 {
			return nil, &driver.Error{Backend: Name, Op: "nvrtcGetPTX", Native: n.errorString(r), Err: driver.ErrCompile}
		}
		c.image = c.image[:bytes.IndexByte(c.image, 0)+1]
	}
	if named {
		var lowered *byte // owned by the program until it is destroyed
		if r := n.call(n.getLoweredName, prog, ptrs[2], uintptr(unsafe.Pointer(&lowered))); r == 0 && lowered != nil {
			c.symbol = goString(lowered)
		}
	}
	return c, nil
}

func (n *nvrtcAPI) log(prog uintptr) string {
	var size uintptr
	if n.call(n.getProgramLogSize, prog, uintptr(unsafe.Pointer(&size))) != 0 || size <= 1 {
		return ""
	}
	buf := make([]byte, size)
	if n.call(n.getProgramLog, prog, uintptr(unsafe.Pointer(&buf[0]))) != 0 {
		return ""
	}
	return cString(buf)
}

// The module cache: one file per build, named by a hash of everything that
// decides the build's bytes.
const moduleMagic = "ZYXCUMOD1\n"

// moduleKey hashes the source, entry, options, target and the versions of
// NVRTC and the driver.
func moduleKey(src, entry string, opts []string, t target, nvrtcVersion string, driverVersion int32) string {
	h := sha256.New()
	for _, part := range []string{moduleMagic, src, entry, strings.Join(opts, "\x00"), t.arch, t.kind(), nvrtcVersion, strconv.Itoa(int(driverVersion))} {
		fmt.Fprintf(h, "%d:%s;", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// encodeModule is the cache file: magic, kind line, symbol line, image.
func encodeModule(c *compiled) []byte {
	var b bytes.Buffer
	b.WriteString(moduleMagic)
	b.WriteString(c.kind + "\n")
	b.WriteString(c.symbol + "\n")
	b.Write(c.image)
	return b.Bytes()
}

// decodeModule reads a cache file. Anything malformed is an error, and the
// caller rebuilds.
func decodeModule(data []byte) (*compiled, error) {
	rest, ok := bytes.CutPrefix(data, []byte(moduleMagic))
	if !ok {
		return nil, errors.New("cuda module cache: bad magic")
	}
	kind, rest, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || (string(kind) != "cubin" && string(kind) != "ptx") {
		return nil, errors.New("cuda module cache: bad kind")
	}
	sym, image, ok := bytes.Cut(rest, []byte("\n"))
	if !ok || len(sym) == 0 || bytes.IndexByte(sym, 0) >= 0 {
		return nil, errors.New("cuda module cache: bad symbol")
	}
	if len(image) == 0 {
		return nil, errors.New("cuda module cache: empty image")
	}
	if string(kind) == "ptx" && image[len(image)-1] != 0 {
		return nil, errors.New("cuda module cache: PTX is not NUL-terminated")
	}
	return &compiled{kind: string(kind), symbol: string(sym), image: slices.Clone(image)}, nil
}

// maxCachedModule bounds a module read back from the cache: a larger file
// is not one of ours, and the module is built again.
const maxCachedModule = 256 << 20

func readCachedModule(dir *diskcache.Dir, key string) *compiled {
	if dir == nil {
		return nil
	}
	data, err := dir.ReadFile(key+".mod", maxCachedModule)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			driver.Debug(driver.DebugCompile, "cuda: cache file not used", "key", key, "err", err)
		}
		return nil
	}
	c, err := decodeModule(data)
	if err != nil {
		driver.Debug(driver.DebugCompile, "cuda: ignoring a bad cache file", "key", key, "err", err)
		return nil
	}
	return c
}

// writeCachedModule stores c atomically (temp file, rename); a failure only
// costs a rebuild next time.
func writeCachedModule(dir *diskcache.Dir, key string, c *compiled) {
	if dir == nil {
		return
	}
	if err := dir.WriteFile(key+".mod", encodeModule(c)); err != nil {
		driver.Debug(driver.DebugCompile, "cuda: module cache not written", "err", err)
	}
}
