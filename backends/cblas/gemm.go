//go:build darwin || freebsd || linux || netbsd

package cblas

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/zyxtt/zyxtt/backends/driver"
)

// shape is one launch's GEMM, evaluated and checked. Sizes are in elements.
type shape struct {
	m, n, k, batch             uint64
	lda, ldb, ldc              uint64
	strideA, strideB, strideC  uint64
	rowsA, colsA, rowsB, colsB uint64
	needA, needB, needC        uint64 // elements each buffer must hold
	transA, transB             bool
	alpha, beta                float64
	elemBytes                  uint64
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{driver.ErrInvalidArgument}, args...)...)
}

// planGEMM evaluates g's expressions from args and checks them against the
// operand buffer sizes (bytes, by param ordinal). Everything a CBLAS would
// reject, or read or write out of bounds, is an error here, before any
// call.
func planGEMM(g *driver.GEMMVariant, args []driver.LaunchArg, sizes []int64) (*shape, error) {
	eval := func(name string, d *driver.GwsDim, def uint64) (uint64, error) {
		if d == nil {
			return def, nil
		}
		v, err := d.Eval(args)
		if err != nil {
			return 0, invalid("gemm %s: %v", name, err)
		}
		return v, nil
	}
	s := &shape{transA: g.TransA, transB: g.TransB, alpha: g.Alpha, beta: g.Beta, elemBytes: uint64(g.DType.Size())}
	var err error
	if s.m, err = eval("m", &g.M, 0); err != nil {
		return nil, err
	}
	if s.n, err = eval("n", &g.N, 0); err != nil {
		return nil, err
	}
	if s.k, err = eval("k", &g.K, 0); err != nil {
		return nil, err
	}
	if s.batch, err = eval("batch", g.Batch, 1); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		name string
		val  uint64
	}{{"m", s.m}, {"n", s.n}, {"k", s.k}} {
		if v.val > math.MaxInt32 {
			return nil, invalid("gemm %s = %d exceeds the CBLAS int range", v.name, v.val)
		}
	}
	// Row-major storage: op(A) is m×k, so A is m×k, or k×m when transposed.
	s.rowsA, s.colsA = s.m, s.k
	if s.transA {
		s.rowsA, s.colsA = s.k, s.m
	}
	s.rowsB, s.colsB = s.k, s.n
	if s.transB {
		s.rowsB, s.colsB = s.n, s.k
	}
	if s.lda, err = eval("lda", g.LdA, max(1, s.colsA)); err != nil {
		return nil, err
	}
	if s.ldb, err = eval("ldb", g.LdB, max(1, s.colsB)); err != nil {
		return nil, err
	}
	if s.ldc, err = eval("ldc", g.LdC, max(1, s.n)); err != nil {
		return nil, err
	}
	for _, v := range []struct {
		name     string
		ld, cols uint64
	}{{"lda", s.lda, s.colsA}, {"ldb", s.ldb, s.colsB}, {"ldc", s.ldc, s.n}} {
		if v.ld < max(1, v.cols) {
			return nil, invalid("gemm %s = %d is less than the %d columns of a stored row", v.name, v.ld, max(1, v.cols))
		}
		if v.ld > math.MaxInt32 {
			return nil, invalid("gemm %s = %d exceeds the CBLAS int range", v.name, v.ld)
		}
	}
	matA, okA := mul(s.rowsA, s.lda)
	matB, okB := mul(s.rowsB, s.ldb)
	matC, okC := mul(s.m, s.ldc)
	if !okA || !okB || !okC {
		return nil, invalid("gemm matrix sizes overflow")
	}
	if s.strideA, err = eval("stride_a", g.StrideA, matA); err != nil {
		return nil, err
	}
	if s.strideB, err = eval("stride_b", g.StrideB, matB); err != nil {
		return nil, err
	}
	if s.strideC, err = eval("stride_c", g.StrideC, matC); err != nil {
		return nil, err
	}
	if s.batch > 1 && s.strideC < matC && s.m > 0 && s.n > 0 {
		return nil, invalid("gemm stride_c = %d is less than one C matrix (%d elements): batches would overwrite each other", s.strideC, matC)
	}
	var ok bool
	if s.needA, ok = extent(s.batch, s.strideA, s.rowsA, s.lda, s.colsA); !ok {
		return nil, invalid("gemm A extent overflows")
	}
	if s.needB, ok = extent(s.batch, s.strideB, s.rowsB, s.ldb, s.colsB); !ok {
		return nil, invalid("gemm B extent overflows")
	}
	if s.needC, ok = extent(s.batch, s.strideC, s.m, s.ldc, s.n); !ok {
		return nil, invalid("gemm C extent overflows")
	}
	for _, op := range []struct {
		name string
		ord  int
		need uint64
	}{{"a", g.A, s.needA}, {"b", g.B, s.needB}, {"c", g.C, s.needC}} {
		have := uint64(sizes[op.ord]) / s.elemBytes
		if op.need > have {
			return nil, invalid("gemm operand %s (param %d) needs %d elements for m=%d n=%d k=%d batch=%d, its buffer holds %d",
				op.name, op.ord, op.need, s.m, s.n, s.k, s.batch, have)
		}
	}
	return s, nil
}

func mul(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

// extent is how many elements a batch of rows×cols matrices with leading
// dimension ld and batch stride spans: the last element's index plus one.
func extent(batch, stride, rows, ld, cols uint64) (uint64, bool) {
	if batch == 0 || rows == 0 || cols == 0 {
		return 0, true
	}
	last, ok1 := mul(batch-1, stride)
	inMat, ok2 := mul(rows-1, ld)
	sum, c1 := bits.Add64(last, inMat, 0)
	sum, c2 := bits.Add64(sum, cols, 0)
	return sum, ok1 && ok2 && c1 == 0 && c2 == 0
}

// executable is a checked GEMM program.
type executable struct {
	dev  *Device
	prog *driver.Program
	// released: the program holds nothing native, so a launch already
	// running when it is released simply finishes.
	released atomic.Bool
}

// Launch is Submit followed by a wait for its event.
func (e *executable) Launch(ctx context.Context, l *driver.Launch) error {
	ev, err := e.Submit(ctx, l)
	return driver.Wait(ctx, ev, err)
}

// LaunchTimed runs the GEMM once and returns the wall time of the CBLAS
// calls. Calls are queued one after another, so it has the library's
// threads to itself.
func (e *executable) LaunchTimed(ctx context.Context, l *driver.Launch) (time.Duration, error) {
	var elapsed time.Duration
	ev, err := e.submit(ctx, l, nil, &elapsed)
	if err := driver.Wait(ctx, ev, err); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// Submit checks the operands' shapes, holds them, and queues the GEMM on
// the device's queue after the events in after.
func (e *executable) Submit(ctx context.Context, l *driver.Launch, after ...driver.Event) (driver.Event, error) {
	return e.submit(ctx, l, after, nil)
}

func launchErr(err error) error { return &driver.Error{Backend: BackendName, Op: "launch", Err: err} }

func (e *executable) submit(ctx context.Context, l *driver.Launch, after []driver.Event, elapsed *time.Duration) (driver.Event, error) {
	if e.released.Load() || e.dev.isClosed() {
		return nil, launchErr(fmt.Errorf("%w: program %q was released or its device closed", driver.ErrClosed, e.prog.Name))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g := e.prog.GEMM()
	pool := e.dev.pool
	args := l.Args
	s, err := planGEMM(g, args, l.Sizes)
	if err != nil {
		return nil, launchErr(err)
	}
	ids := [3]driver.BufferID{args[g.A].Buffer, args[g.B].Buffer, args[g.C].Buffer}
	if ids[2] == ids[0] || ids[2] == ids[1] {
		return nil, launchErr(invalid("gemm output c is the same buffer as an input"))
	}
	// Hold the operands so a Release cannot free them while the call is
	// queued or running.
	var ptrs [3]uintptr
	held := ids[:0:0]
	drop := func() {
		for _, id := range held {
			_ = pool.Release(id)
		}
		held = nil
	}
	for i, id := range ids {
		if err := pool.Retain(id); err != nil {
			drop()
			return nil, launchErr(err)
		}
		held = append(held, id)
		mem, err := pool.Bytes(id)
		if err != nil {
			drop()
			return nil, launchErr(err)
		}
		ptrs[i] = uintptr(unsafe.Pointer(unsafe.SliceData(mem)))
	}
	ev, err := e.dev.queue.Submit(ctx, after, func() error {
		start := time.Now()
		e.call(s, ptrs)
		took := time.Since(start)
		drop()
		if elapsed != nil {
			*elapsed = took
		}
		driver.Debug(driver.DebugPerf, "cblas: gemm", "program", e.prog.Name, "m", s.m, "n", s.n, "k", s.k, "batch", s.batch, "elapsed", took)
		return nil
	}, drop)
	if err != nil {
		drop()
		return nil, launchErr(err)
	}
	return ev, nil
}

// call makes one CBLAS call per batch entry. The operands live in shm
// mapped outside the Go heap, so their addresses stay valid across calls.
func (e *executable) call(s *shape, ptrs [3]uintptr) {
	if s.m == 0 || s.n == 0 {
		return // C has no elements; CBLAS would return at once
	}
	ta, tb := int32(cblasNoTrans), int32(cblasNoTrans)
	if s.transA {
		ta = cblasTrans
	}
	if s.transB {
		tb = cblasTrans
	}
	m, n, k := int32(s.m), int32(s.n), int32(s.k)
	lda, ldb, ldc := int32(s.lda), int32(s.ldb), int32(s.ldc)
	es := uintptr(s.elemBytes)
	for i := uint64(0); i < s.batch; i++ {
		a := ptrs[0] + uintptr(i*s.strideA)*es
		b := ptrs[1] + uintptr(i*s.strideB)*es
		c := ptrs[2] + uintptr(i*s.strideC)*es
		if s.elemBytes == 4 {
			e.dev.lib.sgemm(cblasRowMajor, ta, tb, m, n, k, float32(s.alpha), a, lda, b, ldb, float32(s.beta), c, ldc)
		} else {
			e.dev.lib.dgemm(cblasRowMajor, ta, tb, m, n, k, s.alpha, a, lda, b, ldb, s.beta, c, ldc)
		}
	}
}

// Release forgets the program. Releasing again does nothing.
func (e *executable) Release() error {
	e.released.Store(true)
	return nil
}
