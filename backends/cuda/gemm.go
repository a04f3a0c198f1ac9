package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/backends/driver"
	"github.com/zyxtt/zyxtt/internal/dl"
)

// cuBLAS enums.
const (
	cublasOpN = 0
	cublasOpT = 1

	cudaR32F  = 0
	cudaR64F  = 1
	cudaR16F  = 2
	cudaR16BF = 14

	cublasCompute32F         = 68
	cublasCompute32FFastTF32 = 77
	cublasCompute64F         = 70
)

// blasAPI holds cuBLAS's entry points.
type blasAPI struct {
	lib                                                      library
	create, destroy, setStream, gemmEx, gemmStridedBatchedEx uintptr
	getVersion                                               uintptr
}

// blasLib is cuBLAS, loaded on the first GEMM program.
var blasLib dl.Lazy[*blasAPI]

var cublasSonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}

func loadCUBLAS(explicit string) (*blasAPI, error) {
	return blasLib.Load(func() (*blasAPI, error) {
		b := &blasAPI{}
		lib, err := openLibrary("cuBLAS", toolkitCandidates(explicit, "libcublas", cublasSonames, libDirs()), func(h uintptr) error {
			return entryPoints(h, []dl.Symbol{
				{Addr: &b.create, Name: "cublasCreate_v2"},
				{Addr: &b.destroy, Name: "cublasDestroy_v2"},
				{Addr: &b.setStream, Name: "cublasSetStream_v2"},
				{Addr: &b.gemmEx, Name: "cublasGemmEx"},
				{Addr: &b.gemmStridedBatchedEx, Name: "cublasGemmStridedBatchedEx"},
				{Addr: &b.getVersion, Name: "cublasGetVersion_v2"},
			})
		})
		if err != nil {
			return nil, err
		}
		b.lib = lib
		return b, nil
	})
}

//go:uintptrescapes
func (b *blasAPI) call(fn uintptr, args ...uintptr) int32 {
	r, _, _ := purego.SyscallN(fn, args...)
	return int32(r)
}

// blasStatusName names a cublasStatus_t.
func blasStatusName(s int32) string {
	switch s {
	case 1:
		return "CUBLAS_STATUS_NOT_INITIALIZED"
	case 3:
		return "CUBLAS_STATUS_ALLOC_FAILED"
	case 7:
		return "CUBLAS_STATUS_INVALID_VALUE"
	case 8:
		return "CUBLAS_STATUS_ARCH_MISMATCH"
	case 11:
		return "CUBLAS_STATUS_MAPPING_ERROR"
	case 13:
		return "CUBLAS_STATUS_EXECUTION_FAILED"
	case 14:
		return "CUBLAS_STATUS_INTERNAL_ERROR"
	case 15:
		return "CUBLAS_STATUS_NOT_SUPPORTED"
	case 16:
		return "CUBLAS_STATUS_LICENSE_ERROR"
	}
	return "cublasStatus " + strconv.Itoa(int(s))
}

func blasSentinel(s int32) error {
	switch s {
	case 3:
		return driver.ErrOutOfMemory
	case 7:
		return driver.ErrInvalidArgument
	case 8, 15:
		return driver.ErrUnsupported
	}
	return errors.New("cuBLAS error")
}

// blasHandle is a device's cuBLAS handle, bound to its stream.
type blasHandle struct {
	api    *blasAPI
	handle uintptr
}

func (h *blasHandle) destroy() {
	if h != nil && h.handle != 0 {
		h.api.call(h.api.destroy, h.handle)
		h.handle = 0
	}
}

// blasFor returns the device's handle, made on first use; the context must
// be current.
func (d *Device) blasFor() (*blasHandle, error) {
	d.blasOnce.Do(func() {
		api, err := loadCUBLAS(d.cfg.CUBLAS)
		if err != nil {
			d.blasErr = &driver.Error{Backend: Name, Op: "gemm", Native: err.Error(),
				Err: fmt.Errorf("%w: cuBLAS is needed for GEMM programs", driver.ErrUnsupported)}
			return
		}
		h := &blasHandle{api: api}
		if s := api.call(api.create, uintptr(unsafe.Pointer(&h.handle))); s != 0 {
			d.blasErr = &driver.Error{Backend: Name, Op: "cublasCreate_v2", Native: blasStatusName(s), Err: blasSentinel(s)}
			return
		}
		if s := api.call(api.setStream, h.handle, d.stream); s != 0 {
			h.destroy()
			d.blasErr = &driver.Error{Backend: Name, Op: "cublasSetStream_v2", Native: blasStatusName(s), Err: blasSentinel(s)}
			return
		}
		d.blas = h
	})
	return d.blas, d.blasErr
}

// gemmCall is one cuBLAS call in cuBLAS's column-major terms. The program's
// row-major C = op(A)·op(B) is, read column-major, Cᵀ = op(B)ᵀ·op(A)ᵀ: the
// operands swap, the transpose flags stay with their operands, m and n swap,
// and the leading dimensions are the row-major ones unchanged.
type gemmCall struct {
	transA, transB int // cuBLAS's first and second operand
	m, n, k        int64
	lda, ldb, ldc  int64
	strideA        int64 // cuBLAS's first operand (the program's B)
	strideB        int64 // cuBLAS's second operand (the program's A)
	strideC        int64
	batch          int64
	first, second  int // program param ordinals of cuBLAS's A and B
}

// gemmShape is a GEMM variant evaluated against one launch's args, in the
// program's row-major terms.
type gemmShape struct {
	m, n, k, batch            int64
	lda, ldb, ldc             int64
	strideA, strideB, strideC int64
	transA, transB            bool
}

func evalDim(name string, g *driver.GwsDim, def int64, args []driver.LaunchArg) (int64, error) {
	if g == nil {
		return def, nil
	}
	v, err := g.Eval(args)
	if err != nil {
		return 0, fmt.Errorf("%w: gemm %s: %w", driver.ErrInvalidArgument, name, err)
	}
	if v > math.MaxInt32 && name != "stride_a" && name != "stride_b" && name != "stride_c" {
		return 0, fmt.Errorf("%w: gemm %s = %d exceeds cuBLAS's 32-bit range", driver.ErrInvalidArgument, name, v)
	}
	if v > math.MaxInt64 {
		return 0, fmt.Errorf("%w: gemm %s = %d overflows", driver.ErrInvalidArgument, name, v)
	}
	return int64(v), nil
}

// evalGEMM evaluates the variant's sizes, filling tight defaults.
func evalGEMM(g *driver.GEMMVariant, args []driver.LaunchArg) (gemmShape, error) {
	var s gemmShape
	var err error
	if s.m, err = evalDim("m", &g.M, 0, args); err != nil {
		return s, err
	}
	if s.n, err = evalDim("n", &g.N, 0, args); err != nil {
		return s, err
	}
	if s.k, err = evalDim("k", &g.K, 0, args); err != nil {
		return s, err
	}
	if s.batch, err = evalDim("batch", g.Batch, 1, args); err != nil {
		return s, err
	}
	s.transA, s.transB = g.TransA, g.TransB
	aCols, bCols := s.k, s.n // row-major widths of the stored A and B
	if g.TransA {
		aCols = s.m
	}
	if g.TransB {
		bCols = s.k
	}
	if s.lda, err = evalDim("lda", g.LdA, aCols, args); err != nil {
		return s, err
	}
	if s.ldb, err = evalDim("ldb", g.LdB, bCols, args); err != nil {
		return s, err
	}
	if s.ldc, err = evalDim("ldc", g.LdC, s.n, args); err != nil {
		return s, err
	}
	if s.strideA, err = evalDim("stride_a", g.StrideA, s.m*s.k, args); err != nil {
		return s, err
	}
	if s.strideB, err = evalDim("stride_b", g.StrideB, s.k*s.n, args); err != nil {
		return s, err
	}
	if s.strideC, err = evalDim("stride_c", g.StrideC, s.m*s.n, args); err != nil {
		return s, err
	}
	switch {
	case s.lda < max(aCols, 1):
		return s, fmt.Errorf("%w: gemm lda %d < %d", driver.ErrInvalidArgument, s.lda, aCols)
	case s.ldb < max(bCols, 1):
		return s, fmt.Errorf("%w: gemm ldb %d < %d", driver.ErrInvalidArgument, s.ldb, bCols)
	case s.ldc < max(s.n, 1):
		return s, fmt.Errorf("%w: gemm ldc %d < %d", driver.ErrInvalidArgument, s.ldc, s.n)
	}
	return s, nil
}

// elems is how many elements a batch of row-major rows×cols matrices with
// leading dimension ld and the given stride spans; zero when empty.
func elems(batch, rows, cols, ld, stride int64) (int64, bool) {
	if batch == 0 || rows == 0 || cols == 0 {
		return 0, true
	}
	hi1, last := mul64(batch-1, stride)
	hi2, inner := mul64(rows-1, ld)
	if hi1 || hi2 {
		return 0, false
	}
	total := last + inner + cols
	if total < 0 {
		return 0, false
	}
	return total, true
}

func mul64(a, b int64) (bool, int64) {
	if a == 0 || b == 0 {
		return false, 0
	}
	p := a * b
	return p/b != a || p < 0, p
}

// need is how many elements each operand must hold.
func (s gemmShape) need() (a, b, c int64, ok bool) {
	aRows, aCols := s.m, s.k
	if s.transA {
		aRows, aCols = s.k, s.m
	}
	bRows, bCols := s.k, s.n
	if s.transB {
		bRows, bCols = s.n, s.k
	}
	var oka, okb, okc bool
	a, oka = elems(s.batch, aRows, aCols, s.lda, s.strideA)
	b, okb = elems(s.batch, bRows, bCols, s.ldb, s.strideB)
	c, okc = elems(s.batch, s.m, s.n, s.ldc, s.strideC)
	return a, b, c, oka && okb && okc
}

// columnMajor maps the row-major shape onto the cuBLAS call.
func (s gemmShape) columnMajor(g *driver.GEMMVariant) gemmCall {
	op := func(t bool) int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	return gemmCall{
		transA: op(s.transB), transB: op(s.transA),
		m: s.n, n: s.m, k: s.k,
		lda: s.ldb, ldb: s.lda, ldc: s.ldc,
		strideA: s.strideB, strideB: s.strideA, strideC: s.strideC,
		batch: s.batch,
		first: g.B, second: g.A,
	}
}

// gemmTypes are cuBLAS's data and compute types for a variant.
func gemmTypes(g *driver.GEMMVariant) (dataType, computeType int, scalarF64 bool, err error) {
	switch g.Compute {
	case "", "default":
	case "tf32":
		if g.DType != driver.F32 {
			return 0, 0, false, fmt.Errorf("%w: tf32 compute needs f32 data, not %s", driver.ErrUnsupported, g.DType)
		}
		return cudaR32F, cublasCompute32FFastTF32, false, nil
	default:
		return 0, 0, false, fmt.Errorf("%w: gemm compute %q (want \"\" or \"tf32\")", driver.ErrUnsupported, g.Compute)
	}
	switch g.DType {
	case driver.F32:
		return cudaR32F, cublasCompute32F, false, nil
	case driver.F64:
		return cudaR64F, cublasCompute64F, true, nil
	case driver.BF16:
		return cudaR16BF, cublasCompute32F, false, nil
	case driver.F16:
		return cudaR16F, cublasCompute32F, false, nil
	}
	return 0, 0, false, fmt.Errorf("%w: gemm dtype %s (cuBLAS takes f32, f64, bf16, f16)", driver.ErrUnsupported, g.DType)
}

// gemmExec runs a GEMM variant through cuBLAS.
type gemmExec struct {
	launcher
	dataType, compute int
	elemSize          int64

	scalars *cBlock // alpha at 0, beta at 8 (cuBLAS reads them at the call: host pointer mode)
}

func (e *gemmExec) endRun() {
	if e.runs.end() {
		e.runs.unload(e.unload)
	}
}

func (d *Device) compileGEMM(p *driver.Program) (driver.Executable, error) {
	g := p.GEMM()
	dt, ct, f64, err := gemmTypes(g)
	if err != nil {
		return nil, &driver.Error{Backend: Name, Op: "compile gemm", Err: err}
	}
	for _, ord := range []int{g.A, g.B, g.C} {
		if p.Params[ord].DType != g.DType {
			return nil, driver.Errorf(Name, "compile gemm", driver.ErrInvalidArgument,
				"param %d (%s) is %s; the gemm is %s", ord, p.Params[ord].Name, p.Params[ord].DType, g.DType)
		}
	}
	if err := d.run("cublasCreate_v2", func() error { _, err := d.blasFor(); return err }); err != nil {
		return nil, err
	}
	sc, err := newCBlock(16)
	if err != nil {
		return nil, err
	}
	if f64 {
		binary.LittleEndian.PutUint64(sc.mem[0:], math.Float64bits(g.Alpha))
		binary.LittleEndian.PutUint64(sc.mem[8:], math.Float64bits(g.Beta))
	} else {
		binary.LittleEndian.PutUint32(sc.mem[0:], math.Float32bits(float32(g.Alpha)))
		binary.LittleEndian.PutUint32(sc.mem[8:], math.Float32bits(float32(g.Beta)))
	}
	e := &gemmExec{launcher: launcher{dev: d, prog: p, what: "gemm"}, dataType: dt, compute: ct, elemSize: int64(g.DType.Size()), scalars: sc}
	e.prepareRun = e.prepare
	return e, nil
}

// prepare checks a GEMM's args against its shape and makes its event.
func (e *gemmExec) prepare(ctx context.Context, l *driver.Launch, timed bool) (*event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, g := e.dev, e.prog.GEMM()
	// A released program or a closed device is ErrClosed before the args
	// are looked at: a closed device's buffers are gone.
	if err := d.usable("gemm"); err != nil {
		return nil, fmt.Errorf("%s: gemm %q: %w", d.name, e.prog.Name, err)
	}
	if e.runs.isReleased() {
		return nil, driver.Errorf(Name, "gemm", driver.ErrClosed, "program %q was released", e.prog.Name)
	}
	args, sizes := l.Args, l.Sizes
	s, err := evalGEMM(g, args)
	if err != nil {
		return nil, &driver.Error{Backend: Name, Op: "gemm", Err: err}
	}
	na, nb, nc, ok := s.need()
	if !ok {
		return nil, driver.Errorf(Name, "gemm", driver.ErrInvalidArgument, "operand extents overflow")
	}
	for _, c := range []struct {
		ord  int
		need int64
	}{{g.A, na}, {g.B, nb}, {g.C, nc}} {
		if have := sizes[c.ord] / e.elemSize; have < c.need {
			return nil, driver.Errorf(Name, "gemm", driver.ErrInvalidArgument,
				"param %d (%s) holds %d elements; the gemm reads %d", c.ord, e.prog.Params[c.ord].Name, have, c.need)
		}
	}
	call := s.columnMajor(g)
	empty := s.m == 0 || s.n == 0 || s.batch == 0
	if !empty && call.batch > math.MaxInt32 {
		return nil, driver.Errorf(Name, "gemm", driver.ErrInvalidArgument, "batch %d exceeds cuBLAS's range", call.batch)
	}
	ev := d.newEvent(streamCompute, ctx, "gemm", e.prog.Name)
	o := ev.op
	var ptrs [3]uintptr // the program's A, B, C
	for i, ord := range []int{g.A, g.B, g.C} {
		b, err := d.pool.retain("gemm", args[ord].Buffer)
		if err != nil {
			o.holds.drop()
			return nil, err
		}
		o.holds.add(d.pool, args[ord].Buffer)
		o.addAccess(b, ord == g.C)
		ptrs[i] = uintptr(b.ptr)
	}
	if !e.runs.begin(e.unload) {
		o.holds.drop()
		return nil, driver.Errorf(Name, "gemm", driver.ErrClosed, "program %q was released", e.prog.Name)
	}
	o.holds.run = e
	if empty {
		return ev, nil
	}
	o.issue = func(st uintptr) error { return e.issue(st, call, ptrs, timed) }
	return ev, nil
}

// issue makes the cuBLAS call on the compute stream (the handle's stream;
// the submission lock is held and the context current).
func (e *gemmExec) issue(st uintptr, call gemmCall, ptrs [3]uintptr, timed bool) error {
	d, drv := e.dev, e.dev.drv
	d.sweepPins() // cuBLAS may allocate device memory
	h, err := d.blasFor()
	if err != nil {
		return err
	}
	if timed {
		if err := e.events.create(d); err != nil {
			return err
		}
		if r := drv.call(drv.eventRecord, e.events[0], st); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
	}
	// cuBLAS handles are not safe for concurrent use.
	d.blasMu.Lock()
	status, op := e.call(h, call, ptrs)
	d.blasMu.Unlock()
	if status != 0 {
		return &driver.Error{Backend: Name, Op: op, Native: blasStatusName(status), Err: blasSentinel(status)}
	}
	if timed {
		if r := drv.call(drv.eventRecord, e.events[1], st); r != cudaSuccess {
			return d.fail("cuEventRecord", r)
		}
	}
	return nil
}

// call issues cublasGemmEx, or cublasGemmStridedBatchedEx for a batch;
// ptrs are the program's A, B and C.
func (e *gemmExec) call(h *blasHandle, c gemmCall, ptrs [3]uintptr) (int32, string) {
	g := e.prog.GEMM()
	byOrd := func(ord int) uintptr {
		switch ord {
		case g.A:
			return ptrs[0]
		case g.B:
			return ptrs[1]
		}
		return ptrs[2]
	}
	alpha, beta := e.scalars.addr(0), e.scalars.addr(8)
	a, b, cc := byOrd(c.first), byOrd(c.second), ptrs[2]
	dt := uintptr(e.dataType)
	algo := ^uintptr(0) // CUBLAS_GEMM_DEFAULT (-1) as a C int: the callee reads the low 32 bits
	if c.batch == 1 {
		return h.api.call(h.api.gemmEx, h.handle, uintptr(c.transA), uintptr(c.transB),
			uintptr(c.m), uintptr(c.n), uintptr(c.k),
			alpha, a, dt, uintptr(c.lda), b, dt, uintptr(c.ldb),
			beta, cc, dt, uintptr(c.ldc), uintptr(e.compute), algo), "cublasGemmEx"
	}
	return h.api.call(h.api.gemmStridedBatchedEx, h.handle, uintptr(c.transA), uintptr(c.transB),
		uintptr(c.m), uintptr(c.n), uintptr(c.k),
		alpha, a, dt, uintptr(c.lda), uintptr(c.strideA), b, dt, uintptr(c.ldb), uintptr(c.strideB),
		beta, cc, dt, uintptr(c.ldc), uintptr(c.strideC), uintptr(c.batch), uintptr(e.compute), algo), "cublasGemmStridedBatchedEx"
}

// Release frees the GEMM once the runs pending on it have ended.
func (e *gemmExec) Release() error { return e.runs.release(e.unload) }

func (e *gemmExec) unload() error {
	if e.dev.usable("release") == nil {
		_ = e.dev.run("release", func() error { e.events.destroy(e.dev); return nil })
	}
	return e.scalars.free()
}
