package bundle

import (
	"fmt"
	"math"
	"strconv"
)

// ReportSchemaVersion is the schema_version of Report.
const ReportSchemaVersion = 1

// Report is what a run did, as `zyx-tt run --json` prints it
// (docs/probe.md defines the schema).
type Report struct {
	// SchemaVersion is ReportSchemaVersion: it changes when a field
	// changes meaning or goes away (new fields do not change it).
	SchemaVersion int              `json:"schema_version"`
	Bundle        string           `json:"bundle"`
	Program       string           `json:"program"`
	Description   string           `json:"description,omitempty"`
	Vars          []VarReport      `json:"vars"`
	Skipped       []SkipReport     `json:"skipped"`
	Device        DeviceReport     `json:"device"`
	Selection     *SelectionReport `json:"selection,omitempty"`
	Grid          []uint64         `json:"grid"`
	Params        []ParamReport    `json:"params"`
	Timing        TimingReport     `json:"timing"`
	Repeat        *RepeatReport    `json:"repeat,omitempty"`
	Queue         *QueueReport     `json:"queue,omitempty"`
	Verify        *VerifyReport    `json:"verify,omitempty"`
	Written       []WrittenReport  `json:"written"`
	// Warnings: what the device noticed during the run and did not stop
	// for (the Tenstorrent emulator's watcher), one message each.
	Warnings []string `json:"warnings,omitempty"`
}

// VarReport is one var and the value the run used.
type VarReport struct {
	Name  string `json:"name"`
	DType string `json:"dtype"`
	Value string `json:"value"`
}

// SkipReport is a device selection passed over, and why.
type SkipReport struct {
	Device string `json:"device"`
	Reason string `json:"reason"`
}

// DeviceReport is the device the run used.
type DeviceReport struct {
	Name     string `json:"name"`
	Backend  string `json:"backend"`
	Hardware string `json:"hardware"`
	Kind     string `json:"kind"`
	Emulated bool   `json:"emulated,omitempty"`
}

// SelectionReport says why the device was chosen, with the measurements
// the choice was made on (best first), if any.
type SelectionReport struct {
	Reason   string           `json:"reason"`
	Measured []MeasuredReport `json:"measured,omitempty"`
}

// MeasuredReport is one device's measurement.
type MeasuredReport struct {
	Device     string `json:"device"`
	LaunchNS   int64  `json:"launch_ns"`
	UploadNS   int64  `json:"upload_ns"`
	DownloadNS int64  `json:"download_ns"`
}

// ParamReport is one param of the run.
type ParamReport struct {
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

// TimingReport is the run's wall-clock times and bytes moved.
type TimingReport struct {
	CompileNS  int64 `json:"compile_ns"`
	UploadNS   int64 `json:"upload_ns"`
	LaunchNS   int64 `json:"launch_ns"`
	DownloadNS int64 `json:"download_ns"`
	UpBytes    int64 `json:"upload_bytes"`
	DownBytes  int64 `json:"download_bytes"`
}

// RepeatReport summarises the timed launches.
type RepeatReport struct {
	Runs     int   `json:"runs"`
	MinNS    int64 `json:"min_ns"`
	MedianNS int64 `json:"median_ns"`
	MaxNS    int64 `json:"max_ns"`
}

// QueueReport is the wall time of the repeated launches made one after
// another, each waited for (sync_ns), against the same launches submitted
// back to back with one wait (queued_ns), in nanoseconds for all of them.
type QueueReport struct {
	Launches int   `json:"launches"`
	SyncNS   int64 `json:"sync_ns"`
	QueuedNS int64 `json:"queued_ns"`
}

// VerifyReport is the verdict on every output.
type VerifyReport struct {
	// Against is "host" for the bundle's float64 reference, else the
	// reference device's name.
	Against string          `json:"against"`
	Skipped []SkipReport    `json:"skipped,omitempty"`
	OK      bool            `json:"ok"`
	Outputs []OutputVerdict `json:"outputs"`
}

// OutputVerdict is one output's comparison.
type OutputVerdict struct {
	Name       string `json:"name"`
	Elems      int    `json:"elems"`
	MaxAbs     Number `json:"max_abs"`
	MaxRel     Number `json:"max_rel"`
	Atol       Number `json:"atol"`
	Rtol       Number `json:"rtol"`
	Mismatches int64  `json:"mismatches"`
	Worst      int    `json:"worst_index"`
	Got        Number `json:"worst_got"`
	Want       Number `json:"worst_want"`
	// PCC and MinPCC are present when the reference accepts by Pearson
	// correlation: the output's correlation with the expected values and
	// the least the reference accepts.
	PCC    *Number `json:"pcc,omitempty"`
	MinPCC *Number `json:"min_pcc,omitempty"`
	OK     bool    `json:"ok"`
}

// Number is a float64 that encodes in JSON as a number when finite and as
// one of the strings "NaN", "+Inf" and "-Inf" otherwise (JSON has no literal
// for them, and a report must not fail exactly when an output holds one).
type Number float64

// MarshalJSON writes n as a JSON number, or a string for a non-finite n.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (n *Number) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"NaN"`:
		*n = Number(math.NaN())
		return nil
	case `"+Inf"`, `"Inf"`:
		*n = Number(math.Inf(1))
		return nil
	case `"-Inf"`:
		*n = Number(math.Inf(-1))
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("bundle: %s is not a number, NaN, +Inf or -Inf", b)
	}
	*n = Number(f)
	return nil
}

// WrittenReport is one output file written.
type WrittenReport struct {
	Param string `json:"param"`
	Path  string `json:"path"`
}
