package backends

import (
	"fmt"
	"strings"
)

// ParseProgram makes a program from its signature and its variants. The
// signature is the program's name, its params in launch order and its
// grid, the grid in the expression text of bundles and tt.json
// (Program.ParseGrid):
//
//	vadd(x: f32[], y: f32[], z: mut f32[], n: u32) grid [ceil_div(n, 256)]
//
// A param "NAME: DTYPE[]" is a buffer the program reads (Global), "NAME:
// mut DTYPE[]" one it writes (GlobalMut), "NAME: DTYPE" a scalar
// (Variable). Without a grid the program runs one group. The program is
// validated.
func ParseProgram(signature string, variants ...Variant) (*Program, error) {
	bad := func(format string, args ...any) (*Program, error) {
		return nil, fmt.Errorf("%w: signature %q: %s", ErrInvalidArgument, signature, fmt.Sprintf(format, args...))
	}
	open := strings.IndexByte(signature, '(')
	end := strings.IndexByte(signature, ')')
	if open < 0 || end < open {
		return bad("want NAME(PARAM, ...) [grid [EXPR, ...]]")
	}
	p := &Program{Name: strings.TrimSpace(signature[:open]), Variants: variants}
	if p.Name == "" {
		return bad("the program has no name")
	}
	if list := strings.TrimSpace(signature[open+1 : end]); list != "" {
		for i, item := range strings.Split(list, ",") {
			name, typ, ok := strings.Cut(item, ":")
			name, typ = strings.TrimSpace(name), strings.TrimSpace(typ)
			if !ok || name == "" || typ == "" {
				return bad("param %d %q: want NAME: [mut] DTYPE[] or NAME: DTYPE", i, strings.TrimSpace(item))
			}
			prm := Param{Name: name, Kind: Variable}
			if t, buf := strings.CutSuffix(typ, "[]"); buf {
				prm.Kind, typ = Global, strings.TrimSpace(t)
				if t, mut := strings.CutPrefix(typ, "mut "); mut {
					prm.Kind, typ = GlobalMut, strings.TrimSpace(t)
				}
			} else if strings.HasPrefix(typ, "mut ") {
				return bad("param %q: only a buffer (DTYPE[]) is mut", name)
			}
			dt, err := ParseDType(typ)
			if err != nil {
				return bad("param %q: %v", name, err)
			}
			prm.DType = dt
			p.Params = append(p.Params, prm)
		}
	}
	rest := strings.TrimSpace(signature[end+1:])
	if rest != "" {
		g, ok := strings.CutPrefix(rest, "grid")
		g = strings.TrimSpace(g)
		if !ok || !strings.HasPrefix(g, "[") || !strings.HasSuffix(g, "]") {
			return bad("after the params: want grid [EXPR, ...], got %q", rest)
		}
		axes := splitTopLevel(g[1 : len(g)-1])
		grid, err := p.ParseGrid(axes...)
		if err != nil {
			return nil, fmt.Errorf("signature %q: %w", signature, err)
		}
		p.Grid = grid
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// splitTopLevel splits s at the commas outside parentheses.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
