package ttruntime_test

import "github.com/zyxtt/zyxtt/ttruntime"

// Small valid v2 programs for the client tests.

// oneKernelProgram is one data-movement kernel on core (0, 0).
func oneKernelProgram(name, src string) ttruntime.CompileRequest {
	k := ttruntime.Kernel{Name: "reader", Processor: ttruntime.ProcRiscv0, Cores: ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 0, 0)}}
	k.SetSource(src)
	return ttruntime.CompileRequest{Name: name, Kernels: []ttruntime.Kernel{k}}
}

// oneGroupProgram is a reader, compute and writer kernel on core (0, 0)
// with one circular buffer.
func oneGroupProgram(name, reader, compute, writer string) ttruntime.CompileRequest {
	core := ttruntime.CoreRangeSet{ttruntime.Rect(0, 0, 0, 0)}
	kernel := func(n, proc, src string) ttruntime.Kernel {
		k := ttruntime.Kernel{Name: n, Processor: proc, Cores: core}
		k.SetSource(src)
		if proc == ttruntime.ProcCompute {
			k.ComputeConfig = &ttruntime.ComputeConfig{MathFidelity: "HiFi4"}
		}
		return k
	}
	return ttruntime.CompileRequest{
		Name: name,
		Kernels: []ttruntime.Kernel{
			kernel("reader", ttruntime.ProcRiscv0, reader),
			kernel("compute", ttruntime.ProcCompute, compute),
			kernel("writer", ttruntime.ProcRiscv1, writer),
		},
		CBs: []ttruntime.CBConfig{{Cores: core, TotalBytes: 8192, Indices: []ttruntime.CBIndex{{Index: 0, Format: "Float32", PageBytes: 4096}}}},
	}
}
