// Package cpuinfo describes the host CPU for the C and CBLAS devices: model,
// cores, SIMD width, clock and cache sizes, read from /proc and /sys where
// the system has them.
package cpuinfo

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// CPU is what the host tells about its processor. Unknown facts are zero.
type CPU struct {
	Model string
	Cores int
	// SIMD names the widest vector extension found ("avx512f", "avx2",
	// "sse2", "neon", or "" for none known).
	SIMD string
	// VectorBytes is the width of one SIMD register in bytes (1 without SIMD).
	VectorBytes int
	// VectorRegisters is the number of architectural SIMD registers.
	VectorRegisters int
	// FMA says whether fused multiply-add instructions exist.
	FMA bool
	// ClockMHz is the nominal core clock.
	ClockMHz float64
	// Caches lists the data and unified caches of cpu0, L1 first.
	Caches []Cache
}

// Cache is one cache level of cpu0.
type Cache struct {
	Level int
	Type  string // "Data", "Unified", "Instruction"
	Bytes int64
}

// Name is "L1d", "L2", "L1i" …
func (c Cache) Name() string {
	switch c.Type {
	case "Data":
		return fmt.Sprintf("L%dd", c.Level)
	case "Instruction":
		return fmt.Sprintf("L%di", c.Level)
	}
	return fmt.Sprintf("L%d", c.Level)
}

// LaneCount is how many elements of elemBytes one vector register holds.
func (c CPU) LaneCount(elemBytes int) int {
	if elemBytes <= 0 || c.VectorBytes < elemBytes {
		return 1
	}
	return c.VectorBytes / elemBytes
}

// PeakFLOPs estimates f32 peak compute: cores × clock × lanes × 2 (an FMA
// counts as two operations; without FMA a multiply and an add issue
// separately, which also makes two).
func (c CPU) PeakFLOPs() uint64 {
	clock := c.ClockMHz
	if clock <= 0 {
		clock = 2000 // a conservative guess where the clock is not reported
	}
	return uint64(float64(c.Cores) * clock * 1e6 * float64(c.LaneCount(4)) * 2)
}

// CacheBytes returns the size of the first cache named name ("L1d", "L2",
// "L3"), or 0.
func (c CPU) CacheBytes(name string) int64 {
	for _, k := range c.Caches {
		if k.Name() == name {
			return k.Bytes
		}
	}
	return 0
}

// Extra is the CPU's facts as strings for DeviceInfo.Extra.
func (c CPU) Extra() map[string]string {
	m := map[string]string{
		"cores":        strconv.Itoa(c.Cores),
		"vector_bytes": strconv.Itoa(c.VectorBytes),
	}
	if c.SIMD != "" {
		m["simd"] = c.SIMD
	}
	if c.ClockMHz > 0 {
		m["clock_mhz"] = strconv.FormatFloat(c.ClockMHz, 'f', 0, 64)
	}
	for _, k := range c.Caches {
		m["cache_"+strings.ToLower(k.Name())] = FormatBytes(k.Bytes)
	}
	return m
}

// FormatBytes writes a cache size the way sysfs does: 48K, 2048K, 32M.
func FormatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

var host = sync.OnceValue(func() CPU { return detect("/") })

// Host describes this machine's CPU, read once.
func Host() CPU { return host() }

// detect reads the CPU description under root (a test passes a fake tree).
func detect(root string) CPU {
	c := CPU{Cores: runtime.NumCPU(), VectorBytes: 1}
	flags := map[string]bool{}
	if data, err := os.ReadFile(filepath.Join(root, "proc/cpuinfo")); err == nil {
		parseCPUInfo(data, &c, flags)
	}
	classifySIMD(&c, flags)
	if c.ClockMHz == 0 {
		if data, err := os.ReadFile(filepath.Join(root, "sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")); err == nil {
			if khz, err := strconv.ParseFloat(strings.TrimSpace(string(data)), 64); err == nil && khz > 0 && !math.IsInf(khz, 0) {
				c.ClockMHz = khz / 1000
			}
		}
	}
	c.Caches = readCaches(filepath.Join(root, "sys/devices/system/cpu/cpu0/cache"))
	if c.Model == "" {
		c.Model = runtime.GOARCH + " CPU"
	}
	return c
}

// parseCPUInfo reads the first processor's block of /proc/cpuinfo.
func parseCPUInfo(data []byte, c *CPU, flags map[string]bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	seenProcessor := 0
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			seenProcessor++
			if seenProcessor > 1 {
				return // every processor repeats the same facts
			}
		case "model name", "Model", "cpu model":
			if c.Model == "" {
				c.Model = val
			}
		case "cpu MHz":
			if v, err := strconv.ParseFloat(val, 64); err == nil && v > 0 && !math.IsInf(v, 0) && c.ClockMHz == 0 {
				c.ClockMHz = v
			}
		case "flags", "Features":
			for _, f := range strings.Fields(val) {
				flags[f] = true
			}
		}
	}
}

// classifySIMD picks the widest vector extension the flags name. On arm64
// Advanced SIMD is architectural, so it counts even without flags.
func classifySIMD(c *CPU, flags map[string]bool) {
	switch {
	case flags["avx512f"]:
		c.SIMD, c.VectorBytes, c.VectorRegisters = "avx512f", 64, 32
	case flags["avx2"]:
		c.SIMD, c.VectorBytes, c.VectorRegisters = "avx2", 32, 16
	case flags["avx"]:
		c.SIMD, c.VectorBytes, c.VectorRegisters = "avx", 32, 16
	case flags["sse2"]:
		c.SIMD, c.VectorBytes, c.VectorRegisters = "sse2", 16, 16
	case flags["asimd"] || flags["neon"] || runtime.GOARCH == "arm64":
		c.SIMD, c.VectorBytes, c.VectorRegisters = "neon", 16, 32
	case runtime.GOARCH == "amd64":
		c.SIMD, c.VectorBytes, c.VectorRegisters = "sse2", 16, 16 // baseline of x86-64
	}
	c.FMA = flags["fma"] || flags["asimd"] || runtime.GOARCH == "arm64"
}

// readCaches lists cpu0's data and unified caches from sysfs.
func readCaches(dir string) []Cache {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Cache
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "index") {
			continue
		}
		read := func(name string) string {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name(), name))
			return strings.TrimSpace(string(b))
		}
		level, err := strconv.Atoi(read("level"))
		if err != nil {
			continue
		}
		size, ok := parseSize(read("size"))
		if !ok {
			continue
		}
		out = append(out, Cache{Level: level, Type: read("type"), Bytes: size})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Level != out[j].Level {
			return out[i].Level < out[j].Level
		}
		return out[i].Type < out[j].Type
	})
	return out
}

// parseSize reads a sysfs cache size such as "48K" or "32M".
func parseSize(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	mult := int64(1)
	switch s[len(s)-1] {
	case 'K':
		mult, s = 1<<10, s[:len(s)-1]
	case 'M':
		mult, s = 1<<20, s[:len(s)-1]
	case 'G':
		mult, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, false
	}
	return n * mult, true
}
