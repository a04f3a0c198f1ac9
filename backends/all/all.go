// Package all registers every zyx-tt backend: import it for its side
// effects when a program should see every device the host has.
//
//	import _ "github.com/zyxtt/zyxtt/backends/all"
package all

import (
	// Each import registers one backend in its init.
	_ "github.com/zyxtt/zyxtt/backends/c"
	_ "github.com/zyxtt/zyxtt/backends/cblas"
	_ "github.com/zyxtt/zyxtt/backends/cuda"
	_ "github.com/zyxtt/zyxtt/backends/dummy"
	_ "github.com/zyxtt/zyxtt/backends/opencl"
	_ "github.com/zyxtt/zyxtt/backends/vulkan"
	_ "github.com/zyxtt/zyxtt/tt"
)
