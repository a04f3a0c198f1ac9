package vulkan

// The examples' GLSL compute shaders compile to the SPIR-V committed beside
// them; run `go generate ./backends/vulkan` after editing a .comp file.
//go:generate glslangValidator -V --quiet ../../examples/vadd/vadd.comp -o ../../examples/vadd/vadd.spv
//go:generate glslangValidator -V --quiet ../../examples/unary/unary.comp -o ../../examples/unary/unary.spv
//go:generate glslangValidator -V --quiet ../../examples/matmul/matmul.comp -o ../../examples/matmul/matmul.spv
//go:generate glslangValidator -V --quiet testdata/copy.comp -o testdata/copy.spv
//go:generate glslangValidator -V --quiet testdata/empty.comp -o testdata/empty.spv
