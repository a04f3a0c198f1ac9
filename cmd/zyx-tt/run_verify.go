package main

import (
	"fmt"
	"strings"

	"github.com/zyxtt/zyxtt/bundle"
)

// mismatch is the error of a verified run whose outputs were out of
// tolerance (exit status 3), naming each output at fault.
func mismatch(v *bundle.VerifyReport) error {
	var bad []string
	for _, o := range v.Outputs {
		if !o.OK {
			bad = append(bad, o.Name+": "+mismatchText(o))
		}
	}
	return fmt.Errorf("%w against %s: %s", errMismatch, v.Against, strings.Join(bad, "; "))
}

// mismatchText says why an output failed verification.
func mismatchText(o bundle.OutputVerdict) string {
	var parts []string
	if o.PCC != nil && *o.PCC < *o.MinPCC {
		parts = append(parts, fmt.Sprintf("PCC %.6f below %g", float64(*o.PCC), float64(*o.MinPCC)))
	}
	if o.Mismatches > 0 || len(parts) == 0 {
		what := "out of tolerance"
		if o.PCC != nil && o.Atol == 0 && o.Rtol == 0 {
			what = "non-finite where the reference is not (or the reverse)"
		}
		parts = append(parts, fmt.Sprintf("%d of %d elements %s; worst at [%d]: got %g, want %g", o.Mismatches, o.Elems, what, o.Worst, o.Got, o.Want))
	}
	return strings.Join(parts, "; ")
}
