// Forms the kernel sweep over tt-metal's own kernels needed. The
// TensorAccessor's type, as the kernel sweep over tt-metal's own kernels
// needed it (docs/emulator.md, "The kernel sweep"): accessors of one
// distribution share one type whatever their args' offset, so a kernel can
// choose between two of them with `?:`, as sdpa's ring readers and writer
// do (directly, and through a wrapper that holds the accessor). The kernels
// here are our own, written in those forms.
#include <cstdint>
#include <string>
#include <vector>

#include "emu.hpp"
#include "harness.hpp"
#include "test_util.hpp"
#include "ttmetal_host.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_test::ttmetal;

namespace {

// Compile args: the accessors of A, B and OUT (interleaved DRAM) and of an
// interleaved L1 tensor. Runtime args: A's, B's and OUT's addresses, whether
// to read B, the pages to copy and the first page the wrapper reads. OUT
// gets pages [0, pages) of the chosen tensor through the chosen accessor,
// then pages [first, first + pages) through the chosen wrapper.
const char* kChooseAccessor = R"(
#include <type_traits>
#include "api/dataflow/dataflow_api.h"

// Holds an accessor by value, as sdpa's PaddedAddrGenerator does.
template <typename Reader>
struct PageWindow {
  Reader reader;
  uint32_t first;
  PageWindow(const Reader& r, uint32_t f) : reader(r), first(f) {}
  void read(uint32_t p, uint32_t l1) const { noc_async_read_tile(first + p, reader, l1); }
  uint32_t page_bytes() const { return reader.get_aligned_page_size(); }
};

void kernel_main() {
  const uint32_t a_addr = get_arg_val<uint32_t>(0), b_addr = get_arg_val<uint32_t>(1);
  const uint32_t out_addr = get_arg_val<uint32_t>(2), use_b = get_arg_val<uint32_t>(3);
  const uint32_t pages = get_arg_val<uint32_t>(4), first = get_arg_val<uint32_t>(5);
  constexpr auto a_args = TensorAccessorArgs<0>();
  constexpr auto b_args = TensorAccessorArgs<a_args.next_compile_time_args_offset()>();
  constexpr auto out_args = TensorAccessorArgs<b_args.next_compile_time_args_offset()>();
  constexpr auto l1_args = TensorAccessorArgs<out_args.next_compile_time_args_offset()>();
  using DramAccessor = decltype(TensorAccessor(a_args, 0));
  static_assert(std::is_same_v<DramAccessor, decltype(TensorAccessor(b_args, 0, 128))>);
  static_assert(!std::is_same_v<DramAccessor, decltype(TensorAccessor(l1_args, 0))>);

  const auto a = TensorAccessor(a_args, a_addr);
  const auto b = TensorAccessor(b_args, b_addr);
  const auto in = use_b ? TensorAccessor(b_args, b_addr) : TensorAccessor(a_args, a_addr);
  const auto window = use_b ? PageWindow(b, first) : PageWindow(a, first);
  const auto out = TensorAccessor(out_args, out_addr);
  cb_reserve_back(0, 1);
  const uint32_t l1 = get_write_ptr(0);
  for (uint32_t p = 0; p < pages; p++) {
    noc_async_read(in.get_noc_addr(p), l1, in.get_page_size());
    noc_async_read_barrier();
    noc_async_write(l1, out.get_noc_addr(p), in.get_page_size());
    noc_async_write_barrier();
  }
  for (uint32_t p = 0; p < pages; p++) {
    window.read(p, l1);
    noc_async_read_barrier();
    noc_async_write(l1, out.get_noc_addr(pages + p), window.page_bytes());
    noc_async_write_barrier();
  }
}
)";

std::vector<uint8_t> pattern(uint32_t pages, uint32_t page, uint32_t seed) {
  std::vector<uint8_t> v(size_t(pages) * page);
  for (size_t i = 0; i < v.size(); i++) v[i] = static_cast<uint8_t>(i * seed + i / page + seed);
  return v;
}

// A has 64-byte pages and B 128-byte ones, so the chosen accessor must also
// carry its own page size (a member, as on tt-metal).
void test_choose_accessor(DeviceLayer& layer) {
  const uint32_t total = 12, pages = 6, first = 3, a_page = 64, b_page = 128;
  const std::vector<uint8_t> a = pattern(total, a_page, 7), b = pattern(total, b_page, 13);
  for (uint32_t use_b = 0; use_b < 2; use_b++) {
    const uint32_t page = use_b ? b_page : a_page;
    const std::vector<uint8_t>& chosen = use_b ? b : a;
    uint64_t a_id = upload(layer, a, a_page), b_id = upload(layer, b, b_page);
    uint64_t out_id = layer.alloc(uint64_t(2) * pages * page, dram_spec(page), nullptr);
    GroupProgram p;
    p.name = "sweep_compat3_choose";
    p.params = {P("a", "global", "u8"), P("b", "global", "u8"), P("out", "global_mut", "u8")};
    p.reader.source = kChooseAccessor;
    p.reader.compile_args =
        cat({accessor(layer, dram_spec(a_page)), accessor(layer, dram_spec(b_page)), accessor(layer, dram_spec(page)),
             accessor(layer, l1_spec(64))});
    p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_addr", 2), C(use_b), C(pages),
                             C(first)};
    p.cbs = {CB(0, "UInt8", b_page, 1)};
    uint64_t prog = layer.compile(one_group_program(p, 1, 1));
    layer.run(prog, {Buf(a_id), Buf(b_id), Buf(out_id)}, false);
    layer.release(prog);
    std::vector<uint8_t> got = download<uint8_t>(layer, out_id, size_t(2) * pages * page);
    std::vector<uint8_t> want(chosen.begin(), chosen.begin() + size_t(pages) * page);
    want.insert(want.end(), chosen.begin() + size_t(first) * page, chosen.begin() + size_t(first + pages) * page);
    CHECK_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); i++) CHECK_EQ(uint32_t(got[i]), uint32_t(want[i]));
    layer.free(a_id);
    layer.free(b_id);
    layer.free(out_id);
  }
}
ZYX_TEST_ON(accessors, test_choose_accessor, "n150");
ZYX_TEST_ON(accessors, test_choose_accessor, "p150a");

// A kernel and an include file that unroll loops by a count the host's GCC
// 12 cannot evaluate where the template is defined (a template parameter,
// with and without parentheses, and a namespace-scope constant), as
// conv2d's readers do, beside a literal count. Each element i of OUT is
// the sum over j < N of (i + j) for N = 3, 5 and 7: the loops must run
// exactly as written.
const char* kUnrolledSums = R"(
#pragma once
#include <cstdint>

template <uint32_t N>
uint32_t window_sum(uint32_t first) {
  uint32_t sum = 0;
#pragma GCC unroll(N)
  for (uint32_t j = 0; j < N; j++) sum += first + j;
  return sum;
}

template <uint32_t N>
uint32_t window_sum_bare(uint32_t first) {
  uint32_t sum = 0;
#pragma GCC unroll N
  for (uint32_t j = 0; j < N; j++) sum += first + j;
  return sum;
}
)";

const char* kUnrollKernel = R"(
#include "api/dataflow/dataflow_api.h"
#include "unrolled_sums.hpp"

constexpr uint32_t window = 7;

void kernel_main() {
  const uint32_t out_addr = get_arg_val<uint32_t>(0), count = get_arg_val<uint32_t>(1);
  constexpr auto out_args = TensorAccessorArgs<0>();
  const auto out = TensorAccessor(out_args, out_addr);
  cb_reserve_back(0, 1);
  volatile uint32_t* l1 = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
#pragma GCC unroll 4
  for (uint32_t i = 0; i < count; i++) {
    uint32_t sum7 = 0;
#pragma GCC unroll window
    for (uint32_t j = 0; j < window; j++) sum7 += i + j;
    l1[3 * i] = window_sum<3>(i);
    l1[3 * i + 1] = window_sum_bare<5>(i);
    l1[3 * i + 2] = sum7;
  }
  noc_async_write(get_write_ptr(0), out.get_noc_addr(0), out.get_page_size());
  noc_async_write_barrier();
}
)";

void test_unroll_by_template_count(DeviceLayer& layer) {
  const uint32_t count = 16, page = 3 * count * 4;
  uint64_t out_id = layer.alloc(page, dram_spec(page), nullptr);
  GroupProgram p;
  p.name = "sweep_compat3_unroll";
  p.params = {P("out", "global_mut", "u32")};
  p.include_files = {IncludeFile{"unrolled_sums.hpp", kUnrolledSums}};
  p.reader.source = kUnrollKernel;
  p.reader.compile_args = accessor(layer, dram_spec(page));
  p.reader.runtime_args = {L("buffer_addr", 0), C(count)};
  p.cbs = {CB(0, "UInt32", page, 1)};
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(out_id)}, false);
  layer.release(prog);
  std::vector<uint32_t> got = download<uint32_t>(layer, out_id, 3 * count);
  CHECK_EQ(got.size(), size_t(3 * count));
  for (uint32_t i = 0; i < count && got.size() == 3 * count; i++) {
    CHECK_EQ(got[3 * i], 3 * i + 3);       // i + (i + 1) + (i + 2)
    CHECK_EQ(got[3 * i + 1], 5 * i + 10);  // 5i + 0 + 1 + 2 + 3 + 4
    CHECK_EQ(got[3 * i + 2], 7 * i + 21);  // 7i + 0 + … + 6
  }
  layer.free(out_id);
}
ZYX_TEST_ON(unroll, test_unroll_by_template_count, "n150");

// The preparation itself: only a count that is not a literal goes, each
// such line stays as an empty one, and every other line is kept byte for
// byte (a CRLF line too).
void test_unroll_pragma_preparation(DeviceLayer&) {
  const std::string in =
      "#pragma GCC unroll(N)\n"
      "  #  pragma  GCC  unroll window_height\r\n"
      "#pragma GCC unroll 8\n"
      "#pragma GCC unroll (16)\n"
      "#pragma GCC unrolled 3\n"
      "#pragma GCC ivdep\n"
      "for (;;) {}";
  const std::string want =
      "\n"
      "\n"
      "#pragma GCC unroll 8\n"
      "#pragma GCC unroll (16)\n"
      "#pragma GCC unrolled 3\n"
      "#pragma GCC ivdep\n"
      "for (;;) {}";
  CHECK_EQ(emu::without_unevaluable_unroll_pragmas(in), want);
  CHECK_EQ(emu::without_unevaluable_unroll_pragmas("no pragma here\n"), std::string("no pragma here\n"));
}
ZYX_TEST_ON(unroll, test_unroll_pragma_preparation, "n150");

}  // namespace

int main(int argc, char** argv) { return group_main(argc, argv, "sweep_compat3_"); }
