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
			bad = append(bad, fmt.Sprintf("%s: %d of %d elements out of tolerance", o.Name, o.Mismatches, o.Elems))
		}
	}
	return fmt.Errorf("%w against %s: %s", errMismatch, v.Against, strings.Join(bad, "; "))
}
