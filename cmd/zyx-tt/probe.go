package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/zyxtt/zyxtt/backends"
)

// schemaVersion is the schema_version of every JSON document the command
// prints (probe, probe --perf, version); run's is bundle.ReportSchemaVersion.
// It changes when a field changes meaning or goes away.
const schemaVersion = 1

// probeReport is `zyx-tt probe --json` (docs/probe.md).
type probeReport struct {
	SchemaVersion int            `json:"schema_version"`
	Config        probeConfig    `json:"config"`
	Backends      []probeBackend `json:"backends"`
}

type probeConfig struct {
	Path   string `json:"path"`
	Loaded bool   `json:"loaded"`
	// Error is why the file was not used (unreadable, not JSON, a key
	// twice, a bad device_ids), one fault a line; the backends then run on
	// their defaults.
	Error string `json:"error,omitempty"`
	// Problems are the file's other faults, one each: unknown sections,
	// and section keys that are unknown, of the wrong type or out of range.
	Problems []string `json:"problems,omitempty"`
}

type probeBackend struct {
	Name     string              `json:"name"`
	Devices  []probeDevice       `json:"devices"`
	Reason   string              `json:"reason,omitempty"`
	Hardware []backends.Hardware `json:"hardware,omitempty"`
	hwKnown  bool                // the driver implements Inventory
}

type probeDevice struct {
	Name      string               `json:"name"`
	Backend   string               `json:"backend"`
	Pool      string               `json:"pool"`
	FreeBytes int64                `json:"free_bytes"`
	Info      *backends.DeviceInfo `json:"info"`
}

// probeFlags are probe's command line.
type probeFlags struct {
	json, perf, list bool
	backends         string
}

func probeFlagSet(f *probeFlags, stdout io.Writer) *flagSet {
	fs := newFlagSet("probe", "[--json] [-L] [--backends LIST] [--perf]",
		"Probe lists every registered backend with its devices, or the reason it has\n"+
			"none, and the hardware each backend found (for Tenstorrent: every card's PCI\n"+
			"address, board, chips, DRAM, firmware, temperature and power). -L lists\n"+
			"the devices alone, one a line.", stdout)
	fs.BoolVar(&f.json, "json", false, "print JSON (schema in docs/probe.md)")
	fs.BoolVar(&f.perf, "perf", false, "list the performance record (what --dev fastest measured) instead")
	fs.BoolVar(&f.list, "L", false, "list the devices, one a line (as nvidia-smi -L)")
	fs.BoolVar(&f.list, "list", false, "the same as -L")
	fs.StringVar(&f.backends, "backends", "", "comma-separated backends to probe (default: all registered)")
	return fs
}

func cmdProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f probeFlags
	fs := probeFlagSet(&f, stdout)
	asJSON, perf, only := &f.json, &f.perf, &f.backends
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if *perf {
		if err := probePerf(stdout, *asJSON); err != nil {
			return err
		}
		return checkConfig(ctx, stderr)
	}
	names := backends.Registered()
	if *only != "" {
		var chosen []string
		for _, n := range strings.Split(*only, ",") {
			n = strings.TrimSpace(n)
			if !slices.Contains(names, n) {
				return usagef("--backends: unknown backend %q (registered: %s)", n, strings.Join(names, ", "))
			}
			if !slices.Contains(chosen, n) {
				chosen = append(chosen, n)
			}
		}
		sort.Strings(chosen)
		names = chosen
	}
	rt, err := backends.Open(ctx, backends.Options{Backends: names})
	if err != nil {
		return err
	}
	defer rt.Close()
	rep := probe(ctx, rt)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if f.list {
		writeDeviceList(stdout, rep)
	} else {
		writeProbe(stdout, rep)
	}
	// The report is printed whole, config faults with it; a broken config
	// still fails the command, as it fails run.
	return configError(rep.Config)
}

func probe(ctx context.Context, rt *backends.Runtime) probeReport {
	rep := probeReport{SchemaVersion: schemaVersion, Config: configOf(rt)}
	for _, name := range rt.Registered() {
		st, err := rt.Backend(ctx, name)
		if err != nil {
			continue
		}
		pb := probeBackend{Name: name, Devices: []probeDevice{}}
		if st.Err != nil {
			pb.Reason = st.Err.Error()
		}
		for _, d := range st.Devices {
			pool := d.Pool()
			pb.Devices = append(pb.Devices, probeDevice{
				Name: d.Name(), Backend: d.Backend(), Pool: pool.Name(), FreeBytes: pool.FreeBytes(), Info: d.Info(),
			})
		}
		if hw, err := rt.Inventory(ctx, name); err == nil && hw != nil {
			pb.hwKnown = true
			pb.Hardware = hw
		}
		rep.Backends = append(rep.Backends, pb)
	}
	return rep
}

func writeProbe(w io.Writer, rep probeReport) {
	writeConfigHeader(w, rep.Config)
	writeConfigFaults(w, rep.Config)
	for _, b := range rep.Backends {
		fmt.Fprintln(w)
		switch len(b.Devices) {
		case 0:
			fmt.Fprintf(w, "%s: no devices: %s\n", b.Name, oneLine(b.Reason))
		case 1:
			fmt.Fprintf(w, "%s: 1 device\n", b.Name)
		default:
			fmt.Fprintf(w, "%s: %d devices\n", b.Name, len(b.Devices))
		}
		for _, d := range b.Devices {
			writeDevice(w, d)
		}
		if b.hwKnown {
			if len(b.Hardware) == 0 {
				fmt.Fprintf(w, "  hardware: none found\n")
			} else {
				fmt.Fprintf(w, "  hardware:\n")
			}
			for _, hw := range b.Hardware {
				fmt.Fprintf(w, "    %s\n", hw.Name)
				width := 0
				for _, f := range hw.Facts {
					width = max(width, len(f.Key)+1)
				}
				for _, f := range hw.Facts {
					fmt.Fprintf(w, "      %-*s  %s\n", width, f.Key+":", f.Value)
				}
				for _, p := range hw.Problems {
					fmt.Fprintf(w, "      problem: %s\n", p)
				}
			}
		}
	}
}

// writeDeviceList is probe -L: one line a device, "NAME: HARDWARE (facts)".
func writeDeviceList(w io.Writer, rep probeReport) {
	for _, b := range rep.Backends {
		for _, d := range b.Devices {
			in := d.Info
			facts := []string{string(in.Kind)}
			if in.Emulated {
				facts = append(facts, "emulated")
			}
			if in.SoftwareImpl {
				facts = append(facts, "software implementation")
			}
			if in.Cores > 0 {
				facts = append(facts, fmt.Sprintf("%d cores", in.Cores))
			}
			if in.Memory > 0 {
				facts = append(facts, "memory "+iecBytes(float64(in.Memory)))
			}
			facts = append(facts, "pool "+d.Pool)
			fmt.Fprintf(w, "%s: %s (%s)\n", d.Name, oneLine(in.Name), strings.Join(facts, ", "))
		}
	}
}

func writeDevice(w io.Writer, d probeDevice) {
	in := d.Info
	kind := string(in.Kind)
	if in.Emulated {
		kind += ", emulated"
	}
	if in.SoftwareImpl {
		kind += ", software implementation"
	}
	fmt.Fprintf(w, "  %s  %s (%s)\n", d.Name, in.Name, kind)
	var facts []string
	if in.Compute > 0 {
		c := "compute " + siRate(float64(in.Compute), "FLOP/s")
		if in.ComputeEstimated {
			c += " (a class estimate)"
		}
		facts = append(facts, c)
	}
	if in.Cores > 0 {
		facts = append(facts, fmt.Sprintf("%d cores", in.Cores))
	}
	if in.Memory > 0 {
		facts = append(facts, "memory "+iecBytes(float64(in.Memory)))
	}
	facts = append(facts, fmt.Sprintf("pool %s: %s free", d.Pool, iecBytes(float64(d.FreeBytes))))
	fmt.Fprintf(w, "      %s\n", strings.Join(facts, ", "))
	facts = facts[:0]
	if in.Tile != [2]uint64{} { // a grid of tile processors: its worker grid
		facts = append(facts, "worker grid "+joinUints(in.MaxGlobalWorkDims, "x"))
		if in.Tile != [2]uint64{} {
			facts = append(facts, fmt.Sprintf("tile %dx%d", in.Tile[0], in.Tile[1]))
		}
		if in.NumCircularBuffers > 0 {
			facts = append(facts, fmt.Sprintf("%d circular buffers", in.NumCircularBuffers))
		}
	} else if len(in.MaxGlobalWorkDims) > 0 && slices.Max(in.MaxGlobalWorkDims) < 1<<40 {
		facts = append(facts, "max grid "+joinUints(in.MaxGlobalWorkDims, "x"))
		if in.MaxLocalThreads > 1 {
			facts = append(facts, fmt.Sprintf("work group up to %d threads", in.MaxLocalThreads))
		}
	}
	if in.ComputeCapability != [2]int32{} {
		facts = append(facts, fmt.Sprintf("compute capability %d.%d", in.ComputeCapability[0], in.ComputeCapability[1]))
	}
	if in.TensorCores {
		facts = append(facts, "tensor cores")
	}
	if in.HasOpenMP {
		facts = append(facts, "openmp")
	}
	if len(facts) > 0 {
		fmt.Fprintf(w, "      %s\n", strings.Join(facts, ", "))
	}
	if len(in.Formats) > 0 {
		names := make([]string, len(in.Formats))
		for i, f := range in.Formats {
			names[i] = string(f)
		}
		fmt.Fprintf(w, "      runs variants: %s\n", strings.Join(names, ", "))
	}
	keys := make([]string, 0, len(in.Extra))
	for k := range in.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "      %s: %s\n", k, in.Extra[k])
	}
}

func joinUints(v []uint64, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

// perfReport is `zyx-tt probe --perf --json`.
type perfReport struct {
	SchemaVersion int                  `json:"schema_version"`
	Path          string               `json:"path"`
	Entries       []backends.PerfEntry `json:"entries"`
}

// probePerf lists the performance record.
func probePerf(w io.Writer, asJSON bool) error {
	rec := backends.DefaultPerfRecord()
	if rec == nil {
		return fmt.Errorf("no performance record (no cache directory, or %s=off)", backends.EnvPerfRecord)
	}
	rep := perfReport{SchemaVersion: schemaVersion, Path: rec.Path, Entries: rec.Entries()}
	if rep.Entries == nil {
		rep.Entries = []backends.PerfEntry{}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintf(w, "performance record: %s (%d entries)\n", rep.Path, len(rep.Entries))
	sort.SliceStable(rep.Entries, func(i, j int) bool {
		a, b := rep.Entries[i], rep.Entries[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Bucket != b.Bucket {
			return a.Bucket < b.Bucket
		}
		return a.Launch < b.Launch
	})
	for _, e := range rep.Entries {
		fmt.Fprintf(w, "  %-12s %-10s ~2^%d bytes  launch %s  upload %s  download %s  (%d samples, %s)\n",
			e.Name, e.DeviceName, e.Bucket, dur(e.Launch.Nanoseconds()), dur(e.Upload.Nanoseconds()), dur(e.Download.Nanoseconds()),
			e.Samples, e.MeasuredAt.Format("2006-01-02 15:04"))
	}
	return nil
}
