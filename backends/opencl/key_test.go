package opencl

import (
	"testing"

	"github.com/zyxtt/zyxtt/backends/backendtest"
)

// Every input of a build changes the binary's key: the source, the options
// and the device (name, driver, platform and device versions).
func TestCacheKeyCoversInputs(t *testing.T) {
	type input struct{ source, options, tag string }
	key := func(in input) string { return (&device{cacheTag: in.tag}).cacheKey(in.source, in.options) }
	ref := input{"kernel void k() {}", "-cl-fast-relaxed-math", "pocl\x003.1\x00OpenCL 3.0\x00OpenCL 3.0"}
	mutations := map[string]func(*input){
		"source":          func(in *input) { in.source = "kernel void k() { }" },
		"options":         func(in *input) { in.options = "" },
		"device":          func(in *input) { in.tag = "other\x003.1\x00OpenCL 3.0\x00OpenCL 3.0" },
		"source/options":  func(in *input) { in.source, in.options = in.source+"-cl", "-fast-relaxed-math" },
		"options/device":  func(in *input) { in.options, in.tag = in.options+"pocl", in.tag[4:] },
		"driver versions": func(in *input) { in.tag = "pocl\x003.2\x00OpenCL 3.0\x00OpenCL 3.0" },
	}
	backendtest.DistinctKeys(t, ref, key, mutations)
}
