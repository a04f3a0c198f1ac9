// TensorAccessorArgs as tt-metal's host lays them out (ttmetal_host.hpp's
// tensor_accessor_args): the emulator's `accessor` arg entry must resolve to
// exactly those words, and the device-side TensorAccessorArgs<N> /
// TensorAccessor must address every page of interleaved and sharded
// buffers (L1 and DRAM, height, width and block, both orientations, a
// height-sharded shard narrower than the tensor) from words a host built.
// Needs no tt-metal checkout: the kernels are the test's own.
#include <sstream>

#include "ttmetal_host.hpp"

using namespace zyx;
using namespace zyx_test;
using namespace zyx_test::ttmetal;

namespace {

// Writes its N_WORDS compile-time args to the DRAM buffer at arg 0.
const char* kDumpArgs = R"(
void kernel_main() {
  uint32_t out = get_arg_val<uint32_t>(0);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(l1);
  for (uint32_t i = 0; i < N_WORDS; i++) w[i] = get_compile_time_arg_val(i);
  const InterleavedAddrGen<true> dst = {.bank_base_address = out, .page_size = N_WORDS * 4};
  noc_async_write(l1, get_noc_addr(0, dst), N_WORDS * 4);
  noc_async_write_barrier();
}
)";

// Copies `pages` pages of args 0's buffer (accessor at compile arg 0) to
// arg 1's (the accessor after it), page by page through one L1 page.
const char* kCopyPages = R"(
void kernel_main() {
  uint32_t in_addr = get_arg_val<uint32_t>(0), out_addr = get_arg_val<uint32_t>(1);
  uint32_t pages = get_arg_val<uint32_t>(2), page_size = get_arg_val<uint32_t>(3);
  constexpr auto in_args = TensorAccessorArgs<0>();
  constexpr auto out_args = TensorAccessorArgs<in_args.next_compile_time_args_offset()>();
  const auto in = TensorAccessor(in_args, in_addr, page_size);
  const auto out = TensorAccessor(out_args, out_addr, page_size);
  cb_reserve_back(0, 1);
  uint32_t l1 = get_write_ptr(0);
  for (uint32_t p = 0; p < pages; p++) {
    noc_async_read(in.get_noc_addr(p), l1, page_size);
    noc_async_read_barrier();
    noc_async_write(l1, out.get_noc_addr(p), page_size);
    noc_async_write_barrier();
  }
}
)";

struct Case {
  std::string name;
  BufferSpec spec;
};

// 4 x 6 pages of 64 bytes in each layout the accessor reads.
std::vector<Case> cases() {
  const uint32_t page = 64;
  auto l1 = [&](BufferLayout l, CoreRangeSet cores, uint32_t sr, uint32_t sc, ShardOrientation o) {
    return sharded_spec(Placement::L1, l, page, cores, sr, sc, 4, 6, o);
  };
  const ShardOrientation row = ShardOrientation::RowMajor, col = ShardOrientation::ColMajor;
  return {
      {"interleaved dram", dram_spec(page)},
      {"interleaved l1", l1_spec(page)},
      {"interleaved dram, unaligned page", dram_spec(36)},
      {"height l1", l1(BufferLayout::HeightSharded, cores_of({{0, 0, 0, 1}}), 2, 6, row)},
      {"height l1, shard narrower than the tensor", l1(BufferLayout::HeightSharded, cores_of({{1, 0, 1, 3}}), 2, 3, row)},
      {"width l1", l1(BufferLayout::WidthSharded, cores_of({{0, 0, 0, 2}}), 4, 2, row)},
      {"block l1", l1(BufferLayout::BlockSharded, cores_of({{0, 1, 1, 2}}), 2, 3, row)},
      {"block l1, col-major", l1(BufferLayout::BlockSharded, cores_of({{2, 0, 3, 1}}), 2, 3, col)},
      {"block dram", sharded_spec(Placement::Dram, BufferLayout::BlockSharded, page, cores_of({{0, 0, 0, 3}}), 2, 3, 4, 6)},
      {"height dram", sharded_spec(Placement::Dram, BufferLayout::HeightSharded, page, cores_of({{0, 1, 0, 2}}), 2, 6, 4, 6)},
  };
}

// The words the emulator resolves an `accessor` entry to, read back by a kernel.
std::vector<uint32_t> resolved_words(DeviceLayer& layer, const BufferSpec& spec, size_t n) {
  uint64_t out = layer.alloc(n * 4, dram_spec(n * 4), nullptr);
  uint64_t buf = layer.alloc(24 * spec.page_size, spec, nullptr);
  GroupProgram p;
  p.name = "ttmetal_args_dump";
  p.params = {P("out", "global_mut", "u32"), P("buf", "global", "u32")};
  p.buffers = {decl(1, spec)};
  p.reader.source = kDumpArgs;
  p.reader.defines = {{"N_WORDS", std::to_string(n)}};
  p.reader.compile_args = {L("accessor", 1)};
  p.reader.runtime_args = {L("buffer_addr", 0)};
  p.cbs = {CB(0, "UInt32", 1024, 1)};
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(out), Buf(buf)}, false);
  auto got = download<uint32_t>(layer, out, n);
  layer.free(out);
  layer.free(buf);
  return got;
}

std::string words(const std::vector<uint32_t>& w) {
  std::ostringstream os;
  for (uint32_t x : w) os << " 0x" << std::hex << x;
  return os.str();
}

void test_accessor_words(DeviceLayer& layer) {
  for (const Case& c : cases()) {
    auto want = tensor_accessor_args(layer.describe(), c.spec);
    auto got = resolved_words(layer, c.spec, want.size());
    if (got != want) throw Failure("accessor words, " + c.name + ": got" + words(got) + ", the host's" + words(want));
  }
}
ZYX_TEST_ON(ttmetal_args, test_accessor_words, "n150");
ZYX_TEST_ON(ttmetal_args, test_accessor_words, "p150a");

// Every page of a buffer in each layout copied to an interleaved DRAM
// buffer through accessors built from host-layout words.
void test_accessor_pages(DeviceLayer& layer) {
  const uint32_t pages = 24;
  for (const Case& c : cases()) {
    const uint32_t page = static_cast<uint32_t>(c.spec.page_size);
    std::vector<uint8_t> in(pages * page);
    for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint8_t>(i * 7 + i / page);
    uint64_t src_id = upload(layer, in, c.spec), dst_id = layer.alloc(in.size(), dram_spec(page), nullptr);
    GroupProgram p;
    p.name = "ttmetal_args_pages";
    p.params = {P("src", "global", "u8"), P("dst", "global_mut", "u8")};
    p.reader.source = kCopyPages;
    p.reader.compile_args = cat({accessor(layer, c.spec), accessor(layer, dram_spec(page))});
    p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1), C(pages), C(page)};
    p.cbs = {CB(0, "UInt8", 64, 1)};
    layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src_id), Buf(dst_id)}, false);
    if (download<uint8_t>(layer, dst_id, in.size()) != in) throw Failure("accessor pages, " + c.name + ": wrong data");
    layer.free(src_id);
    layer.free(dst_id);
  }
}
ZYX_TEST_ON(ttmetal_args, test_accessor_pages, "n150");
ZYX_TEST_ON(ttmetal_args, test_accessor_pages, "p150a");

}  // namespace
