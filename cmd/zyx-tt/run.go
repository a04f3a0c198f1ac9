package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/zyxtt/zyxtt/backends"
	"github.com/zyxtt/zyxtt/backends/bundle"
	"github.com/zyxtt/zyxtt/hostpool"
)

// runReport is `zyx-tt run --json` (docs/probe.md).
type runReport struct {
	Bundle      string          `json:"bundle"`
	Program     string          `json:"program"`
	Description string          `json:"description,omitempty"`
	Vars        []varReport     `json:"vars"`
	Skipped     []skipReport    `json:"skipped"`
	Device      deviceReport    `json:"device"`
	Grid        []uint64        `json:"grid"`
	Params      []paramReport   `json:"params"`
	Timing      timingReport    `json:"timing"`
	Repeat      *repeatReport   `json:"repeat,omitempty"`
	Verify      *verifyReport   `json:"verify,omitempty"`
	Written     []writtenReport `json:"written"`
}

type varReport struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Value string `json:"value"`
}

type skipReport struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

type deviceReport struct {
	Name     string `json:"name"`
	Backend  string `json:"backend"`
	Hardware string `json:"hardware"`
	Kind     string `json:"kind"`
	Emulated bool   `json:"emulated,omitempty"`
}

type paramReport struct {
	Name  string   `json:"name"`
	Kind  string   `json:"kind"`
	DType string   `json:"dtype"`
	Shape []uint64 `json:"shape,omitempty"`
	Bytes int64    `json:"bytes,omitempty"`
	// Input is where a buffer's initial data came from (a generator spec, a
	// file, or "zeros"); Value is a variable's value.
	Input string `json:"input,omitempty"`
	Value string `json:"value,omitempty"`
}

type timingReport struct {
	CompileNS  int64 `json:"compile_ns"`
	UploadNS   int64 `json:"upload_ns"`
	LaunchNS   int64 `json:"launch_ns"`
	DownloadNS int64 `json:"download_ns"`
	UpBytes    int64 `json:"upload_bytes"`
	DownBytes  int64 `json:"download_bytes"`
}

type repeatReport struct {
	Runs     int   `json:"runs"`
	MinNS    int64 `json:"min_ns"`
	MedianNS int64 `json:"median_ns"`
	MaxNS    int64 `json:"max_ns"`
}

type verifyReport struct {
	// Against is "host" for the bundle's float64 reference, else the
	// reference device's name.
	Against string          `json:"against"`
	Skipped []skipReport    `json:"skipped,omitempty"`
	OK      bool            `json:"ok"`
	Outputs []outputVerdict `json:"outputs"`
}

type outputVerdict struct {
	Name       string  `json:"name"`
	Elems      int     `json:"elems"`
	MaxAbs     float64 `json:"max_abs"`
	MaxRel     float64 `json:"max_rel"`
	Atol       float64 `json:"atol"`
	Rtol       float64 `json:"rtol"`
	Mismatches int64   `json:"mismatches"`
	Worst      int     `json:"worst_index"`
	Got        float64 `json:"worst_got"`
	Want       float64 `json:"worst_want"`
	OK         bool    `json:"ok"`
}

type writtenReport struct {
	Param string `json:"param"`
	Path  string `json:"path"`
}

const runAbout = `Run compiles the program bundle BUNDLE (a directory, see docs/programs.md) on a
device, fills its inputs, launches it, and reads its outputs back.

Devices (--dev): auto (Tenstorrent cards first, then the device with the most
compute, emulators last; every device passed over is listed with the reason),
a backend (tt, tt-emu, cuda, opencl, vulkan, c, cblas) for its first device, or
a device name (tt:1, cuda:0, opencl:0, vulkan:0).

Inputs (--in NAME=SPEC): FILE.npy, FILE.bin, random, random:LO:HI, const:V or
iota. Buffers without --in use the bundle's default (random for inputs, zeros
for outputs).

--verify runs the program again and compares every output: against the
bundle's float64 host reference when it has one, else on the C backend;
--verify=DEV names the reference device. A mismatch exits with status 3.`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "[flags] BUNDLE", runAbout, stdout)
	dev := fs.String("dev", "auto", "device: auto, tt, tt:N, tt-emu, cuda:N, opencl:N, vulkan:N, c, cblas")
	var sets, ins, outs listFlag
	fs.Var(&sets, "set", "set a variable, `VAR=VALUE` (repeatable)")
	fs.Var(&ins, "in", "input data, `NAME=FILE.npy|FILE.bin|random|random:LO:HI|const:V|iota` (repeatable)")
	fs.Var(&outs, "out", "write an output, `NAME=FILE.npy|FILE.bin` (repeatable)")
	var verify optFlag
	fs.Var(&verify, "verify", "verify outputs; `--verify=DEV` names the reference device (default: host reference, else c)")
	repeat := fs.Int("repeat", 0, "time `N` more launches with LaunchTimed and report min, median, max")
	asJSON := fs.Bool("json", false, "print a JSON report (schema in docs/probe.md)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one BUNDLE directory, got %d arguments", len(pos))
	}
	if *repeat < 0 {
		return usagef("--repeat %d: must be 0 or more", *repeat)
	}
	setMap, _, err := sets.pairs("set")
	if err != nil {
		return err
	}
	inMap, _, err := ins.pairs("in")
	if err != nil {
		return err
	}
	outMap, outOrder, err := outs.pairs("out")
	if err != nil {
		return err
	}
	for name, spec := range inMap {
		if _, err := bundle.ParseGen(spec); err != nil && !bundle.IsFileSpec(spec) {
			return usagef("--in %s=%s: %v", name, spec, err)
		}
	}
	for name, path := range outMap {
		if ext := strings.ToLower(filepath.Ext(path)); ext != ".npy" && ext != ".bin" {
			return usagef("--out %s=%s: want a .npy or .bin file", name, path)
		}
	}

	b, err := bundle.Load(pos[0])
	if err != nil {
		return err
	}
	vals, err := b.VarValues(setMap)
	if err != nil {
		return usagef("--set: %v", err)
	}
	for name := range inMap {
		if i, ok := b.ParamIndex(name); !ok || !b.Params[i].Kind.IsBuffer() {
			return usagef("--in %s: bundle %s has no buffer param %q (%s)", name, b.Name, name, bufferNames(b))
		}
	}
	for name := range outMap {
		if i, ok := b.ParamIndex(name); !ok || !b.Params[i].Kind.IsBuffer() {
			return usagef("--out %s: bundle %s has no buffer param %q (%s)", name, b.Name, name, bufferNames(b))
		}
	}
	// Fail before any work when an output cannot be written.
	for _, name := range outOrder {
		if err := checkWritable(outMap[name]); err != nil {
			return fmt.Errorf("--out %s: %w", name, err)
		}
	}

	r := &runner{b: b, vals: vals, prog: newProgress(stderr), stderr: stderr}
	defer r.close()
	rep := &runReport{Bundle: pos[0], Program: b.Name, Description: b.Description, Skipped: []skipReport{}, Written: []writtenReport{}}
	for i, v := range b.Vars {
		rep.Vars = append(rep.Vars, varReport{Name: v.Name, DType: v.DType.String(), Value: constText(vals[i])})
	}
	if err := r.prepareInputs(inMap, rep); err != nil {
		return err
	}

	// Compile on the chosen device, falling back device by device.
	bar := r.prog.spinner("compile")
	start := time.Now()
	d, exe, prog, skips, err := compileOn(ctx, b, vals, *dev)
	bar.done()
	for _, s := range skips {
		rep.Skipped = append(rep.Skipped, skipReport{s.Device, s.Reason})
	}
	if err != nil {
		r.prog.wait()
		return err
	}
	defer exe.Release()
	rep.Timing.CompileNS = time.Since(start).Nanoseconds()
	info := d.Info()
	rep.Device = deviceReport{Name: d.Name(), Backend: d.Backend(), Hardware: info.Name, Kind: string(info.Kind), Emulated: info.Emulated}

	res, err := r.execute(ctx, d, exe, prog, *repeat, true)
	if err != nil {
		r.prog.wait()
		return fmt.Errorf("%s on %s: %w", b.Name, d.Name(), err)
	}
	rep.Grid = res.grid
	rep.Timing.UploadNS, rep.Timing.LaunchNS, rep.Timing.DownloadNS = res.upload.Nanoseconds(), res.launch.Nanoseconds(), res.download.Nanoseconds()
	rep.Timing.UpBytes, rep.Timing.DownBytes = res.upBytes, res.downBytes
	if len(res.timed) > 0 {
		rep.Repeat = summarize(res.timed)
	}

	var verifyErr error
	if verify.set {
		rep.Verify, verifyErr = r.verify(ctx, verify.value, res)
	}
	r.prog.wait()
	if verifyErr != nil {
		return verifyErr
	}

	for _, name := range outOrder {
		i, _ := b.ParamIndex(name)
		data, err := r.outputBytes(res, i)
		if err != nil {
			return err
		}
		if err := bundle.WriteOutput(outMap[name], b.Params[i].DType, r.shapes[i], data); err != nil {
			return err
		}
		rep.Written = append(rep.Written, writtenReport{name, outMap[name]})
	}

	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		writeRun(stdout, rep)
	}
	if rep.Verify != nil && !rep.Verify.OK {
		var bad []string
		for _, o := range rep.Verify.Outputs {
			if !o.OK {
				bad = append(bad, fmt.Sprintf("%s: %d of %d elements out of tolerance", o.Name, o.Mismatches, o.Elems))
			}
		}
		return fmt.Errorf("%w against %s: %s", errMismatch, rep.Verify.Against, strings.Join(bad, "; "))
	}
	return nil
}

func bufferNames(b *bundle.Bundle) string {
	var names []string
	for _, p := range b.Params {
		if p.Kind.IsBuffer() {
			names = append(names, p.Name)
		}
	}
	return "buffers: " + strings.Join(names, ", ")
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

func constText(c backends.Constant) string {
	if c.DType.IsFloat() {
		return fmt.Sprintf("%g", c.Float())
	}
	if v, err := c.Int(); err == nil {
		return fmt.Sprint(v)
	}
	return fmt.Sprint(c.Bits)
}

// compileOn picks a device for the bundle and compiles it there. With a
// grid override per variant each backend gets its own Program, so the
// candidates are listed once and each is tried with CompileOn in turn.
func compileOn(ctx context.Context, b *bundle.Bundle, vals bundle.Values, selector string) (backends.Device, backends.Executable, *backends.Program, []backends.Skip, error) {
	if selector == "" {
		selector = "auto"
	}
	base, err := b.Program("", vals)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	devs, skips, err := backends.Candidates(ctx, base, selector)
	if err != nil {
		// "tt-emu" names devices of the tt backend; when there are none,
		// say why the tt backend has none rather than "unknown backend".
		if strings.HasPrefix(selector, "tt-emu") {
			if st, e := backends.Backend(ctx, "tt"); e == nil && len(st.Devices) == 0 && st.Err != nil {
				err = fmt.Errorf("%s: %w: the tt backend has no emulator device: %v", selector, backends.ErrNoDevice, st.Err)
			}
		}
		return nil, nil, nil, skips, err
	}
	for _, d := range devs {
		p, err := b.Program(d.Backend(), vals)
		if err != nil {
			return nil, nil, nil, skips, err
		}
		dev, exe, more, err := backends.CompileOn(ctx, p, d.Name())
		skips = append(skips, more...)
		if err == nil {
			return dev, exe, p, skips, nil
		}
		if ctx.Err() != nil {
			return nil, nil, nil, skips, ctx.Err()
		}
		if len(more) == 0 {
			skips = append(skips, backends.Skip{Device: d.Name(), Reason: err.Error()})
		}
	}
	parts := make([]string, len(skips))
	for i, s := range skips {
		parts[i] = s.String()
	}
	return nil, nil, nil, skips, fmt.Errorf("%w for %q: %s", backends.ErrNoDevice, selector, strings.Join(parts, "; "))
}

// runner holds one run's host data.
type runner struct {
	b      *bundle.Bundle
	vals   bundle.Values
	shapes [][]uint64
	prog   *progress
	stderr io.Writer

	host   *hostpool.Pool
	inputs map[int]backends.BufferID // every buffer param's initial data, in the host pool
	owned  []ownedBuf                // released by close
}

type ownedBuf struct {
	pool backends.Pool
	id   backends.BufferID
}

func (r *runner) close() {
	for i := len(r.owned) - 1; i >= 0; i-- {
		_ = r.owned[i].pool.Release(r.owned[i].id)
	}
	r.owned = nil
}

func (r *runner) alloc(ctx context.Context, pool backends.Pool, n int64) (backends.BufferID, error) {
	id, err := pool.Alloc(ctx, n)
	if err != nil {
		return 0, err
	}
	r.owned = append(r.owned, ownedBuf{pool, id})
	return id, nil
}

// prepareInputs fills a host-pool buffer for every buffer param.
func (r *runner) prepareInputs(inMap map[string]string, rep *runReport) error {
	b := r.b
	shapes, err := b.Shapes(r.vals)
	if err != nil {
		return err
	}
	r.shapes = shapes
	r.host, err = backends.HostPool()
	if err != nil {
		return err
	}
	r.inputs = map[int]backends.BufferID{}
	for i, p := range b.Params {
		pr := paramReport{Name: p.Name, Kind: p.Kind.String(), DType: p.DType.String()}
		if !p.Kind.IsBuffer() {
			vi, _ := b.VarIndex(p.Name)
			pr.Value = constText(r.vals[vi])
			rep.Params = append(rep.Params, pr)
			continue
		}
		n := bundle.Elems(shapes[i]) * int64(p.DType.Size())
		pr.Shape, pr.Bytes = shapes[i], n
		if n == 0 {
			return fmt.Errorf("%w: param %s has no elements (shape %v = %v)", backends.ErrInvalidArgument, p.Name, p.ShapeSrc, shapes[i])
		}
		id, err := r.alloc(context.Background(), r.host, n)
		if err != nil {
			return fmt.Errorf("param %s: %w", p.Name, err)
		}
		r.inputs[i] = id
		mem, err := r.host.Bytes(id)
		if err != nil {
			return err
		}
		spec, given := inMap[p.Name]
		fromBundle := false
		if !given {
			spec, fromBundle = b.Inputs[i]
			if !fromBundle && p.Kind == backends.Global {
				spec = "random"
			}
		}
		switch {
		case spec == "":
			clear(mem)
			pr.Input = "zeros"
		case bundle.IsFileSpec(spec):
			if err := bundle.ReadInput(spec, p.DType, shapes[i], mem); err != nil {
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			pr.Input = spec
		default:
			g, err := bundle.ParseGen(spec)
			if err != nil {
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			if err := bundle.Fill(mem, p.DType, g, uint64(i)); err != nil {
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			pr.Input = spec
		}
		rep.Params = append(rep.Params, pr)
	}
	return nil
}

// execResult is one device's run: its output buffers, back in the host pool.
type execResult struct {
	grid                     []uint64
	outputs                  map[int]backends.BufferID
	upload, launch, download time.Duration
	upBytes, downBytes       int64
	timed                    []time.Duration
}

// execute copies every buffer's initial data to the device, launches,
// repeats (timed) when asked, and copies the outputs back into new host
// buffers, leaving the inputs untouched for a verification run.
func (r *runner) execute(ctx context.Context, d backends.Device, exe backends.Executable, p *backends.Program, repeat int, showBars bool) (*execResult, error) {
	prog := r.prog
	if !showBars {
		prog = nil
	}
	pool := d.Pool()
	res := &execResult{outputs: map[int]backends.BufferID{}}
	args := make([]backends.LaunchArg, len(r.b.Params))
	sizes := make([]int64, len(r.b.Params)) // every buffer param's bytes
	var total int64
	for i, prm := range r.b.Params {
		if prm.Kind.IsBuffer() {
			n, err := r.host.Size(r.inputs[i])
			if err != nil {
				return nil, err
			}
			sizes[i] = n
			total += n
		}
	}
	outs := r.outputParams()
	var outBytes int64
	for _, i := range outs {
		outBytes += sizes[i]
	}
	up := prog.bytes("upload", total)
	start := time.Now()
	var done int64
	for i, prm := range r.b.Params {
		if !prm.Kind.IsBuffer() {
			vi, _ := r.b.VarIndex(prm.Name)
			args[i] = backends.VarArg(r.vals[vi])
			continue
		}
		n := sizes[i]
		id, err := r.alloc(ctx, pool, n)
		if err != nil {
			return nil, fmt.Errorf("param %s: %w", prm.Name, err)
		}
		base := done
		err = backends.Copy(ctx, pool, id, 0, r.host, r.inputs[i], 0, n,
			backends.WithProgress(func(d, _ int64) { up.set(base + d) }))
		if err != nil {
			return nil, fmt.Errorf("upload %s: %w", prm.Name, err)
		}
		done += n
		args[i] = backends.BufArg(id)
	}
	up.done()
	res.upload, res.upBytes = time.Since(start), total

	grid, err := backends.EvalGrid(p, args)
	if err != nil {
		return nil, err
	}
	res.grid = grid
	// Host buffers for the outputs are made, and their pages touched, before
	// anything is timed, so the download figure is the copy alone and not
	// the first-touch faults of fresh memory.
	for _, i := range outs {
		id, err := r.alloc(ctx, r.host, sizes[i])
		if err != nil {
			return nil, err
		}
		mem, err := r.host.Bytes(id)
		if err != nil {
			return nil, err
		}
		clear(mem)
		res.outputs[i] = id
	}
	start = time.Now()
	if err := exe.Launch(ctx, args); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	res.launch = time.Since(start)

	if repeat > 0 {
		bar := prog.count("repeat", int64(repeat))
		for range repeat {
			dt, err := exe.LaunchTimed(ctx, args)
			if err != nil {
				return nil, fmt.Errorf("timed launch: %w", err)
			}
			res.timed = append(res.timed, dt)
			bar.add(1)
		}
		bar.done()
	}

	down := prog.bytes("download", outBytes)
	start = time.Now()
	done = 0
	for _, i := range outs {
		n := sizes[i]
		id := res.outputs[i]
		base := done
		err = backends.Copy(ctx, r.host, id, 0, pool, args[i].Buffer, 0, n,
			backends.WithProgress(func(d, _ int64) { down.set(base + d) }))
		if err != nil {
			return nil, fmt.Errorf("download %s: %w", r.b.Params[i].Name, err)
		}
		done += n
	}
	down.done()
	res.download, res.downBytes = time.Since(start), outBytes
	return res, nil
}

// outputParams are the params read back: the bundle's outputs plus every
// other global_mut param (so --out can name any written buffer).
func (r *runner) outputParams() []int {
	var out []int
	for i, p := range r.b.Params {
		if p.Kind == backends.GlobalMut {
			out = append(out, i)
		}
	}
	return out
}

// outputBytes is param i's data after the run: read back for written
// params, the initial data for read-only ones.
func (r *runner) outputBytes(res *execResult, i int) ([]byte, error) {
	if id, ok := res.outputs[i]; ok {
		return r.host.Bytes(id)
	}
	return r.host.Bytes(r.inputs[i])
}

func summarize(ts []time.Duration) *repeatReport {
	s := slices.Clone(ts)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &repeatReport{Runs: len(s), MinNS: s[0].Nanoseconds(), MedianNS: med.Nanoseconds(), MaxNS: s[len(s)-1].Nanoseconds()}
}

// verify checks the outputs against the host reference (target "" with a
// reference in the bundle) or a reference device.
func (r *runner) verify(ctx context.Context, target string, res *execResult) (*verifyReport, error) {
	b := r.b
	rep := &verifyReport{OK: true}
	want := map[int][]float64{}
	if target == "" && b.Ref != nil {
		rep.Against = "host"
		in := map[int][]float64{}
		for _, a := range b.Ref.Args {
			mem, err := r.host.Bytes(r.inputs[a])
			if err != nil {
				return nil, err
			}
			if in[a], err = bundle.ToFloat64(b.Params[a].DType, mem); err != nil {
				return nil, err
			}
		}
		w, err := b.Ref.Compute(r.vals, in)
		if err != nil {
			return nil, fmt.Errorf("host reference: %w", err)
		}
		want[b.Ref.Out] = w
	} else {
		if target == "" {
			target = "c"
		}
		bar := r.prog.spinner("verify")
		d, exe, p, skips, err := compileOn(ctx, b, r.vals, target)
		bar.done()
		for _, s := range skips {
			rep.Skipped = append(rep.Skipped, skipReport{s.Device, s.Reason})
		}
		if err != nil {
			return nil, fmt.Errorf("reference device %s: %w", target, err)
		}
		defer exe.Release()
		rep.Against = d.Name()
		ref, err := r.execute(ctx, d, exe, p, 0, false)
		if err != nil {
			return nil, fmt.Errorf("reference run on %s: %w", d.Name(), err)
		}
		for _, i := range b.Outputs {
			mem, err := r.host.Bytes(ref.outputs[i])
			if err != nil {
				return nil, err
			}
			if want[i], err = bundle.ToFloat64(b.Params[i].DType, mem); err != nil {
				return nil, err
			}
		}
	}
	ids := make([]int, 0, len(want))
	for i := range want {
		ids = append(ids, i)
	}
	sort.Ints(ids)
	for _, i := range ids {
		prm := b.Params[i]
		mem, err := r.host.Bytes(res.outputs[i])
		if err != nil {
			return nil, err
		}
		got, err := bundle.ToFloat64(prm.DType, mem)
		if err != nil {
			return nil, err
		}
		tol := b.Ref.Tolerance(prm.DType, r.vals)
		c, err := bundle.Compare(got, want[i], tol)
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", prm.Name, err)
		}
		v := outputVerdict{Name: prm.Name, Elems: c.Elems, MaxAbs: c.MaxAbs, MaxRel: c.MaxRel, Atol: tol.Atol, Rtol: tol.Rtol,
			Mismatches: c.Mismatches, Worst: c.Worst, OK: c.OK()}
		if c.Elems > 0 {
			v.Got, v.Want = got[c.Worst], want[i][c.Worst]
		}
		rep.OK = rep.OK && v.OK
		rep.Outputs = append(rep.Outputs, v)
	}
	return rep, nil
}

func writeSkips(w io.Writer, skips []skipReport) {
	for _, s := range skips {
		fmt.Fprintf(w, "  skipped   %s: %s\n", s.Device, oneLine(s.Reason))
	}
}

func dur(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", ns)
	case d < time.Millisecond:
		return fmt.Sprintf("%.1f µs", float64(ns)/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(ns)/1e6)
	}
	return fmt.Sprintf("%.3f s", d.Seconds())
}

func writeRun(w io.Writer, rep *runReport) {
	fmt.Fprintf(w, "%s", rep.Program)
	if rep.Description != "" {
		fmt.Fprintf(w, ": %s", rep.Description)
	}
	fmt.Fprintln(w)
	if len(rep.Vars) > 0 {
		parts := make([]string, len(rep.Vars))
		for i, v := range rep.Vars {
			parts[i] = v.Name + "=" + v.Value
		}
		fmt.Fprintf(w, "  vars      %s\n", strings.Join(parts, " "))
	}
	writeSkips(w, rep.Skipped)
	dev := rep.Device
	kind := dev.Kind
	if dev.Emulated {
		kind += ", emulated"
	}
	fmt.Fprintf(w, "  device    %s (%s, %s)\n", dev.Name, dev.Hardware, kind)
	fmt.Fprintf(w, "  grid      %s\n", joinUints(rep.Grid, " x "))
	t := rep.Timing
	fmt.Fprintf(w, "  compile   %s\n", dur(t.CompileNS))
	fmt.Fprintf(w, "  upload    %s in %s\n", iecBytes(float64(t.UpBytes)), dur(t.UploadNS))
	fmt.Fprintf(w, "  launch    %s\n", dur(t.LaunchNS))
	fmt.Fprintf(w, "  download  %s in %s\n", iecBytes(float64(t.DownBytes)), dur(t.DownloadNS))
	if rp := rep.Repeat; rp != nil {
		fmt.Fprintf(w, "  repeat    %d timed runs: min %s, median %s, max %s\n", rp.Runs, dur(rp.MinNS), dur(rp.MedianNS), dur(rp.MaxNS))
	}
	if v := rep.Verify; v != nil {
		against := "the float64 host reference"
		if v.Against != "host" {
			against = v.Against
		}
		for _, s := range v.Skipped {
			fmt.Fprintf(w, "  skipped   %s: %s (reference device)\n", s.Device, oneLine(s.Reason))
		}
		for _, o := range v.Outputs {
			verdict := "ok"
			if !o.OK {
				verdict = fmt.Sprintf("MISMATCH: %d of %d elements out of tolerance; worst at [%d]: got %g, want %g",
					o.Mismatches, o.Elems, o.Worst, o.Got, o.Want)
			}
			fmt.Fprintf(w, "  verify    %s against %s: max abs err %.3g, max rel err %.3g (atol %.3g, rtol %.3g): %s\n",
				o.Name, against, o.MaxAbs, o.MaxRel, o.Atol, o.Rtol, verdict)
		}
	}
	for _, o := range rep.Written {
		fmt.Fprintf(w, "  wrote     %s to %s\n", o.Param, o.Path)
	}
}

// oneLine joins a multi-line reason (errors.Join) into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ; ")), " ")
}
