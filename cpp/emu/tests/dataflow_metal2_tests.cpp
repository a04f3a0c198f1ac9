// Metal 2.0 kernels on the emulator: the program's named resources become
// the generated args::, dfb::, sem:: and ta:: bindings (kernel_bindings.cpp)
// that the kernel reads unmodified, after the server's lowering
// (lower_bindings) and checks (check_program).
#include "emu.hpp"
#include "harness.hpp"
#include "validate.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

ProgramDesc bindings_program() {
  GroupProgram g;
  g.name = "metal2";
  g.params = {P("scale_var", "variable", "u32"), P("out", "global_mut", "u32")};
  g.reader.source = shared_kernel("metal2_bindings");
  // Per core: the named page and base, then one vararg.
  g.reader.runtime_args = {L("core_index"), L("core_index"), L("core_index")};
  g.reader.common_args = {L("param", 0), C(55)};
  g.reader.named_compile_args = {{"bias", C(7)}};
  g.cbs = {CB(3, "UInt32", 32, 2)};
  g.semaphores = {{0, 0}, {1, 5}};
  ProgramDesc d = one_group_program(g, 1, 2);
  // Distinct values per core: base 10 and 20, vararg 100 and 200.
  for (uint32_t c = 0; c < 2; c++) {
    auto& a = d.kernels[0].runtime_args[c].args;
    a[1].value = 10 * (c + 1), a[2].value = 100 * (c + 1);
  }
  d.buffers = {BufferDecl{1, dram_spec(32)}};
  d.cbs[0].indices[0].name = "scratch_cb";
  d.semaphores[0].name = "idle";
  d.semaphores[1].name = "go";
  KernelBindings& b = d.kernels[0].bindings;
  b.runtime_arg_names = {"page", "base"};
  b.common_arg_names = {"scale"};
  b.dfbs = {{"scratch", "scratch_cb"}};
  b.semaphores = {{"go", "go"}};
  b.tensors = {{"out", "out"}};
  return d;
}

void test_bindings_run(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  ProgramDesc d = lower_bindings(bindings_program());
  check_program(d, layer->describe());
  uint64_t out = layer->alloc(64, dram_spec(32), nullptr);
  uint64_t prog = layer->compile(d);
  layer->run(prog, {Val(3), Buf(out)}, false);
  auto v = download<uint32_t>(*layer, out, 16);
  for (uint32_t c = 0; c < 2; c++) {
    const uint32_t* w = &v[8 * c];
    CHECK_EQ(w[0], 10 * (c + 1) * 3 + 7);  // named runtime arg * named common arg (a param) + named compile arg
    CHECK_EQ(w[1], 100 * (c + 1));         // runtime vararg 0, after the named words
    CHECK_EQ(w[2], 55u);                   // common vararg 0, after the named word and the tensor address
    CHECK_EQ(w[3], 5u);                    // semaphore go's initial value
    CHECK_EQ(w[4], 3u);                    // dfb::scratch is CB 3
    CHECK_EQ(w[5], 1u);                    // sem::go is id 1
    CHECK_EQ(w[6], 32u);                   // ta::out's page size, from its accessor words
    CHECK_EQ(w[7], c);
  }
  layer->release(prog);
  layer->free(out);
}
ZYX_TEST(metal2, test_bindings_run);

// The generated text: tt-metal's namespaces and forms, tensor offsets after
// the kernel's own compile args, and nothing for a kernel without bindings.
void test_bindings_text(const std::string&) {
  ProgramDesc d = lower_bindings(bindings_program());
  const KernelDesc& k = d.kernels[0];
  CHECK_EQ(k.compile_args.size(), 1u);  // the accessor of ta::out
  CHECK_EQ(k.common_args.size(), 3u);   // scale, out's address, the vararg
  // Interleaved: two accessor words at compile-arg word 0; the address at common word 1.
  std::string text = emu::kernel_bindings_source(k, {2, 32}, {{"bias", 7}});
  for (const char* want : {"namespace dfb {\nconstexpr experimental::DFBAccessor scratch{3};",
                           "namespace sem {\nconstexpr std::uint32_t go = 1u;",
                           "using out_t = ::tensor_accessor::TensorAccessorBindingToken<0u, 4u>;",
                           "constexpr experimental::RtaArg<uint32_t> page{0};",
                           "constexpr experimental::RtaArg<uint32_t> base{4};",
                           "constexpr experimental::CrtaArg<uint32_t> scale{0};",
                           "constexpr experimental::CtaVal<uint32_t> bias{7u};",
                           "get_arg_val<uint32_t>(2 + idx)", "get_common_arg_val<uint32_t>(2 + idx)"})
    CHECK(text.find(want) != std::string::npos);
  KernelDesc plain = k;
  plain.bindings = KernelBindings{};
  CHECK(emu::kernel_bindings_source(plain, {}, {{"bias", 7}}).empty());
  // metal2 alone: the named compile args in args:: and the vararg helpers.
  plain.bindings.metal2 = true;
  text = emu::kernel_bindings_source(plain, {}, {{"bias", 7}});
  CHECK(text.find("constexpr experimental::CtaVal<uint32_t> bias{7u};") != std::string::npos);
  CHECK(text.find("get_arg_val<uint32_t>(0 + idx)") != std::string::npos);
  CHECK(text.find("namespace dfb") == std::string::npos);
  // A name that is not an identifier never reaches the source.
  KernelDesc bad = k;
  bad.bindings.runtime_arg_names = {"x; int y"};
  std::string msg = expect_error("invalid_argument", [&] { emu::kernel_bindings_source(bad, {2, 32}, {}); });
  CHECK(msg.find("not a C identifier") != std::string::npos);
}
ZYX_TEST(metal2, test_bindings_text);

// The checks: each names its field.
void test_bindings_checks(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  DeviceDesc dev = layer->describe();
  auto refused = [&](const char* what, const std::function<void(ProgramDesc&)>& edit, const std::string& says) {
    ProgramDesc d = bindings_program();
    edit(d);
    std::string msg = expect_error("invalid_argument", [&] { check_program(lower_bindings(d), dev); });
    if (msg.find(says) == std::string::npos) throw Failure(std::string(what) + ": " + msg);
  };
  refused("duplicate args:: name", [](ProgramDesc& d) { d.kernels[0].bindings.common_arg_names = {"base"}; },
          "compile.kernels[0].named_common_args[0]: args::base is named twice");
  refused("named compile arg clash", [](ProgramDesc& d) { d.kernels[0].bindings.runtime_arg_names = {"bias", "page"}; },
          "args::bias is named twice");
  refused("not an identifier", [](ProgramDesc& d) { d.kernels[0].bindings.runtime_arg_names = {"2nd"}; },
          "compile.kernels[0].named_runtime_args[0]: \"2nd\" is not a C identifier");
  refused("missing CB", [](ProgramDesc& d) { d.kernels[0].bindings.dfbs = {{"scratch", "nope"}}; },
          "compile.kernels[0].dfbs.scratch: binds dataflow buffer \"nope\"");
  refused("missing semaphore", [](ProgramDesc& d) { d.kernels[0].bindings.semaphores = {{"go", "stop"}}; },
          "compile.kernels[0].semaphore_bindings.go: binds semaphore \"stop\"");
  refused("missing buffer", [](ProgramDesc& d) { d.kernels[0].bindings.tensors = {{"out", "in"}}; },
          "compile.kernels[0].tensors.out: binds buffer \"in\"");
  refused("variable as a tensor", [](ProgramDesc& d) { d.kernels[0].bindings.tensors = {{"out", "scale_var"}}; },
          "a tensor accessor binds a buffer param");
  refused("too few runtime args", [](ProgramDesc& d) { d.kernels[0].bindings.runtime_arg_names = {"page", "base", "x", "y"}; },
          "compile.kernels[0].runtime_args[0].args: has 3 words; the kernel names 4");
  refused("too few common args", [](ProgramDesc& d) { d.kernels[0].common_args.clear(); },
          "compile.kernels[0].common_args: has 0 words; the kernel names 1");
  refused("one semaphore name, two ids", [](ProgramDesc& d) { d.semaphores[0].name = "go"; },
          "compile.semaphores[1].name: semaphore \"go\" already names 0");
  refused("CB name not an identifier", [](ProgramDesc& d) { d.cbs[0].indices[0].name = "scratch cb"; },
          "compile.cbs[0].indices[0].name: \"scratch cb\" is not a C identifier");
}
ZYX_TEST(metal2, test_bindings_checks);

}  // namespace
