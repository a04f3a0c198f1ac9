package backendtest

import (
	"github.com/zyxtt/zyxtt/backends/driver"
)

// Global, GlobalMut and Variable are a hand-written test program's params,
// one of each kind, of dtype dt: a buffer the kernel reads, a buffer it
// writes, and a scalar. With them a program states its params on one line.
func Global(name string, dt driver.DType) driver.Param {
	return driver.Param{Name: name, Kind: driver.Global, DType: dt}
}

// GlobalMut is a buffer param the kernel writes (see Global).
func GlobalMut(name string, dt driver.DType) driver.Param {
	return driver.Param{Name: name, Kind: driver.GlobalMut, DType: dt}
}

// Variable is a scalar param (see Global).
func Variable(name string, dt driver.DType) driver.Param {
	return driver.Param{Name: name, Kind: driver.Variable, DType: dt}
}

// CVariant is a C variant with an empty kernel: what a program needs to
// compile on the dummy device, which runs nothing.
func CVariant() driver.Variant {
	return driver.Variant{Format: driver.FormatC, Code: &driver.SourceVariant{Source: "void k(void) {}\n", Entry: "k"}}
}
