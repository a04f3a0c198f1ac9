package dl

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// weighted builds a shared object with fK(a1..aK) = Σ i·ai for K = 0..12,
// so that a call proves every argument arrived, in its place.
func weighted(t *testing.T) uintptr {
	t.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc) to build the test library")
	}
	var src strings.Builder
	for k := 0; k <= maxCallArgs; k++ {
		var params, sum []string
		for i := 1; i <= k; i++ {
			params = append(params, fmt.Sprintf("long a%d", i))
			sum = append(sum, fmt.Sprintf("%d*a%d", i, i))
		}
		if k == 0 {
			params, sum = []string{"void"}, []string{"42"}
		}
		fmt.Fprintf(&src, "long f%d(%s) { return %s; }\n", k, strings.Join(params, ", "), strings.Join(sum, " + "))
	}
	dir := t.TempDir()
	c, so := filepath.Join(dir, "w.c"), filepath.Join(dir, "libw.so")
	require.NoError(t, os.WriteFile(c, []byte(src.String()), 0o600))
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, c).CombinedOutput()
	require.NoError(t, err, "%s", out)
	h, _, err := OpenFirst([]string{so}, nil)
	require.NoError(t, err)
	return h
}

func TestCallPassesEveryArgument(t *testing.T) {
	h := weighted(t)
	fns := make([]uintptr, maxCallArgs+1)
	var syms []Symbol
	for k := range fns {
		syms = append(syms, Symbol{Addr: &fns[k], Name: fmt.Sprintf("f%d", k)})
	}
	require.NoError(t, Resolve(h, syms))
	a := func(i int) uintptr { return uintptr(1000 + 17*i) }
	want := func(k int) uintptr {
		if k == 0 {
			return 42
		}
		var s uintptr
		for i := 1; i <= k; i++ {
			s += uintptr(i) * a(i)
		}
		return s
	}
	got := []uintptr{
		Call0(fns[0]),
		Call1(fns[1], a(1)),
		Call2(fns[2], a(1), a(2)),
		Call3(fns[3], a(1), a(2), a(3)),
		Call4(fns[4], a(1), a(2), a(3), a(4)),
		Call5(fns[5], a(1), a(2), a(3), a(4), a(5)),
		Call6(fns[6], a(1), a(2), a(3), a(4), a(5), a(6)),
		Call7(fns[7], a(1), a(2), a(3), a(4), a(5), a(6), a(7)),
		Call8(fns[8], a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8)),
		Call9(fns[9], a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8), a(9)),
		Call10(fns[10], a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8), a(9), a(10)),
		Call11(fns[11], a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8), a(9), a(10), a(11)),
		Call12(fns[12], a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8), a(9), a(10), a(11), a(12)),
	}
	for k, g := range got {
		require.Equal(t, want(k), g, "Call%d", k)
	}
	// The purego path, which platforms without the trampoline take.
	for k := range fns {
		f := frame{fn: fns[k], n: uintptr(k)}
		for i := range k {
			f.a[i] = a(i + 1)
		}
		require.Equal(t, want(k), invokePurego(&f), "invokePurego with %d arguments", k)
	}
}

func TestCallAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items, so the pooled blocks are allocated afresh")
	}
	var strlen, memset uintptr
	_, _, err := OpenFirst([]string{"libc.so.6"}, func(h uintptr) error {
		return Resolve(h, []Symbol{{Addr: &strlen, Name: "strlen"}, {Addr: &memset, Name: "memset"}})
	})
	require.NoError(t, err)
	buf := make([]byte, 64)
	var n uintptr
	allocs := testing.AllocsPerRun(100, func() {
		Call3(memset, uintptr(unsafe.Pointer(&buf[0])), 'x', 10)
		n = Call1(strlen, uintptr(unsafe.Pointer(&buf[0])))
	})
	require.Equal(t, uintptr(10), n, "memset wrote ten bytes and strlen counted them")
	require.Zero(t, allocs)
}

// BenchmarkCallOverhead compares a call through Call1 with the same call
// through invokePurego (purego.SyscallN with a pooled argument block, the
// path Call1 took before it had a trampoline) on libc's labs, a function
// that costs next to nothing, so the figures are the crossing's cost. The
// ratio is Call1's ns over purego's in the same run.
func BenchmarkCallOverhead(b *testing.B) {
	var labs uintptr
	_, _, err := OpenFirst([]string{"libc.so.6"}, func(h uintptr) error {
		return Resolve(h, []Symbol{{Addr: &labs, Name: "labs"}})
	})
	require.NoError(b, err)
	seven := int64(-7)
	neg := uintptr(seven)
	ways := []struct {
		name string
		call func() uintptr
	}{
		{"Call1", func() uintptr { return Call1(labs, neg) }},
		{"purego", func() uintptr {
			f := frame{fn: labs, n: 1, a: [maxCallArgs]uintptr{neg}}
			return invokePurego(&f)
		}},
	}
	const n = 200000
	ns := make([]float64, len(ways))
	for range b.N {
		for i, w := range ways {
			start := time.Now()
			for range n {
				if w.call() != 7 {
					b.Fatal(w.name, ": labs(-7) is not 7")
				}
			}
			ns[i] += float64(time.Since(start).Nanoseconds()) / n
		}
	}
	for i, w := range ways {
		b.ReportMetric(ns[i]/float64(b.N), w.name+"-ns")
	}
	b.ReportMetric(ns[0]/ns[1], "ratio")
	b.ReportMetric(0, "ns/op")
}
