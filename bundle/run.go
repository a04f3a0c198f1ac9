package bundle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zyxtt/zyxtt/backends"
)

// Progress shows how long work is going; zyx-tt draws it as bars on a
// terminal. Every method of a nil Progress is a no-op (see Bar).
type Progress interface {
	// Spinner is a task of unknown length (compiling).
	Spinner(name string) Bar
	// Bytes is a transfer of total bytes.
	Bytes(name string, total int64) Bar
	// Count is total repetitions.
	Count(name string, total int64) Bar
}

// Bar is one progress indicator.
type Bar interface {
	Set(n int64)
	Add(n int64)
	Done()
}

type noBar struct{}

func (noBar) Set(int64) {}
func (noBar) Add(int64) {}
func (noBar) Done()     {}

// Options configure Prepare and Run.
type Options struct {
	// Set overrides var defaults: var name → value text, as --set does.
	Set map[string]string
	// Inputs gives a buffer param its data: param name → generator spec
	// (random, random:LO:HI, const:V, iota) or a .npy/.bin file. A buffer
	// without one gets the bundle's input, else random for read-only
	// params and zeros for written ones.
	Inputs map[string]string
	// Progress shows the work; nil shows nothing.
	Progress Progress

	// What RunOnce does after Prepare.

	// Device selects the device ("" or "auto": the runtime's choice).
	Device string
	// Repeat is how many timed launches follow the first.
	Repeat int
	// Queue also times Repeat launches on the wall clock, each waited for
	// (synchronous) and all submitted before one wait (queued).
	Queue bool
	// Verify checks the outputs: against the bundle's float64 host
	// reference, or against a run on VerifyOn when that names a device
	// (without a reference, on c).
	Verify   bool
	VerifyOn string
	// Select adjusts the device selection (backends.WithBudget for
	// "fastest", backends.WithRecord); RunOnce adds the run's workload and
	// WithRepeat(Repeat + 1).
	Select []backends.SelectOption
}

// Run is one run of a bundle: its var values, its inputs in the host pool,
// and every buffer it has allocated, which Close releases. Its methods are
// the steps of `zyx-tt run`: Prepare makes it, Compile picks a device,
// Execute uploads, launches, times and downloads, Verify checks.
type Run struct {
	B      *Bundle
	Vals   Values
	Shapes [][]uint64
	// Report is filled in as the steps run.
	Report *Report

	// Queue makes Execute time its repeated launches queued as well
	// (Options.Queue).
	Queue bool

	rt     *backends.Runtime
	host   *backends.Pool
	prog   Progress
	inputs map[int]backends.BufferID // every buffer param's initial data, in the host pool
	owned  []ownedBuf
}

type ownedBuf struct {
	pool *backends.Pool
	id   backends.BufferID
}

// Prepare binds the vars and fills a host-pool buffer with every buffer
// param's initial data. Errors in opts (an unknown var, a bad value, an
// input for no buffer) are *UsageError.
func (b *Bundle) Prepare(ctx context.Context, rt *backends.Runtime, opts Options) (*Run, error) {
	vals, err := b.VarValues(opts.Set)
	if err != nil {
		return nil, &UsageError{Flag: "set", Err: err}
	}
	for name := range opts.Inputs {
		if i, ok := b.ParamIndex(name); !ok || !b.Params[i].Kind.IsBuffer() {
			return nil, &UsageError{Flag: "in", Err: fmt.Errorf("bundle %s has no buffer param %q (%s)", b.Name, name, b.BufferNames())}
		}
	}
	host, err := rt.HostPool()
	if err != nil {
		return nil, err
	}
	r := &Run{B: b, Vals: vals, rt: rt, host: host, prog: opts.Progress, inputs: map[int]backends.BufferID{}}
	r.Report = &Report{SchemaVersion: ReportSchemaVersion, Bundle: b.Dir, Program: b.Name, Description: b.Description, Skipped: []SkipReport{}, Written: []WrittenReport{}}
	for i, v := range b.Vars {
		r.Report.Vars = append(r.Report.Vars, VarReport{Name: v.Name, DType: v.DType.String(), Value: ConstText(vals[i])})
	}
	if err := r.prepareInputs(ctx, opts.Inputs); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// UsageError is a request the bundle cannot act on (a name it does not
// define, a malformed value): the caller's mistake, exit status 2 in
// zyx-tt.
type UsageError struct {
	Flag string // the option at fault: "set", "in", "out"
	Err  error
}

func (e *UsageError) Error() string { return "--" + e.Flag + ": " + e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// BufferNames lists the buffer params, for messages.
func (b *Bundle) BufferNames() string {
	var names []string
	for _, p := range b.Params {
		if p.Kind.IsBuffer() {
			names = append(names, p.Name)
		}
	}
	return "buffers: " + strings.Join(names, ", ")
}

// ConstText prints a var's value.
func ConstText(c backends.Constant) string {
	if c.DType.IsFloat() {
		return fmt.Sprintf("%g", c.Float())
	}
	if v, err := c.Int(); err == nil {
		return fmt.Sprint(v)
	}
	return fmt.Sprint(c.Bits)
}

func (r *Run) spinner(name string) Bar {
	if r.prog == nil {
		return noBar{}
	}
	return r.prog.Spinner(name)
}

func (r *Run) bytesBar(name string, total int64, show bool) Bar {
	if r.prog == nil || !show {
		return noBar{}
	}
	return r.prog.Bytes(name, total)
}

func (r *Run) countBar(name string, total int64, show bool) Bar {
	if r.prog == nil || !show {
		return noBar{}
	}
	return r.prog.Count(name, total)
}

// Close releases every buffer the run allocated.
func (r *Run) Close() { r.releaseFrom(0) }

func (r *Run) alloc(ctx context.Context, pool *backends.Pool, n int64) (backends.BufferID, error) {
	id, err := pool.Alloc(ctx, n)
	if err != nil {
		return 0, err
	}
	r.owned = append(r.owned, ownedBuf{pool, id})
	return id, nil
}

// allocParam allocates buffer param i's device buffer for n bytes of host
// data, as the program declares it (placement, layout, page size, storage
// format: Executable.AllocParam).
func (r *Run) allocParam(ctx context.Context, pool *backends.Pool, exe *backends.Executable, i int, n int64) (backends.BufferID, error) {
	id, err := exe.AllocParam(ctx, i, n)
	if err != nil {
		return 0, err
	}
	r.owned = append(r.owned, ownedBuf{pool, id})
	return id, nil
}

func (r *Run) prepareInputs(ctx context.Context, inputs map[string]string) error {
	b := r.B
	shapes, err := b.Shapes(r.Vals)
	if err != nil {
		return err
	}
	if err := b.Ref.Check(b, r.Vals, shapes); err != nil {
		return err
	}
	r.Shapes = shapes
	for i, p := range b.Params {
		pr := ParamReport{Name: p.Name, Kind: p.Kind.String(), DType: p.DType.String()}
		if !p.Kind.IsBuffer() {
			vi, _ := b.VarIndex(p.Name)
			pr.Value = ConstText(r.Vals[vi])
			r.Report.Params = append(r.Report.Params, pr)
			continue
		}
		n := Elems(shapes[i]) * int64(p.DType.Size())
		pr.Shape, pr.Bytes = shapes[i], n
		if n == 0 {
			return fmt.Errorf("%w: param %s has no elements (shape %v = %v)", backends.ErrInvalidArgument, p.Name, p.ShapeSrc, shapes[i])
		}
		id, err := r.alloc(ctx, r.host, n)
		if err != nil {
			return fmt.Errorf("param %s: %w", p.Name, err)
		}
		r.inputs[i] = id
		mem, err := r.host.Bytes(id)
		if err != nil {
			return err
		}
		spec, given := inputs[p.Name]
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
		case IsFileSpec(spec):
			if err := ReadInput(spec, p.DType, shapes[i], mem); err != nil {
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			pr.Input = spec
		default:
			g, err := ParseGen(spec)
			if err != nil {
				if given {
					return &UsageError{Flag: "in", Err: fmt.Errorf("%s=%s: %w", p.Name, spec, err)}
				}
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			if err := Fill(mem, p.DType, g, uint64(i)); err != nil {
				return fmt.Errorf("input %s: %w", p.Name, err)
			}
			pr.Input = spec
		}
		r.Report.Params = append(r.Report.Params, pr)
	}
	return nil
}

// Input is buffer param i's initial data, in the host pool.
func (r *Run) Input(i int) ([]byte, error) { return r.host.Bytes(r.inputs[i]) }

// Compile builds the bundle's program and compiles it on the device the
// selector picks ("" or "auto": the performance record at this run's size,
// else the static ranking; "fastest": measure every candidate with this
// run's inputs), recording the device, why it was chosen and every device
// passed over in the Report.
func (r *Run) Compile(ctx context.Context, selector string, opts ...backends.SelectOption) (*backends.Selection, *backends.Program, error) {
	if selector == "" {
		selector = "auto"
	}
	p, dropped, err := r.B.PartialProgram(r.Vals)
	if err != nil {
		return nil, nil, err
	}
	// A variant that cannot be built at these var values is passed over
	// with its error; the other backends still run.
	for _, d := range dropped {
		r.Report.Skipped = append(r.Report.Skipped, SkipReport{Device: string(d.Format) + " variant", Reason: d.Err.Error()})
	}
	bar := r.spinner("compile")
	start := time.Now()
	sel, err := r.rt.Select(ctx, p, selector, append([]backends.SelectOption{backends.WithWorkload(r.Workload())}, opts...)...)
	bar.Done()
	var nd *backends.NoDeviceError
	switch {
	case err == nil:
		r.Report.Skipped = append(r.Report.Skipped, skipReports(sel.Skips)...)
	case errors.As(err, &nd):
		r.Report.Skipped = append(r.Report.Skipped, skipReports(nd.Skips)...)
		errs := []error{err}
		for _, d := range dropped {
			errs = append(errs, d)
		}
		return nil, nil, errors.Join(errs...)
	default:
		return nil, nil, err
	}
	r.Report.Timing.CompileNS = time.Since(start).Nanoseconds()
	d := sel.Device
	info := d.Info()
	r.Report.Device = DeviceReport{Name: d.Name(), Backend: d.Backend(), Hardware: info.Name, Kind: string(info.Kind), Emulated: info.Emulated}
	r.Report.Selection = &SelectionReport{Reason: sel.Reason}
	for _, e := range sel.Measured {
		r.Report.Selection.Measured = append(r.Report.Selection.Measured, MeasuredReport{
			Device: e.DeviceName, LaunchNS: e.Launch.Nanoseconds(), UploadNS: e.Upload.Nanoseconds(), DownloadNS: e.Download.Nanoseconds(),
		})
	}
	return sel, p, nil
}

func skipReports(skips []backends.Skip) []SkipReport {
	out := make([]SkipReport, len(skips))
	for i, s := range skips {
		out[i] = SkipReport{s.Device, s.Reason}
	}
	return out
}

// Execution is one device's run of the program: its output buffers, back in
// the host pool, and its timings.
type Execution struct {
	Device                   *backends.Device
	Grid                     []uint64
	Outputs                  map[int]backends.BufferID
	Upload, Launch, Download time.Duration
	UpBytes, DownBytes       int64
	Timed                    []time.Duration
	// Queue is set when the run timed queued launches (Run.Queue).
	Queue *QueueTiming
	// Warnings: what the device noticed during the launches and did not
	// stop for (the emulator's watcher).
	Warnings []string
}

// QueueTiming is the wall time of Launches launches made one after another,
// each waited for, against the same launches submitted before one wait.
type QueueTiming struct {
	Launches     int
	Sync, Queued time.Duration
}

// Execute copies every buffer's initial data to dev, launches exe, repeats
// it timed (LaunchTimed) when asked, and copies the written params back into
// new host buffers, leaving the inputs untouched for a verification run.
// show draws progress bars.
func (r *Run) Execute(ctx context.Context, dev *backends.Device, exe *backends.Executable, p *backends.Program, repeat int, show bool) (*Execution, error) {
	x, err := r.newExecution(dev, exe, show)
	if err != nil {
		return nil, err
	}
	if err := x.upload(ctx); err != nil {
		return nil, err
	}
	if x.res.Grid, err = exe.Grid(x.args); err != nil {
		return nil, err
	}
	if err := x.outputBuffers(ctx); err != nil {
		return nil, err
	}
	start := time.Now()
	if err := exe.Launch(ctx, x.args); err != nil {
		return nil, fmt.Errorf("launch: %w", err)
	}
	x.res.Launch = time.Since(start)
	if err := x.repeat(ctx, repeat); err != nil {
		return nil, err
	}
	if err := x.download(ctx); err != nil {
		return nil, err
	}
	x.res.Warnings = exe.Warnings()
	return x.res, nil
}

// execution is one Execute: the launch args, every buffer param's bytes,
// the params the program writes, and what is copied each way.
type execution struct {
	r        *Run
	pool     *backends.Pool
	exe      *backends.Executable
	show     bool
	res      *Execution
	args     []backends.LaunchArg
	sizes    []int64 // by param; 0 for a Variable
	outs     []int
	upBytes  int64
	outBytes int64
	// onHost: the device computes on the run's host pool (c, cblas) and
	// reads the inputs where they are: only the params it writes get a
	// copy of their own (the inputs stay untouched for a verification
	// run), and those copies are the outputs, with nothing to download.
	onHost bool
}

func (r *Run) newExecution(dev *backends.Device, exe *backends.Executable, show bool) (*execution, error) {
	pool := dev.Pool()
	x := &execution{r: r, pool: pool, exe: exe, show: show, onHost: r.host == pool,
		res:   &Execution{Device: dev, Outputs: map[int]backends.BufferID{}},
		args:  make([]backends.LaunchArg, len(r.B.Params)),
		sizes: make([]int64, len(r.B.Params)),
		outs:  r.writtenParams(),
	}
	for i, prm := range r.B.Params {
		if prm.Kind.IsBuffer() {
			n, err := r.host.Size(r.inputs[i])
			if err != nil {
				return nil, err
			}
			x.sizes[i] = n
			if !x.onHost {
				x.upBytes += n
			}
		}
	}
	for _, i := range x.outs {
		if x.onHost {
			x.upBytes += x.sizes[i]
		} else {
			x.outBytes += x.sizes[i]
		}
	}
	return x, nil
}

// upload makes the launch args: a Variable's value, and for a buffer
// param a device buffer holding its initial data.
func (x *execution) upload(ctx context.Context) error {
	r := x.r
	up := r.bytesBar("upload", x.upBytes, x.show)
	start := time.Now()
	var done int64
	for i, prm := range r.B.Params {
		if !prm.Kind.IsBuffer() {
			vi, _ := r.B.VarIndex(prm.Name)
			x.args[i] = backends.VarArg(r.Vals[vi])
			continue
		}
		if x.onHost && prm.Kind == backends.Global {
			x.args[i] = backends.BufArg(r.inputs[i])
			continue
		}
		n := x.sizes[i]
		id, err := r.allocParam(ctx, x.pool, x.exe, i, n)
		if err != nil {
			return fmt.Errorf("param %s: %w", prm.Name, err)
		}
		base := done
		err = r.rt.Copy(ctx, x.pool, id, 0, r.host, r.inputs[i], 0, n,
			backends.WithProgress(func(d, _ int64) { up.Set(base + d) }))
		if err != nil {
			return fmt.Errorf("upload %s: %w", prm.Name, err)
		}
		done += n
		x.args[i] = backends.BufArg(id)
	}
	up.Done()
	x.res.Upload, x.res.UpBytes = time.Since(start), x.upBytes
	return nil
}

// outputBuffers makes the host buffers of the outputs, their pages
// touched, before anything is timed, so the download figure is the copy
// alone and not the first-touch faults of fresh memory.
func (x *execution) outputBuffers(ctx context.Context) error {
	for _, i := range x.outs {
		if x.onHost {
			x.res.Outputs[i] = x.args[i].Buffer
			continue
		}
		id, err := x.r.alloc(ctx, x.r.host, x.sizes[i])
		if err != nil {
			return err
		}
		mem, err := x.r.host.Bytes(id)
		if err != nil {
			return err
		}
		clear(mem)
		x.res.Outputs[i] = id
	}
	return nil
}

// repeat times n more launches (LaunchTimed), then, when the run asks,
// the same launches synchronous against queued.
func (x *execution) repeat(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	bar := x.r.countBar("repeat", int64(n), x.show)
	for range n {
		dt, err := x.exe.LaunchTimed(ctx, x.args)
		if err != nil {
			return fmt.Errorf("timed launch: %w", err)
		}
		x.res.Timed = append(x.res.Timed, dt)
		bar.Add(1)
	}
	bar.Done()
	if x.r.Queue {
		q, err := timeQueued(ctx, x.exe, x.args, n)
		if err != nil {
			return err
		}
		x.res.Queue = q
	}
	return nil
}

// download copies the written params into the output host buffers.
func (x *execution) download(ctx context.Context) error {
	r := x.r
	down := r.bytesBar("download", x.outBytes, x.show)
	start := time.Now()
	var done int64
	for _, i := range x.outs {
		if x.onHost {
			continue
		}
		n := x.sizes[i]
		base := done
		err := r.rt.Copy(ctx, r.host, x.res.Outputs[i], 0, x.pool, x.args[i].Buffer, 0, n,
			backends.WithProgress(func(d, _ int64) { down.Set(base + d) }))
		if err != nil {
			return fmt.Errorf("download %s: %w", r.B.Params[i].Name, err)
		}
		done += n
	}
	down.Done()
	x.res.Download, x.res.DownBytes = time.Since(start), x.outBytes
	return nil
}

// timeQueued times n launches on the wall clock, each submitted and waited
// for, against n submitted back to back with one wait for all.
func timeQueued(ctx context.Context, exe *backends.Executable, args []backends.LaunchArg, n int) (*QueueTiming, error) {
	q := &QueueTiming{Launches: n}
	start := time.Now()
	for range n {
		if err := exe.Launch(ctx, args); err != nil {
			return nil, fmt.Errorf("synchronous launch: %w", err)
		}
	}
	q.Sync = time.Since(start)
	events := make([]backends.Event, 0, n)
	start = time.Now()
	for range n {
		ev, err := exe.Submit(ctx, args)
		if err != nil {
			return nil, fmt.Errorf("queued launch: %w", err)
		}
		events = append(events, ev)
	}
	err := backends.WaitAll(ctx, events...)
	q.Queued = time.Since(start)
	if err != nil {
		return nil, fmt.Errorf("queued launch: %w", err)
	}
	return q, nil
}

// Record puts an execution's grid and timings into the Report.
func (r *Run) Record(res *Execution) {
	r.Report.Grid = res.Grid
	t := &r.Report.Timing
	t.UploadNS, t.LaunchNS, t.DownloadNS = res.Upload.Nanoseconds(), res.Launch.Nanoseconds(), res.Download.Nanoseconds()
	t.UpBytes, t.DownBytes = res.UpBytes, res.DownBytes
	if len(res.Timed) > 0 {
		r.Report.Repeat = Summarize(res.Timed)
	}
	if q := res.Queue; q != nil {
		r.Report.Queue = &QueueReport{Launches: q.Launches, SyncNS: q.Sync.Nanoseconds(), QueuedNS: q.Queued.Nanoseconds()}
	}
	r.Report.Warnings = res.Warnings
}

// writtenParams are the params read back: every global_mut param (so an
// output file can name any written buffer).
func (r *Run) writtenParams() []int {
	var out []int
	for i, p := range r.B.Params {
		if p.Kind == backends.GlobalMut {
			out = append(out, i)
		}
	}
	return out
}

// Output is param i's data after the execution: read back for written
// params, the initial data for read-only ones.
func (r *Run) Output(res *Execution, i int) ([]byte, error) {
	if id, ok := res.Outputs[i]; ok {
		return r.host.Bytes(id)
	}
	return r.host.Bytes(r.inputs[i])
}

// Summarize is the min, median and max of timed launches.
func Summarize(ts []time.Duration) *RepeatReport {
	s := slices.Clone(ts)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &RepeatReport{Runs: len(s), MinNS: s[0].Nanoseconds(), MedianNS: med.Nanoseconds(), MaxNS: s[len(s)-1].Nanoseconds()}
}
