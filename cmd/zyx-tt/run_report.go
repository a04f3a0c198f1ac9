package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zyxtt/zyxtt/bundle"
)

// The human-readable form of a run's report (--json prints bundle.Report
// itself).

func writeSkips(w io.Writer, skips []bundle.SkipReport) {
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

func writeRun(w io.Writer, rep *bundle.Report) {
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
	if sel := rep.Selection; sel != nil && sel.Reason != "" {
		fmt.Fprintf(w, "  chosen    %s\n", sel.Reason)
	}
	fmt.Fprintf(w, "  grid      %s\n", joinUints(rep.Grid, " x "))
	t := rep.Timing
	fmt.Fprintf(w, "  compile   %s\n", dur(t.CompileNS))
	fmt.Fprintf(w, "  upload    %s in %s\n", iecBytes(float64(t.UpBytes)), dur(t.UploadNS))
	fmt.Fprintf(w, "  launch    %s\n", dur(t.LaunchNS))
	for _, warning := range rep.Warnings {
		fmt.Fprintf(w, "  warning   %s\n", warning)
	}
	fmt.Fprintf(w, "  download  %s in %s\n", iecBytes(float64(t.DownBytes)), dur(t.DownloadNS))
	if rp := rep.Repeat; rp != nil {
		fmt.Fprintf(w, "  repeat    %d timed runs: min %s, median %s, max %s\n", rp.Runs, dur(rp.MinNS), dur(rp.MedianNS), dur(rp.MaxNS))
	}
	if q := rep.Queue; q != nil && q.Launches > 0 {
		n := int64(q.Launches)
		fmt.Fprintf(w, "  queue     %d launches: synchronous %s each, queued %s each (%.2fx)\n",
			q.Launches, dur(q.SyncNS/n), dur(q.QueuedNS/n), float64(q.SyncNS)/float64(max(q.QueuedNS, 1)))
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
				verdict = "MISMATCH: " + mismatchText(o)
			}
			accept := fmt.Sprintf("atol %.3g, rtol %.3g", o.Atol, o.Rtol)
			if o.PCC != nil {
				accept = fmt.Sprintf("PCC %.6f, at least %g", float64(*o.PCC), float64(*o.MinPCC))
				if o.Atol != 0 || o.Rtol != 0 {
					accept += fmt.Sprintf("; atol %.3g, rtol %.3g", o.Atol, o.Rtol)
				}
			}
			fmt.Fprintf(w, "  verify    %s against %s: max abs err %.3g, max rel err %.3g (%s): %s\n",
				o.Name, against, o.MaxAbs, o.MaxRel, accept, verdict)
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
