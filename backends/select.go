package backends

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/zyxtt/zyxtt/internal/zlog"
)

// Skip records a device (or a whole backend) that selection passed over, and
// why, in words a user can act on.
type Skip struct {
	Device string
	Reason string
}

func (s Skip) String() string { return s.Device + ": " + s.Reason }

// NoDeviceError is the error of a selection that found no device: it wraps
// ErrNoDevice and lists why each device was passed over.
type NoDeviceError struct {
	Selector string
	Skips    []Skip
}

func (e *NoDeviceError) Error() string {
	return fmt.Sprintf("%s for %q: %s", ErrNoDevice, e.Selector, joinSkips(e.Skips))
}

func (e *NoDeviceError) Unwrap() error { return ErrNoDevice }

// Selection is what Select chose: the device, the program compiled on it,
// the devices passed over before it with the reasons, and why it won.
type Selection struct {
	Device     *Device
	Executable *Executable
	Skips      []Skip
	// Reason says how the device was chosen: "measured: cblas 0.52 ms vs
	// vulkan:0 424 ms, c 4.3 ms", "static ranking, not measured yet", or
	// "named by the selector".
	Reason string
	// Measured are the measurements the choice was made on (from this
	// selection for "fastest", from the record for "auto"), best first.
	Measured []PerfEntry
}

// Workload runs a program on a device for measurement: "fastest" measures
// every candidate with it, and "auto" looks its size bucket up in the
// performance record. The bundle pipeline provides one (bundle.Run).
type Workload interface {
	// Bytes is the size of the program's buffers: it picks the size
	// bucket (SizeBucket).
	Bytes() int64
	// Measure uploads the inputs to dev, launches exe once to warm it up,
	// then `launches` timed launches, downloads the outputs, and reports
	// the times. It leaves nothing allocated on dev.
	Measure(ctx context.Context, dev *Device, exe *Executable, launches int) (Measurement, error)
}

// Measurement is what one Workload.Measure took.
type Measurement struct {
	Upload, Download time.Duration
	Launches         []time.Duration
}

// SelectOption adjusts Select.
type SelectOption func(*selectOpts)

type selectOpts struct {
	workload Workload
	record   *PerfRecord
	budget   time.Duration
	repeat   int
}

// DefaultMeasureBudget bounds how long "fastest" measures, over every
// candidate.
const DefaultMeasureBudget = 30 * time.Second

// WithWorkload gives the selection a workload: "fastest" measures with it
// and "auto" looks up the record at its size.
func WithWorkload(w Workload) SelectOption { return func(o *selectOpts) { o.workload = w } }

// WithRecord uses r as the performance record (default: DefaultPerfRecord;
// nil keeps none).
func WithRecord(r *PerfRecord) SelectOption { return func(o *selectOpts) { o.record = r } }

// WithBudget bounds the time "fastest" spends measuring.
func WithBudget(d time.Duration) SelectOption {
	return func(o *selectOpts) {
		if d > 0 {
			o.budget = d
		}
	}
}

// WithRepeat says how many launches the run will make: a one-shot run
// weighs the transfers as much as the launch, a run of n launches weighs
// the launch n times.
func WithRepeat(n int) SelectOption { return func(o *selectOpts) { o.repeat = max(n, 1) } }

// rankClass orders devices when nothing has been measured. Software
// implementations of GPU APIs (PoCL's CPU device, llvmpipe/lavapipe) never
// outrank the native CPU backends on the same CPU, and emulators come last.
func rankClass(info *DeviceInfo) int {
	switch {
	case info.Kind == KindAccelerator && !info.Emulated:
		return 0 // a real accelerator card (Tenstorrent)
	case info.Emulated:
		return 4 // the Tensix emulator, the dummy device
	case info.Kind != KindCPU && !info.SoftwareImpl:
		return 1 // GPUs and accelerators
	case info.SoftwareImpl || !prepares(info, FormatC, FormatGEMM):
		// A CPU device that prepares only formats written for other
		// processors is a software implementation of their API.
		return 3
	}
	return 2 // the native CPU backends (c, cblas)
}

func prepares(info *DeviceInfo, formats ...Format) bool {
	for _, f := range info.Formats {
		for _, g := range formats {
			if f == g {
				return true
			}
		}
	}
	return false
}

// usesGEMM reports whether the device would run p's GEMM variant (a BLAS
// library) rather than a generic kernel.
func usesGEMM(p *Program, info *DeviceInfo) bool {
	if p == nil {
		return false
	}
	v := p.Variant(info.Formats...)
	return v != nil && v.Format == FormatGEMM
}

// StaticRank sorts devices for p by the static ranking used when nothing has
// been measured: real Tenstorrent cards; then GPUs and accelerators; then the
// native CPU backends; then software implementations of GPU APIs; then
// emulators. Within a class a device that runs p's GEMM variant through a
// BLAS library comes before one that runs a generic kernel, then the most
// Compute first.
func StaticRank(p *Program, devs []*Device) {
	sort.SliceStable(devs, func(i, j int) bool {
		ii, ij := devs[i].Info(), devs[j].Info()
		if ci, cj := rankClass(ii), rankClass(ij); ci != cj {
			return ci < cj
		}
		if gi, gj := usesGEMM(p, ii), usesGEMM(p, ij); gi != gj {
			return gi
		}
		return ii.Compute > ij.Compute
	})
}

// Candidates lists, in preference order, the devices that selector allows
// and that prepare one of p's formats, with the reason for each one left
// out. "auto", "fastest" (or "") allow every device, in the static ranking
// (StaticRank). Any other selector is as in Lookup. When no device is left
// the error is a *NoDeviceError.
func (r *Runtime) Candidates(ctx context.Context, p *Program, selector string) ([]*Device, []Skip, error) {
	var devs []*Device
	var skips []Skip
	if isAuto(selector) {
		for _, st := range r.Status(ctx) {
			if st.Err != nil {
				skips = append(skips, Skip{Device: st.Name, Reason: st.Err.Error()})
				continue
			}
			devs = append(devs, st.Devices...)
		}
		StaticRank(p, devs)
	} else {
		d, err := r.Lookup(ctx, selector)
		if err != nil {
			return nil, nil, err
		}
		devs = []*Device{d}
	}
	var out []*Device
	for _, d := range devs {
		if p != nil && !p.Accepts(d.Info().Formats) {
			skips = append(skips, Skip{Device: d.Name(), Reason: noVariantReason(d)})
			continue
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, skips, &NoDeviceError{Selector: selector, Skips: skips}
	}
	return out, skips, nil
}

func isAuto(selector string) bool {
	return selector == "" || selector == "auto" || selector == "fastest"
}

// Select compiles p on the device selector picks and says why each earlier
// device was passed over, and why it won:
//
//   - "auto" (or ""): with a workload whose size the performance record has
//     measurements for, the measured devices by their cost (transfers once,
//     the launch WithRepeat times), then the others in the static ranking;
//     without, the static ranking.
//   - "fastest": every candidate is compiled and measured with the
//     workload (a warm-up launch, then timed launches, and the transfers)
//     within the time budget; the measurements are recorded and the
//     cheapest device wins.
//   - anything else: the device Lookup finds.
//
// It falls back to the next device on ErrNoVariant or a compile failure.
// When no device compiles p the error is a *NoDeviceError, except for a
// selector naming one device that has a variant of p: its compile error
// is the error.
func (r *Runtime) Select(ctx context.Context, p *Program, selector string, opts ...SelectOption) (*Selection, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	o := selectOpts{budget: DefaultMeasureBudget, repeat: 1, record: DefaultPerfRecord()}
	for _, f := range append(r.selectDefaults(), opts...) {
		f(&o)
	}
	devs, skips, err := r.Candidates(ctx, p, selector)
	if err != nil {
		return nil, err
	}
	if selector == "fastest" {
		return r.fastest(ctx, p, devs, skips, o)
	}
	reason := "named by the selector"
	var measured []PerfEntry
	if isAuto(selector) {
		devs, measured, reason = byRecord(p, devs, o)
	}
	for _, d := range devs {
		exe, err := d.Compile(ctx, p)
		if err == nil {
			zlog.Debug(zlog.Sched, "device chosen", "device", d.Name(), "why", reason)
			return &Selection{Device: d, Executable: exe, Skips: skips, Reason: reason, Measured: measured}, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !isAuto(selector) && len(devs) == 1 && !errors.Is(err, ErrNoVariant) {
			// The one device the selector names did not compile the
			// program: that is the program's error (a compile error
			// with the compiler's file:line), not a want of devices.
			return nil, err
		}
		skips = append(skips, Skip{Device: d.Name(), Reason: err.Error()})
		if !errors.Is(err, ErrNoVariant) {
			zlog.Debug(zlog.Sched, "compile failed, trying the next device", "device", d.Name(), "err", err)
		}
		reason = "the devices before it failed to compile the program"
	}
	return nil, &NoDeviceError{Selector: selector, Skips: skips}
}

// byRecord reorders the statically ranked devices by the record: measured
// devices by cost first, then the others in their order.
func byRecord(p *Program, devs []*Device, o selectOpts) ([]*Device, []PerfEntry, string) {
	if o.workload == nil || o.record == nil {
		return devs, nil, "static ranking, not measured yet"
	}
	prog, bucket := ProgramIdentity(p), SizeBucket(o.workload.Bytes())
	var measured []PerfEntry
	var rest []*Device
	byDevice := map[string]*Device{}
	for _, d := range devs {
		if e, ok := o.record.Lookup(prog, DeviceIdentity(d), bucket); ok {
			e.DeviceName = d.Name()
			measured = append(measured, e)
			byDevice[d.Name()] = d
			continue
		}
		rest = append(rest, d)
	}
	if len(measured) == 0 {
		return devs, nil, "static ranking, not measured yet"
	}
	sort.SliceStable(measured, func(i, j int) bool { return measured[i].Cost(o.repeat) < measured[j].Cost(o.repeat) })
	out := make([]*Device, 0, len(devs))
	for _, e := range measured {
		out = append(out, byDevice[e.DeviceName])
	}
	return append(out, rest...), measured, "measured: " + describeMeasured(measured, o.repeat)
}

// describeMeasured is "cblas 0.52 ms vs vulkan:0 424 ms, c 4.3 ms".
func describeMeasured(m []PerfEntry, repeat int) string {
	parts := make([]string, len(m))
	for i, e := range m {
		parts[i] = e.DeviceName + " " + shortDuration(e.Cost(repeat))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return parts[0] + " vs " + strings.Join(parts[1:], ", ")
}

func shortDuration(d time.Duration) string {
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%d ns", d.Nanoseconds())
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", float64(d.Nanoseconds())/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", float64(d.Nanoseconds())/1e6)
	}
	return fmt.Sprintf("%.3g s", d.Seconds())
}

// measureLaunches is how many timed launches "fastest" makes per device.
const measureLaunches = 5

// fastest compiles and measures every candidate within the budget, records
// what it measured and picks the cheapest; the others' executables are
// released.
func (r *Runtime) fastest(ctx context.Context, p *Program, devs []*Device, skips []Skip, o selectOpts) (*Selection, error) {
	if o.workload == nil {
		return nil, fmt.Errorf("%w: selector fastest needs a workload to measure (backends.WithWorkload; zyx-tt run gives one)", ErrInvalidArgument)
	}
	start := time.Now()
	prog, bucket := ProgramIdentity(p), SizeBucket(o.workload.Bytes())
	type candidate struct {
		dev   *Device
		exe   *Executable
		entry PerfEntry
	}
	var got []candidate
	defer func() {
		for _, c := range got {
			if c.exe != nil {
				_ = c.exe.Release()
			}
		}
	}()
	for _, d := range devs {
		if spent := time.Since(start); spent > o.budget {
			skips = append(skips, Skip{Device: d.Name(), Reason: fmt.Sprintf("not measured: the %s budget was spent (%s)", o.budget, shortDuration(spent))})
			continue
		}
		exe, err := d.Compile(ctx, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			skips = append(skips, Skip{Device: d.Name(), Reason: err.Error()})
			continue
		}
		launches := measureLaunches
		m, err := o.workload.Measure(ctx, d, exe, launches)
		if err != nil {
			_ = exe.Release()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			skips = append(skips, Skip{Device: d.Name(), Reason: "measurement failed: " + err.Error()})
			continue
		}
		e := PerfEntry{Program: prog, Name: p.Name, Device: DeviceIdentity(d), DeviceName: d.Name(), Bucket: bucket,
			Launch: median(m.Launches), Upload: m.Upload, Download: m.Download, Samples: len(m.Launches), MeasuredAt: time.Now().UTC()}
		got = append(got, candidate{dev: d, exe: exe, entry: e})
	}
	if len(got) == 0 {
		return nil, &NoDeviceError{Selector: "fastest", Skips: skips}
	}
	sort.SliceStable(got, func(i, j int) bool { return got[i].entry.Cost(o.repeat) < got[j].entry.Cost(o.repeat) })
	entries := make([]PerfEntry, len(got))
	for i, c := range got {
		entries[i] = c.entry
	}
	if o.record != nil {
		if err := o.record.Record(entries...); err != nil {
			zlog.Debug(zlog.Sched, "performance record not written", "err", err)
		}
	}
	best := got[0]
	got[0].exe = nil // kept: the caller releases it
	return &Selection{Device: best.dev, Executable: best.exe, Skips: skips, Measured: entries,
		Reason: "measured: " + describeMeasured(entries, o.repeat)}, nil
}

func median(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ts...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// CompileOn compiles p on the device selector picks (see Select).
func (r *Runtime) CompileOn(ctx context.Context, p *Program, selector string, opts ...SelectOption) (*Device, *Executable, error) {
	s, err := r.Select(ctx, p, selector, opts...)
	if err != nil {
		return nil, nil, err
	}
	return s.Device, s.Executable, nil
}

// Candidates is Runtime.Candidates on the default Runtime.
func Candidates(ctx context.Context, p *Program, selector string) ([]*Device, []Skip, error) {
	rt, err := Default()
	if err != nil {
		return nil, nil, err
	}
	return rt.Candidates(ctx, p, selector)
}

// Select is Runtime.Select on the default Runtime.
func Select(ctx context.Context, p *Program, selector string, opts ...SelectOption) (*Selection, error) {
	rt, err := Default()
	if err != nil {
		return nil, err
	}
	return rt.Select(ctx, p, selector, opts...)
}

// CompileOn is Runtime.CompileOn on the default Runtime.
func CompileOn(ctx context.Context, p *Program, selector string, opts ...SelectOption) (*Device, *Executable, error) {
	rt, err := Default()
	if err != nil {
		return nil, nil, err
	}
	return rt.CompileOn(ctx, p, selector, opts...)
}

// noVariantReason says that a program has no variant a device prepares
// (DeviceInfo.Formats lists what it does).
func noVariantReason(d *Device) string { return "no variant for " + d.Backend() }

func joinSkips(s []Skip) string {
	if len(s) == 0 {
		return "no devices"
	}
	parts := make([]string, len(s))
	for i, k := range s {
		parts[i] = k.String()
	}
	return strings.Join(parts, "; ")
}
