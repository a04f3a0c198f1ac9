package backendtest

import "github.com/zyxtt/zyxtt/backends"

// Global, GlobalMut and Variable are a hand-written test program's params,
// one of each kind, of dtype dt: a buffer the kernel reads, a buffer it
// writes, and a scalar. With them a program states its params on one line.
func Global(name string, dt backends.DType) backends.Param {
	return backends.Param{Name: name, Kind: backends.Global, DType: dt}
}

// GlobalMut is a buffer param the kernel writes (see Global).
func GlobalMut(name string, dt backends.DType) backends.Param {
	return backends.Param{Name: name, Kind: backends.GlobalMut, DType: dt}
}

// Variable is a scalar param (see Global).
func Variable(name string, dt backends.DType) backends.Param {
	return backends.Param{Name: name, Kind: backends.Variable, DType: dt}
}
