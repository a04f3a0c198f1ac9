package driver

import (
	"context"
)

// CheckCompile runs the checks a Compile makes before it builds anything:
// ctx (its own error), that p has a variant in format f (else ErrNoVariant
// for backend's compile, saying "program <name> has no <what>", what naming
// the variant the backend runs: "C variant"; a nil program has none), and
// that p is valid (Program.Validate's error, as backend's compile error).
func CheckCompile(ctx context.Context, backend string, p *Program, f Format, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == nil || p.Variant(f) == nil {
		name := ""
		if p != nil {
			name = p.Name
		}
		return Errorf(backend, "compile", ErrNoVariant, "program %q has no %s", name, what)
	}
	if err := p.Validate(); err != nil {
		return &Error{Backend: backend, Op: "compile", Err: err}
	}
	return nil
}
