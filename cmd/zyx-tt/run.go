package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/bundle"
	"github.com/zyxtt/zyxtt/internal/registry"
)

const runAbout = `Run compiles the program bundle BUNDLE (a directory, see docs/programs.md) on a
device, fills its inputs, launches it, and reads its outputs back.

Devices (--dev): auto (the device measured fastest for this program and size,
from the performance record; else Tenstorrent cards first, then GPUs, the
native CPU backends, software implementations of GPU APIs, emulators last;
every device passed over is listed with the reason), fastest (measure every
device that can run the program, within --budget, record it and run on the
winner),
a backend (tt, cuda, opencl, vulkan, c, cblas) for its first device, or a
device name (tt:1, tt-emu:0, cuda:0, opencl:0, vulkan:0). tt and tt:N mean
Tenstorrent hardware; the emulator is tt-emu or tt-emu:N.

Inputs (--in NAME=SPEC): FILE.npy, FILE.bin, random, random:LO:HI, const:V or
iota. Buffers without --in use the bundle's default (random for inputs, zeros
for outputs).

--verify runs the program again and compares every output: against the
bundle's float64 host reference when it has one, else on the C backend;
--verify=DEV names the reference device. A mismatch exits with status 3.

--dprint (or ZYX_EMU_DPRINT=1) shows what Tenstorrent kernels print (DPRINT)
on stderr, one line each, tagged with the core and processor that printed it:
core (r,c) PROCESSOR: TEXT.

--debug runs the kernels so that gdb can stop in them (the emulator; --dev
auto means tt-emu): built at -O0 with debug info, with no deadline on the
runtime's calls, and the first run waits until a debugger attaches to the
runtime, whose pid and a gdb command line are printed (docs/emulator.md,
"Stepping through a kernel with gdb").

--strict-noc runs the emulator's watcher in strict NOC mode (adds
strict-noc to ZYX_EMU_WATCHER): a NOC read's data lands in L1 only at its
barrier, and a kernel that hands it on before (cb_push_back, a NOC write
from it), pops a page a write has not flushed, or changes a write's source
before its barrier fails, naming the rule (docs/emulator.md, "Debugging
kernels").`

// runFlags is the command line of `zyx-tt run`.
type runFlags struct {
	bundleDir string
	dev       string
	set, in   map[string]string
	out       map[string]string
	outOrder  []string
	verify    optFlag
	repeat    int
	queue     bool
	budget    time.Duration
	json      bool
	dprint    bool
	debug     bool
	strictNoc bool
}

// runFlagSet defines run's flags into f and the repeatable lists.
func runFlagSet(f *runFlags, sets, ins, outs *listFlag, stdout io.Writer) *flagSet {
	fs := newFlagSet("run", "[flags] BUNDLE", runAbout, stdout)
	fs.StringVar(&f.dev, "dev", "auto", "device: auto, fastest, tt, tt:N, tt-emu, tt-emu:N, cuda:N, opencl:N, vulkan:N, c, cblas")
	fs.DurationVar(&f.budget, "budget", 0, "how long --dev fastest may measure, over every device (default 30s, or config select.budget_s)")
	fs.Var(sets, "set", "set a variable, `VAR=VALUE` (repeatable)")
	fs.Var(ins, "in", "input data, `NAME=FILE.npy|FILE.bin|random|random:LO:HI|const:V|iota` (repeatable)")
	fs.Var(outs, "out", "write an output, `NAME=FILE.npy|FILE.bin` (repeatable)")
	fs.Var(&f.verify, "verify", "verify outputs; `--verify=DEV` names the reference device (default: host reference, else c)")
	fs.IntVar(&f.repeat, "repeat", 0, "time `N` more launches with LaunchTimed and report min, median, max")
	fs.BoolVar(&f.queue, "queue", false, "with --repeat N, also time N launches on the wall clock each waited for, against N queued with one wait")
	fs.BoolVar(&f.json, "json", false, "print a JSON report (schema in docs/probe.md)")
	fs.BoolVar(&f.dprint, "dprint", false, "show kernel DPRINT output on stderr, tagged with core and processor (Tenstorrent)")
	fs.BoolVar(&f.debug, "debug", false, "build kernels for gdb (-O0, debug info), lift the runtime's deadlines and wait for a debugger (tt-emu)")
	fs.BoolVar(&f.strictNoc, "strict-noc", false, "the emulator's NOC reads land only at their barrier, and data used before it is an error (tt-emu)")
	return fs
}

func parseRunFlags(args []string, stdout io.Writer) (*runFlags, error) {
	f := &runFlags{}
	var sets, ins, outs listFlag
	fs := runFlagSet(f, &sets, &ins, &outs, stdout)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != 1 {
		return nil, usagef("want exactly one BUNDLE directory, got %d arguments", len(pos))
	}
	f.bundleDir = pos[0]
	if f.repeat < 0 {
		return nil, usagef("--repeat %d: must be 0 or more", f.repeat)
	}
	if f.queue && f.repeat == 0 {
		return nil, usagef("--queue times the --repeat launches: give --repeat N too")
	}
	if f.budget < 0 {
		return nil, usagef("--budget %s: must be positive", f.budget)
	}
	if f.set, _, err = sets.pairs("set"); err != nil {
		return nil, err
	}
	if f.in, _, err = ins.pairs("in"); err != nil {
		return nil, err
	}
	if f.out, f.outOrder, err = outs.pairs("out"); err != nil {
		return nil, err
	}
	if err := checkSelector("dev", f.dev); err != nil {
		return nil, err
	}
	if f.verify.value != "" {
		if err := checkSelector("verify", f.verify.value); err != nil {
			return nil, err
		}
	}
	for name, spec := range f.in {
		if _, err := bundle.ParseGen(spec); err != nil && !bundle.IsFileSpec(spec) {
			return nil, usagef("--in %s=%s: %v", name, spec, err)
		}
	}
	for name, path := range f.out {
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".npy" && ext != ".bin" {
			return nil, usagef("--out %s=%s: want a .npy or .bin file", name, path)
		}
	}
	return f, nil
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRunFlags(args, stdout)
	if err != nil {
		return err
	}
	b, err := bundle.Load(f.bundleDir)
	if err != nil {
		return err
	}
	if err := checkOutFlags(f, b); err != nil {
		return err
	}

	opts := backends.Options{}
	if v := os.Getenv("ZYX_EMU_DPRINT"); v != "" && v != "0" {
		f.dprint = true // the emulator's own switch means --dprint here
	}
	// Kernel output and the debug hint arrive from other goroutines while
	// progress bars draw on stderr.
	kernelOut := &lockedWriter{w: stderr}
	if f.dprint {
		opts.KernelOutput = kernelOut
	}
	var debugged atomic.Bool
	if f.debug {
		if f.dev == "auto" {
			f.dev = "tt-emu" // the one device a debugger can stop in a kernel
		}
		opts.KernelDebug = func(dev string, pid int) {
			debugged.Store(true)
			fmt.Fprint(kernelOut, debugHowTo(dev, pid, f.bundleDir))
		}
	}
	if f.strictNoc {
		opts.EmuEnv = []string{strictNocWatcher(os.Getenv("ZYX_EMU_WATCHER"))}
	}
	rt, err := backends.Open(ctx, opts)
	if err != nil {
		return err
	}
	defer rt.Close()
	if cfg := configOf(rt); configError(cfg) != nil {
		writeConfigFaults(stderr, cfg)
		return configError(cfg)
	}
	bars := newProgress(stderr)
	run, res, err := b.RunOnce(ctx, rt, bundle.Options{
		Set: f.set, Inputs: f.in, Progress: bars.bundleProgress(),
		Device: f.dev, Repeat: f.repeat, Queue: f.queue, Verify: f.verify.set, VerifyOn: f.verify.value,
		Select: []backends.SelectOption{backends.WithBudget(f.budget)},
	})
	if run != nil {
		defer run.Close()
	}
	bars.wait()
	if f.debug && !debugged.Load() {
		fmt.Fprintf(stderr, "warning: --debug: no device of this run can stop in a kernel (only the emulator, tt-emu, can)\n")
	}
	var ue *bundle.UsageError
	if errors.As(err, &ue) {
		return usagef("%v", ue)
	}
	if err != nil {
		return err
	}
	rep := run.Report
	rep.Bundle = f.bundleDir
	failed := rep.Verify != nil && !rep.Verify.OK

	// Outputs are staged beside their paths and put in place only when every
	// one is written and the run succeeded: a failed run replaces no file.
	var staged []*bundle.StagedOutput
	defer func() {
		for _, st := range staged {
			st.Discard()
		}
	}()
	if !failed {
		for _, name := range f.outOrder {
			i, _ := b.ParamIndex(name)
			data, err := run.Output(res, i)
			if err != nil {
				return err
			}
			st, err := bundle.StageOutput(f.out[name], b.Params[i].DType, run.Shapes[i], data)
			if err != nil {
				return err
			}
			staged = append(staged, st)
			rep.Written = append(rep.Written, bundle.WrittenReport{Param: name, Path: f.out[name]})
		}
	}
	var out bytes.Buffer
	if f.json {
		enc := json.NewEncoder(&out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeRun(&out, rep)
		if failed && len(f.outOrder) > 0 {
			fmt.Fprintf(&out, "  not written: %s (the run failed verification)\n", strings.Join(f.outOrder, ", "))
		}
	}
	for _, st := range staged {
		if err := st.Commit(); err != nil {
			return err
		}
	}
	staged = nil
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return err
	}
	if failed {
		return mismatch(rep.Verify)
	}
	return nil
}

// checkOutFlags refuses an --out that names no buffer param of b, and fails
// before any work when an output cannot be written.
func checkOutFlags(f *runFlags, b *bundle.Bundle) error {
	for name := range f.out {
		if i, ok := b.ParamIndex(name); !ok || !b.Params[i].Kind.IsBuffer() {
			return usagef("--out %s: bundle %s has no buffer param %q (%s)", name, b.Name, name, b.BufferNames())
		}
	}
	for _, name := range f.outOrder {
		if err := checkWritable(f.out[name]); err != nil {
			return fmt.Errorf("--out %s: %w", name, err)
		}
	}
	return nil
}

// checkWritable makes and removes a temp file next to path.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// strictNocWatcher is the ZYX_EMU_WATCHER setting for --strict-noc, given
// the one in the environment: its checks, plus strict NOC mode ("off" stays
// off: strict mode is part of the watcher).
func strictNocWatcher(cur string) string {
	switch cur {
	case "", "1", "on":
		return "ZYX_EMU_WATCHER=strict-noc"
	case "0", "off":
		return "ZYX_EMU_WATCHER=" + cur
	}
	return "ZYX_EMU_WATCHER=" + cur + ",strict-noc"
}

// debugHowTo tells how to attach gdb to the runtime of device dev (pid) and
// stop in a kernel of the bundle in dir (docs/emulator.md, "Stepping through
// a kernel with gdb"). A kernel's source is compiled as <kernel name>.cpp
// under /zyx-kernel-cwd, so gdb finds the text through `directory` entries
// for the bundle's source folders.
func debugHowTo(dev string, pid int, dir string) string {
	dirs := ""
	for _, d := range sourceDirs(dir) {
		dirs += fmt.Sprintf(" -ex 'directory %s'", d)
	}
	return fmt.Sprintf(`debug: %[1]s runs in runtime pid %[2]d: kernels build at -O0 with debug info, and its calls have no deadline
debug: its first run waits until a debugger attaches; to stop at line LINE of the kernel NAME (as tt.json names it), in another terminal:
debug:   gdb -p %[2]d -ex 'set breakpoint pending on'%[3]s -ex 'break NAME.cpp:LINE' -ex continue
`, dev, pid, dirs)
}

// sourceDirs lists the absolute folders of dir (itself and two levels
// below) that hold C++ sources, for gdb's source path.
func sourceDirs(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []string
	_ = filepath.WalkDir(abs, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(abs, p); strings.Count(rel, string(filepath.Separator)) >= 2 {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".cpp", ".cc", ".h", ".hpp":
			if d := filepath.Dir(p); !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
		return nil
	})
	return out
}

// lockedWriter serializes writes: kernel output arrives from the runtime's
// reader while progress bars draw on the same stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// checkSelector refuses a device selector that names no backend and no
// device prefix of this build (a usage error, exit status 2), listing the
// valid ones. Whether the device exists on this host is for the run to say.
func checkSelector(flagName, sel string) error {
	prefix, _, _ := strings.Cut(sel, ":")
	valid := deviceSelectors()
	if slices.Contains(valid, prefix) && (prefix != "auto" && prefix != "fastest" || prefix == sel) {
		return nil
	}
	return usagef("--%s %s: unknown device%s; give one of %s, or BACKEND:N (zyx-tt probe -L lists this host's devices)",
		flagName, sel, didYouMean("", prefix, valid), strings.Join(valid, ", "))
}

// namedPrefixes are the device-name prefixes drivers claim besides their
// backend names ("tt-emu").
func namedPrefixes() []string {
	var out []string
	for _, name := range backends.Registered() {
		d, err := registry.Lookup(name)
		if err != nil {
			continue
		}
		if dn, ok := d.(driver.DeviceNamer); ok {
			for p := range dn.DeviceNamePrefixes() {
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}
