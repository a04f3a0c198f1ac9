package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zyxtt/zyxtt/tt"

	"github.com/stretchr/testify/require"
	"github.com/zyxtt/zyxtt/backends/driver"
)

func cpuDev(name, backend string, compute uint64, formats []Format, software bool) *fakeDevice {
	return &fakeDevice{name: name, backend: backend, info: DeviceInfo{Kind: KindCPU, Compute: compute, Formats: formats, SoftwareImpl: software}}
}

func twoVariants(formats ...Format) *Program {
	p := &Program{Name: "mm"}
	for _, f := range formats {
		var code any = &SourceVariant{Source: "x", Entry: "k"}
		switch f {
		case FormatGEMM:
			code = &GEMMVariant{}
		case FormatSPIRV:
			code = &SPIRVVariant{}
		}
		p.Variants = append(p.Variants, Variant{Format: f, Code: code})
	}
	return p
}

// Software implementations of GPU APIs never outrank the native CPU
// backends, whatever Compute they claim; a program with a GEMM variant
// prefers a BLAS device of the same kind.
func TestStaticRanking(t *testing.T) {
	c := cpuDev("c", "c", 78e9, []Format{FormatC}, false)
	cblas := cpuDev("cblas", "cblas", 78e9, []Format{FormatGEMM}, false)
	lavapipe := cpuDev("vulkan:0", "vulkan", 100e9, []Format{FormatSPIRV}, true)
	pocl := cpuDev("opencl:0", "opencl", 200e9, []Format{FormatOpenCL}, false) // not flagged: still a CPU device of GPU formats
	emu := &fakeDevice{name: "tt-emu:0", backend: "tt", info: DeviceInfo{Kind: KindCPU, Emulated: true, Compute: 1e18, Formats: []Format{tt.VariantFormat}}}
	gpuKernel := &fakeDevice{name: "opencl:1", backend: "opencl", info: DeviceInfo{Kind: KindGPU, Compute: 90e12, Formats: []Format{FormatOpenCL}}}
	cuda := &fakeDevice{name: "cuda:0", backend: "cuda", info: DeviceInfo{Kind: KindGPU, Compute: 60e12, Formats: []Format{FormatGEMM, FormatCUDA}}}

	devs := wrapAll(lavapipe, pocl, emu, c, cblas)
	StaticRank(twoVariants(FormatC, FormatSPIRV, FormatOpenCL, tt.VariantFormat), devs)
	require.Equal(t, []string{"c", "cblas", "opencl:0", "vulkan:0", "tt-emu:0"}, names(devs),
		"native CPU backends first, then software implementations of GPU APIs, the emulator last")

	devs = wrapAll(c, lavapipe, cblas)
	StaticRank(twoVariants(FormatC, FormatGEMM, FormatSPIRV), devs)
	require.Equal(t, []string{"cblas", "c", "vulkan:0"}, names(devs), "a GEMM program prefers the BLAS device")

	devs = wrapAll(gpuKernel, cuda, c)
	StaticRank(twoVariants(FormatCUDA, FormatGEMM, FormatOpenCL, FormatC), devs)
	require.Equal(t, []string{"cuda:0", "opencl:1", "c"}, names(devs), "cuBLAS before a generic GPU kernel, GPUs before the CPU")
}

// fakeWorkload measures each device by a fixed launch time.
type fakeWorkload struct {
	bytes    int64
	launch   map[string]time.Duration
	transfer time.Duration
	measured atomic.Int32
	sleep    time.Duration
}

func (w *fakeWorkload) Bytes() int64 { return w.bytes }
func (w *fakeWorkload) Measure(_ context.Context, d *Device, _ *Executable, launches int) (Measurement, error) {
	w.measured.Add(1)
	time.Sleep(w.sleep)
	m := Measurement{Upload: w.transfer, Download: w.transfer}
	for range launches {
		m.Launches = append(m.Launches, w.launch[d.Name()])
	}
	return m, nil
}

func TestFastestMeasuresRecordsAndAutoUsesTheRecord(t *testing.T) {
	c := cpuDev("c", "c", 78e9, []Format{FormatC}, false)
	lavapipe := cpuDev("vulkan:0", "vulkan", 100e9, []Format{FormatSPIRV}, true)
	gpu := &fakeDevice{name: "gpu:0", backend: "gpu", info: DeviceInfo{Kind: KindGPU, Compute: 1e14, Formats: []Format{"gpu"}}}
	withRegistry(t, map[string]opener{"c": &staticDriver{devs: []driver.Device{c}}, "vulkan": &staticDriver{devs: []driver.Device{lavapipe}}, "gpu": &staticDriver{devs: []driver.Device{gpu}}})
	rec := &PerfRecord{Path: filepath.Join(t.TempDir(), "perf.json")}
	p := twoVariants(FormatC, FormatSPIRV)
	w := &fakeWorkload{bytes: 3 << 20, launch: map[string]time.Duration{"c": 4300 * time.Microsecond, "vulkan:0": 424 * time.Millisecond}}

	sel, err := Select(bg, p, "auto", WithWorkload(w), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "c", sel.Device.Name(), "static ranking")
	require.Equal(t, "static ranking, not measured yet", sel.Reason)

	// Make the software device look faster than it is, then measure.
	w.launch["c"], w.launch["vulkan:0"] = 9*time.Millisecond, 2*time.Millisecond
	sel, err = Select(bg, p, "fastest", WithWorkload(w), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "vulkan:0", sel.Device.Name(), "fastest trusts the measurement")
	require.Equal(t, "measured: vulkan:0 2 ms vs c 9 ms", sel.Reason)
	require.EqualValues(t, 2, w.measured.Load(), "both candidates measured; the gpu has no variant")
	require.Len(t, rec.Entries(), 2)

	// auto now follows the record for this program and size bucket…
	sel, err = Select(bg, p, "auto", WithWorkload(w), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "vulkan:0", sel.Device.Name())
	require.Contains(t, sel.Reason, "measured: vulkan:0 2 ms vs c 9 ms")
	// …but not at another size, and not for a changed program.
	sel, err = Select(bg, p, "auto", WithWorkload(&fakeWorkload{bytes: 1 << 30}), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "c", sel.Device.Name(), "another size bucket is not measured")
	p2 := twoVariants(FormatC, FormatSPIRV)
	p2.Variants[0].Code.(*SourceVariant).Source = "changed"
	sel, err = Select(bg, p2, "auto", WithWorkload(w), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "c", sel.Device.Name(), "a changed source invalidates the record")

	// Transfers count: with 100 ms to move the buffers on the software
	// device a one-shot run prefers c, a run of 1000 launches does not.
	entries := rec.Entries()
	for i := range entries {
		if entries[i].DeviceName == "vulkan:0" {
			entries[i].Upload = 100 * time.Millisecond
		}
	}
	require.NoError(t, rec.Record(entries...))
	sel, err = Select(bg, p, "auto", WithWorkload(w), WithRecord(rec))
	require.NoError(t, err)
	require.Equal(t, "c", sel.Device.Name(), "one launch: the transfers decide")
	sel, err = Select(bg, p, "auto", WithWorkload(w), WithRecord(rec), WithRepeat(1000))
	require.NoError(t, err)
	require.Equal(t, "vulkan:0", sel.Device.Name(), "a thousand launches: the launch time decides")

	_, err = Select(bg, p, "fastest", WithRecord(rec))
	require.ErrorIs(t, err, ErrInvalidArgument, "fastest needs a workload")
}

func TestDeviceIdentityFollowsTheDriver(t *testing.T) {
	a := &fakeDevice{name: "cuda:0", backend: "cuda", info: DeviceInfo{Name: "NVIDIA H200", Extra: map[string]string{"driver_version": "580.1"}}}
	b := &fakeDevice{name: "cuda:0", backend: "cuda", info: DeviceInfo{Name: "NVIDIA H200", Extra: map[string]string{"driver_version": "590.2"}}}
	c := &fakeDevice{name: "cuda:0", backend: "cuda", info: DeviceInfo{Name: "NVIDIA H100", Extra: map[string]string{"driver_version": "580.1"}}}
	require.NotEqual(t, DeviceIdentity(DeviceOf(a)), DeviceIdentity(DeviceOf(b)), "a new driver invalidates")
	require.NotEqual(t, DeviceIdentity(DeviceOf(a)), DeviceIdentity(DeviceOf(c)), "another device in the slot invalidates")
	require.Equal(t, DeviceIdentity(DeviceOf(a)), DeviceIdentity(DeviceOf(a)))
	require.Equal(t, 21, SizeBucket(3<<20))
	require.Equal(t, 20, SizeBucket(1<<20))
	require.Zero(t, SizeBucket(0))
}

func TestFastestKeepsToItsBudget(t *testing.T) {
	var devs []driver.Device
	for i := range 6 {
		devs = append(devs, cpuDev(fmt.Sprintf("c:%d", i), "c", 1, []Format{FormatC}, false))
	}
	withRegistry(t, map[string]opener{"c": &staticDriver{devs: devs}})
	w := &fakeWorkload{bytes: 1, launch: map[string]time.Duration{}, sleep: 60 * time.Millisecond}
	sel, err := Select(bg, twoVariants(FormatC), "fastest", WithWorkload(w), WithRecord(nil), WithBudget(100*time.Millisecond))
	require.NoError(t, err)
	require.Less(t, w.measured.Load(), int32(6), "the budget stopped the measuring")
	var over int
	for _, s := range sel.Skips {
		if strings.Contains(s.Reason, "budget was spent") {
			over++
		}
	}
	require.Equal(t, 6-int(w.measured.Load()), over, "every device left unmeasured says why")
}

func TestRecordDamageAndAtomicity(t *testing.T) {
	dir := t.TempDir()
	rec := &PerfRecord{Path: filepath.Join(dir, "perf.json")}
	require.Empty(t, rec.Entries(), "no file: no entries")
	require.NoError(t, os.WriteFile(rec.Path, []byte(`{"version": 1, "entries": [{"program": `), 0o600))
	require.Empty(t, rec.Entries(), "a damaged file is ignored")
	e := PerfEntry{Program: "p", Device: "d", Bucket: 3, Launch: time.Millisecond}
	require.NoError(t, rec.Record(e), "and replaced by the next write")
	require.Equal(t, []PerfEntry{e}, rec.Entries())
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, x := range ents {
		require.NotContains(t, x.Name(), ".tmp", "no temp file left")
	}
	// A write that cannot happen loses nothing.
	require.NoError(t, os.Chmod(dir, 0o500))
	if os.Geteuid() != 0 { // root writes anyway
		require.Error(t, rec.Record(PerfEntry{Program: "q", Device: "d"}))
	}
	require.NoError(t, os.Chmod(dir, 0o700))
	require.Equal(t, []PerfEntry{e}, rec.Entries(), "the record survived")
	var f perfFile
	data, err := os.ReadFile(rec.Path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &f))
	require.Equal(t, perfVersion, f.Version)
}

const perfHelperEnv = "ZYX_PERF_TEST_HELPER"

// Several processes recording at once keep every entry.
func TestRecordConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "perf.json")
	const procs, each = 4, 25
	var cmds []*exec.Cmd
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRecordHelperProcess$")
		cmd.Env = append(os.Environ(), perfHelperEnv+"="+path, "ZYX_PERF_TEST_ID="+strconv.Itoa(i), "ZYX_PERF_TEST_N="+strconv.Itoa(each))
		require.NoError(t, cmd.Start())
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		require.NoError(t, c.Wait())
	}
	got := (&PerfRecord{Path: path}).Entries()
	require.Len(t, got, procs*each, "no writer lost another's entries")
}

func TestRecordHelperProcess(t *testing.T) {
	path := os.Getenv(perfHelperEnv)
	if path == "" {
		t.Skip("helper process of TestRecordConcurrentWriters")
	}
	id, _ := strconv.Atoi(os.Getenv("ZYX_PERF_TEST_ID"))
	n, _ := strconv.Atoi(os.Getenv("ZYX_PERF_TEST_N"))
	rec := &PerfRecord{Path: path}
	for i := range n {
		require.NoError(t, rec.Record(PerfEntry{Program: fmt.Sprintf("p%d", id), Device: "d", Bucket: i}))
	}
}

// returnsWithin runs f and fails the test if it has not returned within a
// generous bound: the calls tested here must not block at all, and a hang
// is the failure, not a slow machine.
func returnsWithin[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(time.Minute):
		t.Fatalf("%s did not return: it blocked", what)
		panic("unreachable")
	}
}

// A record that is a FIFO, a link to /dev/zero, too large, or not the
// user's own is ignored with a warning, without blocking or reading it
// whole; writing replaces it with a regular file.
func TestRecordThatIsNotARegularFile(t *testing.T) {
	var logged strings.Builder
	SetLogger(slog.New(slog.NewTextHandler(&logged, nil)))
	t.Cleanup(func() { SetLogger(nil) })
	cases := []struct {
		name string
		make func(path string) error
		want string
	}{
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "not a regular file"},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "symbolic link"},
		{"oversized", func(p string) error {
			f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			defer f.Close()
			return f.Truncate(maxPerfRecord + 1) // sparse: costs no disk
		}, "more than the"},
		{"writable by others", func(p string) error {
			if err := os.WriteFile(p, []byte(`{"version": 1, "entries": []}`), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}, "writable by its group or by others"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logged.Reset()
			rec := &PerfRecord{Path: filepath.Join(t.TempDir(), "perf.json")}
			require.NoError(t, tc.make(rec.Path))
			got := returnsWithin(t, "Entries", rec.Entries)
			require.Empty(t, got)
			require.Contains(t, logged.String(), "level=WARN")
			require.Contains(t, logged.String(), tc.want)
			if tc.name == "fifo" || tc.name == "link to /dev/zero" {
				// Replacing it: the rename takes the name, whatever it was.
				e := PerfEntry{Program: "p", Device: "d"}
				require.NoError(t, returnsWithin(t, "Record", func() error { return rec.Record(e) }))
				st, err := os.Lstat(rec.Path)
				require.NoError(t, err)
				require.True(t, st.Mode().IsRegular())
				require.Equal(t, []PerfEntry{e}, rec.Entries())
			}
		})
	}
}

// A lock file that is a FIFO (or another's) is an error, not a hang.
func TestRecordLockThatIsNotARegularFile(t *testing.T) {
	rec := &PerfRecord{Path: filepath.Join(t.TempDir(), "perf.json")}
	require.NoError(t, syscall.Mkfifo(rec.Path+".lock", 0o600))
	err := returnsWithin(t, "Record", func() error { return rec.Record(PerfEntry{Program: "p"}) })
	require.ErrorContains(t, err, "not a regular file")
}

// The record is read once per process: later changes by others are not
// re-read on every lookup, and a Record updates what this process sees.
func TestRecordIsReadOnce(t *testing.T) {
	rec := &PerfRecord{Path: filepath.Join(t.TempDir(), "perf.json")}
	first := PerfEntry{Program: "p", Device: "d", Bucket: 1}
	data, err := json.Marshal(perfFile{Version: perfVersion, Entries: []PerfEntry{first}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rec.Path, data, 0o600))
	require.Equal(t, []PerfEntry{first}, rec.Entries())
	require.NoError(t, os.WriteFile(rec.Path, []byte("damaged since"), 0o600))
	require.Equal(t, []PerfEntry{first}, (&PerfRecord{Path: rec.Path}).Entries(), "read once per path")
	second := PerfEntry{Program: "q", Device: "d", Bucket: 1}
	require.NoError(t, os.WriteFile(rec.Path, data, 0o600))
	require.NoError(t, rec.Record(second))
	require.ElementsMatch(t, []PerfEntry{first, second}, rec.Entries())
}
