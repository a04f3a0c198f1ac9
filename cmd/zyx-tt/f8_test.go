package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// f8AddC adds two f8e4m3 arrays in C: decode, add in float, round to the
// nearest finite f8e4m3 (a search over the codes: the kernel must not
// share the driver's conversion it is checked against). WRONG, when
// defined, drops the last mantissa bit of every sum instead.
const f8AddC = `#include <stdint.h>

static float pow2(int k) {
	float r = 1.0f;
	for (; k > 0; k--) r *= 2.0f;
	for (; k < 0; k++) r *= 0.5f;
	return r;
}

static float dec(uint8_t b) {
	int e = (b >> 3) & 15, m = b & 7;
	float v = e == 0 ? (float)m * pow2(-9) : (1.0f + (float)m / 8.0f) * pow2(e - 7);
	return (b & 0x80) ? -v : v;
}

static uint8_t enc(float f) {
	uint8_t best = 0;
	float bd = 1e30f;
	for (int b = 0; b < 256; b++) {
		if ((b & 0x7f) == 0x7f) continue; /* NaN */
		float d = dec((uint8_t)b) - f;
		if (d < 0) d = -d;
		if (d < bd) { bd = d; best = (uint8_t)b; }
	}
#ifdef WRONG
	best &= 0xfe;
#endif
	return best;
}

void add8(const uint8_t *x, const uint8_t *y, uint8_t *z, uint32_t n,
          uint64_t i, uint64_t gid1, uint64_t gid2)
{
	(void)gid1;
	(void)gid2;
	if (i < n)
		z[i] = enc(dec(x[i]) + dec(y[i]));
}
`

// An f8e4m3 bundle runs on c and --verify checks it end to end: inputs
// generated in f8, the kernel's bytes decoded and compared with the float64
// sum at f8's tolerance; a kernel that loses a mantissa bit is a mismatch
// (exit 3).
func TestVerifyF8Bundle(t *testing.T) {
	for _, wrong := range []bool{false, true} {
		dir := t.TempDir()
		src := f8AddC
		if wrong {
			src = "#define WRONG 1\n" + src
		}
		for name, body := range map[string]string{
			"manifest.json": `{"name": "add8", "vars": [{"name": "n", "dtype": "u32", "default": 4096}],
 "params": [{"name": "x", "kind": "global", "dtype": "f8e4m3", "shape": ["n"]},
            {"name": "y", "kind": "global", "dtype": "f8e4m3", "shape": ["n"]},
            {"name": "z", "kind": "global_mut", "dtype": "f8e4m3", "shape": ["n"]},
            {"name": "n", "kind": "variable", "dtype": "u32"}],
 "grid": ["n"], "inputs": {"x": "random:-2:2", "y": "random:-2:2"}, "outputs": ["z"],
 "reference": {"op": "add", "args": ["x", "y"], "out": "z"}}`,
			"c.json": `{"source": "add8.c", "entry": "add8", "grid": ["n"]}`,
			"add8.c": src,
		} {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		}
		if !wrong {
			rep, r := runJSON(t, cliEnv{}, dir, "--dev", "c", "--verify")
			require.Equal(t, exitOK, r.code, r.stderr)
			require.True(t, rep.Verify.OK)
			require.Len(t, rep.Verify.Outputs, 1)
			o := rep.Verify.Outputs[0]
			require.Equal(t, "z", o.Name)
			require.Equal(t, 4096, o.Elems)
			require.Zero(t, o.Mismatches)
			continue
		}
		o, r := verifyMismatch(t, dir)
		require.Positive(t, o.Mismatches, "a sum off by one f8 step is caught")
		t.Logf("the wrong kernel: %d of %d outside the tolerance", o.Mismatches, o.Elems)
		require.True(t, strings.Contains(r.stdout, `"z"`), r.stdout)
	}
}
