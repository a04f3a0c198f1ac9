//go:build darwin || freebsd || linux || netbsd

package c

import (
	"fmt"
	"strings"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// launchSymbol is the function every compiled object exports: it runs the
// whole grid. Its C type is
//
//	int zyx_c_launch(const uint64_t *args, uint64_t n0, uint64_t n1, uint64_t n2, int64_t threads);
//
// args holds one 64-bit slot per param: a buffer's address, or a scalar's
// little-endian bits.
const launchSymbol = "zyx_c_launch"

// launcherFile is the file name the launcher's diagnostics carry.
const launcherFile = "zyx-c-launcher.c"

// bufferType is the C element type of a buffer param of dtype d. Types C
// has no arithmetic for travel as their raw bits.
func bufferType(d driver.DType) string {
	switch d {
	case driver.F32:
		return "float"
	case driver.F64:
		return "double"
	case driver.BF16, driver.F16:
		return "uint16_t"
	case driver.F8E4M3, driver.F8E5M2, driver.U8, driver.Bool:
		return "uint8_t"
	case driver.I8:
		return "int8_t"
	case driver.I16:
		return "int16_t"
	case driver.I32:
		return "int32_t"
	case driver.I64:
		return "int64_t"
	case driver.U16:
		return "uint16_t"
	case driver.U32:
		return "uint32_t"
	case driver.U64:
		return "uint64_t"
	}
	return ""
}

// scalarType is the C type of a Variable param of dtype d. Narrow floats
// arrive as float (driver.Constant keeps them as f32 bits).
func scalarType(d driver.DType) string {
	switch d {
	case driver.BF16, driver.F16, driver.F8E4M3, driver.F8E5M2:
		return "float"
	}
	return bufferType(d)
}

// CPrototype is the C declaration the program's entry must match: the params
// in order (buffers as pointers to their element type, const for global
// params, variables by value) followed by the group index per axis.
func CPrototype(p *driver.Program, entry string) string {
	var b strings.Builder
	b.WriteString("void ")
	b.WriteString(entry)
	b.WriteString("(")
	for i, prm := range p.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		name := prm.Name
		if !isIdentifier(name) {
			name = fmt.Sprintf("p%d", i)
		}
		switch prm.Kind {
		case driver.Global:
			fmt.Fprintf(&b, "const %s *%s", bufferType(prm.DType), name)
		case driver.GlobalMut:
			fmt.Fprintf(&b, "%s *%s", bufferType(prm.DType), name)
		default:
			fmt.Fprintf(&b, "%s %s", scalarType(prm.DType), name)
		}
	}
	if len(p.Params) > 0 {
		b.WriteString(", ")
	}
	b.WriteString("uint64_t gid0, uint64_t gid1, uint64_t gid2)")
	return b.String()
}

// translationUnit is what the compiler sees: the user's source first (so
// its own #defines and #includes come before anything of ours, and its line
// numbers are its own), then the launcher, which unpacks the argument block
// once per thread and calls the entry for each group of the thread's share
// of the grid. Both are in one translation unit so that the compiler can
// inline the entry into the launcher's innermost loop and vectorise it.
func translationUnit(p *driver.Program, v *driver.SourceVariant) string {
	var b strings.Builder
	b.WriteString("#include <stdint.h> /* the calling convention's types, ahead of the source */\n")
	fmt.Fprintf(&b, "#line 1 %q\n", sourceFile(p))
	b.WriteString(v.Source)
	if !strings.HasSuffix(v.Source, "\n") {
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "#line 1 %q\n", launcherFile)
	b.WriteString(launcherPrelude)

	// zyx_c_span runs the groups [lo, hi) of the row-major linearised grid
	// (axis 0 fastest).
	b.WriteString("static void zyx_c_span(const uint64_t *zyx_args, uint64_t zyx_n0, uint64_t zyx_n1, uint64_t zyx_lo, uint64_t zyx_hi)\n{\n")
	var call []string
	for i, prm := range p.Params {
		local := fmt.Sprintf("zyx_p%d", i)
		call = append(call, local)
		switch {
		case prm.Kind.IsBuffer():
			t := bufferType(prm.DType)
			fmt.Fprintf(&b, "\t%s *const %s = (%s *)(uintptr_t)zyx_args[%d];\n", t, local, t, i)
		case prm.DType == driver.F64:
			fmt.Fprintf(&b, "\tdouble %s; memcpy(&%s, &zyx_args[%d], sizeof %s);\n", local, local, i, local)
		case scalarType(prm.DType) == "float":
			fmt.Fprintf(&b, "\tfloat %s; { uint32_t zyx_b = (uint32_t)zyx_args[%d]; memcpy(&%s, &zyx_b, sizeof %s); }\n", local, i, local, local)
		case prm.DType == driver.Bool:
			fmt.Fprintf(&b, "\tconst uint8_t %s = (uint8_t)(zyx_args[%d] & 1u);\n", local, i)
		default:
			t := scalarType(prm.DType)
			fmt.Fprintf(&b, "\tconst %s %s = (%s)zyx_args[%d];\n", t, local, t, i)
		}
	}
	call = append(call, "zyx_g0", "zyx_g1", "zyx_g2")
	fmt.Fprintf(&b, `	uint64_t zyx_g0 = zyx_lo %% zyx_n0, zyx_r = zyx_lo / zyx_n0;
	uint64_t zyx_g1 = zyx_r %% zyx_n1, zyx_g2 = zyx_r / zyx_n1;
	while (zyx_lo < zyx_hi) {
		uint64_t zyx_end = zyx_n0;
		if (zyx_end - zyx_g0 > zyx_hi - zyx_lo)
			zyx_end = zyx_g0 + (zyx_hi - zyx_lo);
		zyx_lo += zyx_end - zyx_g0;
		for (; zyx_g0 < zyx_end; zyx_g0++)
			%s(%s);
		zyx_g0 = 0;
		if (++zyx_g1 == zyx_n1) {
			zyx_g1 = 0;
			zyx_g2++;
		}
	}
	(void)zyx_g2;
}
`, v.Entry, strings.Join(call, ", "))
	b.WriteString(launcherMain)
	return b.String()
}

func sourceFile(p *driver.Program) string {
	if isIdentifier(p.Name) {
		return p.Name + ".c"
	}
	return "program.c"
}

// isIdentifier reports whether s is a C identifier.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

const launcherPrelude = `/* zyx-tt C launcher: runs the grid in C, in parallel, calling the entry once per group. */
#include <stdint.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
#include <pthread.h>
#endif
`

// launcherMain splits the linearised grid into one contiguous share per
// thread (OpenMP where the compiler has it, else POSIX threads, where a
// thread that cannot be created has its share run by the caller).
const launcherMain = `
#ifndef _OPENMP
struct zyx_c_share { const uint64_t *args; uint64_t n0, n1, lo, hi; };
static void *zyx_c_thread(void *arg)
{
	const struct zyx_c_share *s = (const struct zyx_c_share *)arg;
	zyx_c_span(s->args, s->n0, s->n1, s->lo, s->hi);
	return 0;
}
#endif

__attribute__((visibility("default")))
int zyx_c_launch(const uint64_t *args, uint64_t n0, uint64_t n1, uint64_t n2, int64_t threads)
{
	if (n0 == 0 || n1 == 0 || n2 == 0)
		return 0;
	const uint64_t total = n0 * n1 * n2; /* the runtime checked that this does not overflow */
	uint64_t nt = threads > 0 ? (uint64_t)threads : 1;
	if (nt > total)
		nt = total;
	if (nt > 1024)
		nt = 1024;
	if (nt == 1) {
		zyx_c_span(args, n0, n1, 0, total);
		return 0;
	}
#ifdef _OPENMP
#pragma omp parallel num_threads((int)nt)
	{
		const uint64_t t = (uint64_t)omp_get_thread_num(), team = (uint64_t)omp_get_num_threads();
		const uint64_t share = total / team, extra = total % team;
		const uint64_t lo = t * share + (t < extra ? t : extra);
		zyx_c_span(args, n0, n1, lo, lo + share + (t < extra ? 1 : 0));
	}
#else
	pthread_t ids[1024];
	int started[1024];
	struct zyx_c_share shares[1024];
	const uint64_t share = total / nt, extra = total % nt;
	for (uint64_t t = 0; t < nt; t++) {
		const uint64_t lo = t * share + (t < extra ? t : extra);
		shares[t] = (struct zyx_c_share){args, n0, n1, lo, lo + share + (t < extra ? 1 : 0)};
	}
	for (uint64_t t = 1; t < nt; t++)
		started[t] = pthread_create(&ids[t], 0, zyx_c_thread, &shares[t]) == 0;
	zyx_c_thread(&shares[0]);
	for (uint64_t t = 1; t < nt; t++) {
		if (started[t])
			pthread_join(ids[t], 0);
		else
			zyx_c_thread(&shares[t]);
	}
#endif
	return 0;
}
`
