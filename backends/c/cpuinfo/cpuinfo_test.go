package cpuinfo

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDetectX86(t *testing.T) {
	c := detect("testdata/x86")
	require.Equal(t, "Test Xeon 9999", c.Model)
	require.Equal(t, "avx512f", c.SIMD)
	require.Equal(t, 64, c.VectorBytes)
	require.Equal(t, 32, c.VectorRegisters)
	require.True(t, c.FMA)
	require.Equal(t, 2300.0, c.ClockMHz)
	require.Equal(t, int64(48<<10), c.CacheBytes("L1d"))
	require.Equal(t, int64(32<<10), c.CacheBytes("L1i"))
	require.Equal(t, int64(2048<<10), c.CacheBytes("L2"))
	require.Equal(t, int64(260<<20), c.CacheBytes("L3"))
	require.Equal(t, 16, c.LaneCount(4))
	require.Equal(t, uint64(float64(c.Cores)*2300e6*16*2), c.PeakFLOPs())
	extra := c.Extra()
	require.Equal(t, "48K", extra["cache_l1d"])
	require.Equal(t, "260M", extra["cache_l3"])
	require.Equal(t, "avx512f", extra["simd"])
	require.Equal(t, "2300", extra["clock_mhz"])
}

func TestDetectARM(t *testing.T) {
	c := detect("testdata/arm")
	require.Equal(t, "neon", c.SIMD)
	require.Equal(t, 16, c.VectorBytes)
	require.Empty(t, c.Caches)
	require.Zero(t, c.ClockMHz)
	require.Positive(t, c.PeakFLOPs(), "a missing clock falls back to a guess")
}

func TestDetectMissingTree(t *testing.T) {
	c := detect(t.TempDir())
	require.Equal(t, runtime.NumCPU(), c.Cores)
	require.NotEmpty(t, c.Model)
	require.GreaterOrEqual(t, c.VectorBytes, 1)
	require.Equal(t, int64(0), c.CacheBytes("L1d"))
}

func TestHost(t *testing.T) {
	c := Host()
	require.Positive(t, c.Cores)
	require.NotEmpty(t, c.Model)
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"48K", 48 << 10, true}, {"2M", 2 << 20, true}, {"1G", 1 << 30, true}, {"512", 512, true},
		{"", 0, false}, {"K", 0, false}, {"-1K", 0, false}, {"12Q", 0, false}, {"1.5M", 0, false},
	} {
		got, ok := parseSize(tc.in)
		require.Equal(t, tc.ok, ok, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestFormatBytes(t *testing.T) {
	require.Equal(t, "48K", FormatBytes(48<<10))
	require.Equal(t, "32M", FormatBytes(32<<20))
	require.Equal(t, "1000", FormatBytes(1000))
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"48K", "2048K", "32M", "", "K", "9999999999999G"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseSize(s)
		if ok && n < 0 {
			t.Fatalf("parseSize(%q) = %d, negative", s, n)
		}
		if !ok && n != 0 {
			t.Fatalf("parseSize(%q) failed but returned %d", s, n)
		}
	})
}

func FuzzParseCPUInfo(f *testing.F) {
	f.Add([]byte("processor : 0\nmodel name : X\ncpu MHz : 1000\nflags : avx2 fma\n"))
	f.Add([]byte("Features: asimd\n"))
	f.Add([]byte("cpu MHz : NaN\n:::\nflags"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := CPU{VectorBytes: 1}
		flags := map[string]bool{}
		parseCPUInfo(data, &c, flags)
		classifySIMD(&c, flags)
		if c.VectorBytes < 1 {
			t.Fatalf("vector bytes %d", c.VectorBytes)
		}
		if c.ClockMHz < 0 || math.IsNaN(c.ClockMHz) || math.IsInf(c.ClockMHz, 0) {
			t.Fatalf("clock %v", c.ClockMHz)
		}
	})
}
