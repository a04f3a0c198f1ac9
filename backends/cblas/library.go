//go:build darwin || freebsd || linux || netbsd

package cblas

import (
	"fmt"

	"github.com/ebitengine/purego"

	"github.com/zyxtt/zyxtt/internal/dl"
)

// DefaultLibraries are the sonames tried, in order, after the configured
// library.
var DefaultLibraries = []string{"libopenblas.so.0", "libblis.so.4", "libcblas.so.3", "libblas.so.3"}

// CBLAS enumerations (cblas.h).
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// library is a loaded CBLAS. The GEMM entry points take float scalars
// between integer arguments, which purego.SyscallN cannot place in the
// right registers (it passes every argument positionally), so they are
// bound with purego.RegisterFunc, which follows the C calling convention.
// A GEMM call costs microseconds of this binding against milliseconds of
// arithmetic.
type library struct {
	path   string
	handle uintptr

	sgemm func(layout, transA, transB, m, n, k int32, alpha float32, a uintptr, lda int32,
		b uintptr, ldb int32, beta float32, c uintptr, ldc int32)
	dgemm func(layout, transA, transB, m, n, k int32, alpha float64, a uintptr, lda int32,
		b uintptr, ldb int32, beta float64, c uintptr, ldc int32)

	// Optional thread controls: OpenBLAS or BLIS.
	vendor     string // "OpenBLAS", "BLIS" or "CBLAS"
	setThreads func(n int)
	getThreads func() int
	config     string // openblas_get_config / bli_info_get_version_str
	core       string // openblas_get_corename
}

// loadLibrary opens the first candidate that loads and exports cblas_sgemm
// and cblas_dgemm. Every failure is kept, and all of them are the error
// when none works.
func loadLibrary(candidates []string) (*library, error) {
	var lib *library
	_, name, err := dl.OpenFirst(candidates, func(h uintptr) error {
		lib = &library{handle: h, vendor: "CBLAS"}
		return lib.bindGEMM()
	})
	if err != nil {
		return nil, err
	}
	lib.path = name
	lib.bindExtras()
	return lib, nil
}

// bindGEMM binds cblas_sgemm and cblas_dgemm.
func (l *library) bindGEMM() error {
	var sgemm, dgemm uintptr
	if err := dl.Resolve(l.handle, []dl.Symbol{{Addr: &sgemm, Name: "cblas_sgemm"}, {Addr: &dgemm, Name: "cblas_dgemm"}}); err != nil {
		return fmt.Errorf("loads but has no GEMM entry: not a CBLAS (a Fortran-only BLAS has no cblas_ symbols): %w", err)
	}
	purego.RegisterFunc(&l.sgemm, sgemm)
	purego.RegisterFunc(&l.dgemm, dgemm)
	return nil
}

// bindExtras binds the optional vendor functions that exist.
func (l *library) bindExtras() {
	if set, ok := optional[func(int32)](l.handle, "openblas_set_num_threads"); ok {
		l.vendor = "OpenBLAS"
		l.setThreads = func(n int) { set(int32(n)) }
	}
	if get, ok := optional[func() int32](l.handle, "openblas_get_num_threads"); ok {
		l.getThreads = func() int { return int(get()) }
	}
	if get, ok := optional[func() string](l.handle, "openblas_get_config"); ok {
		l.config = get()
	}
	if get, ok := optional[func() string](l.handle, "openblas_get_corename"); ok {
		l.core = get()
	}
	if l.vendor != "OpenBLAS" {
		if set, ok := optional[func(int64)](l.handle, "bli_thread_set_num_threads"); ok { // dim_t
			l.vendor = "BLIS"
			l.setThreads = func(n int) { set(int64(n)) }
		}
		if get, ok := optional[func() int64](l.handle, "bli_thread_get_num_threads"); ok {
			l.getThreads = func() int { return int(get()) }
		}
		if get, ok := optional[func() string](l.handle, "bli_info_get_version_str"); ok {
			l.config = "BLIS " + get()
		}
	}
}

// optional binds the C function name of the library at handle as an F;
// ok is false when the library has no such symbol.
func optional[F any](handle uintptr, name string) (f F, ok bool) {
	addr, err := purego.Dlsym(handle, name)
	if err != nil || addr == 0 {
		return f, false
	}
	purego.RegisterFunc(&f, addr)
	return f, true
}
