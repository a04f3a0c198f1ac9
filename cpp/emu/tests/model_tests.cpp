// Tests of the v2 program model on the emulator: kernels on core range sets
// (two work-split groups, sender/receiver multicast), per-core args (bank
// and NOC coordinates), multi-index and buffer-backed circular buffers,
// semaphores with initial values, L1-interleaved and sharded buffers (L1 and
// DRAM), tensor accessors over them, include files, and the errors of wrong
// programs. Every result is checked against host arithmetic or against page
// placement computed here by hand from the protocol's rules.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <set>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

template <typename T>
std::vector<T> iota_values(size_t n, T start, T step = 1) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<T>(start + static_cast<T>(i) * step);
  return v;
}

std::vector<uint16_t> bf16_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-8, 8);
  std::vector<uint16_t> v(n);
  for (auto& x : v) x = to_bf16(d(rng));
  return v;
}

// ---- core groups -----------------------------------------------------------------
// The kernels shared with tt/v2_emulator_test.go are files under kernels/
// (shared_kernel): read_pairs, add_n, write_range, l1_holder, l1_peer,
// shard_push, shard_wait, mcast_sender, mcast_receiver.

// split_work_to_cores: 100 tiles over 24 cores, the first 4 cores take 5
// tiles, the other 20 take 4; the two groups run different compute kernels
// (compile-time tile counts), as ttnn programs do.
void test_core_groups(DeviceLayer& layer) {
  const uint32_t tiles = 100, ncores = 24, big = tiles % ncores, per = tiles / ncores;  // 4 cores x 5, 20 x 4
  auto a = bf16_values(tiles * 1024, 1), b = bf16_values(tiles * 1024, 2);
  uint64_t ia = upload(layer, a, 2048), ib = upload(layer, b, 2048);
  uint64_t ic = layer.alloc(tiles * 2048, dram_spec(2048), nullptr);
  ProgramDesc p;
  p.name = "core_groups";
  p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
  p.buffers = {decl(0, dram_spec(2048)), decl(1, dram_spec(2048)), decl(2, dram_spec(2048))};
  CoreRangeSet all = cores_of({{0, 0, 2, 7}});
  CoreRangeSet g1 = cores_of({{0, 0, 0, 3}}), g2 = cores_of({{0, 4, 0, 7}, {1, 0, 2, 7}});
  KernelDesc reader = kernel("reader", Processor::Riscv0, all, shared_kernel("read_pairs"));
  reader.compile_args = entries({L("accessor", 0), L("accessor", 1)});
  KernelDesc writer = kernel("writer", Processor::Riscv1, all, shared_kernel("write_range"));
  writer.compile_args = entries({L("accessor", 2)});
  uint32_t start = 0;
  for (CoreCoord c : all.cores()) {
    uint32_t i = c.row * 8 + c.col, n = i < big ? per + 1 : per;
    runtime(reader, one_core(c.row, c.col), {L("buffer_addr", 0), L("buffer_addr", 1), C(start), C(n)});
    runtime(writer, one_core(c.row, c.col), {L("buffer_addr", 2), C(start), C(n)});
    start += n;
  }
  CHECK_EQ(start, tiles);
  const std::string add_n = shared_kernel("add_n");
  KernelDesc c1 = kernel("compute_g1", Processor::Compute, g1, add_n), c2 = kernel("compute_g2", Processor::Compute, g2, add_n);
  c1.compile_args = entries({C(per + 1)});
  c2.compile_args = entries({C(per)});
  p.kernels = {reader, c1, c2, writer};
  p.cbs = {cb_config(all, 4096, {cb_index(0, DataFormat::Float16_b, 2048)}),
           cb_config(all, 4096, {cb_index(1, DataFormat::Float16_b, 2048)}),
           cb_config(all, 4096, {cb_index(16, DataFormat::Float16_b, 2048)})};
  uint64_t prog = layer.compile(p);
  layer.run(prog, {Buf(ia), Buf(ib), Buf(ic)}, false);
  auto got = download<uint16_t>(layer, ic, a.size());
  for (size_t i = 0; i < a.size(); i++) {
    uint16_t want = to_bf16(from_bf16(a[i]) + from_bf16(b[i]));
    if (got[i] != want) throw Failure("core groups: element " + std::to_string(i) + " differs");
  }
  layer.release(prog);
  for (uint64_t id : {ia, ib, ic}) layer.free(id);
  std::printf("  core groups: 100 tiles over 4x5 + 20x4 cores with two compute kernels: pass\n");
}
ZYX_TEST(model, test_core_groups);

// ---- L1 buffers ------------------------------------------------------------------

// Core (1,2) holds a 4-page L1 buffer: it reads src into it, changes every
// word through the buffer's pointer, writes it to dst and tells core (0,0)
// (semaphore 0), which reads the buffer remotely through the holder's NOC
// coordinates into dst2.
void test_l1_loopback(DeviceLayer& layer) {
  auto in = iota_values<uint32_t>(1024, 5, 7);
  uint64_t src = upload(layer, in, 1024);
  BufferSpec l1s = sharded_spec(Placement::L1, BufferLayout::HeightSharded, 1024, one_core(1, 2), 4, 1, 4, 1);
  uint64_t l1_addr = 0;
  uint64_t l1 = layer.alloc(4096, l1s, &l1_addr);
  DeviceDesc dd = layer.describe();
  CHECK(l1_addr >= dd.l1_unreserved_base && l1_addr + 4096 <= dd.l1_size);
  uint64_t dst = layer.alloc(4096, dram_spec(1024), nullptr), dst2 = layer.alloc(4096, dram_spec(4096), nullptr);
  ProgramDesc p;
  p.name = "l1_loopback";
  p.params = {P("src", "global", "u32"), P("l1", "global_mut", "u32"), P("dst", "global_mut", "u32"),
              P("dst2", "global_mut", "u32")};
  p.buffers = {decl(1, l1s)};
  KernelDesc holder = kernel("holder", Processor::Riscv0, one_core(1, 2), shared_kernel("l1_holder"));
  runtime(holder, one_core(1, 2),
          {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_addr", 2), CoreNoc(true, 0, 0), CoreNoc(false, 0, 0),
           C(0)});
  KernelDesc peer = kernel("peer", Processor::Riscv1, one_core(0, 0), shared_kernel("l1_peer"));
  runtime(peer, one_core(0, 0), {L("buffer_addr", 1), L("buffer_addr", 3), CoreNoc(true, 1, 2), CoreNoc(false, 1, 2), C(0)});
  p.kernels = {holder, peer};
  p.cbs = {cb_config(one_core(0, 0), 4096, {cb_index(0, DataFormat::UInt32, 4096)})};
  p.semaphores = {SemaphoreDesc{cores_of({{0, 0, 0, 0}, {1, 2, 1, 2}}), 0, 0}};
  uint64_t prog = layer.compile(p);
  for (int rep = 0; rep < 2; rep++) {
    layer.write(src, 0, reinterpret_cast<const uint8_t*>(in.data()), 4096);
    layer.run(prog, {Buf(src), Buf(l1), Buf(dst), Buf(dst2)}, false);
    std::vector<uint32_t> want(1024);
    for (size_t i = 0; i < 1024; i++) want[i] = in[i] * 3 + 1;
    CHECK(download<uint32_t>(layer, dst, 1024) == want);
    CHECK(download<uint32_t>(layer, dst2, 1024) == want);
    CHECK(download<uint32_t>(layer, l1, 1024) == want);  // the host reads the core's L1
    for (auto& x : in) x += 1;
  }
  layer.release(prog);
  // Freed L1 is handed out again (top-down: the same address).
  layer.free(l1);
  uint64_t again = 0;
  uint64_t l1b = layer.alloc(4096, l1s, &again);
  CHECK_EQ(again, l1_addr);
  for (uint64_t id : {src, dst, dst2, l1b}) layer.free(id);
  std::printf("  L1 buffer loopback through its pointer and a peer core: pass\n");
}
ZYX_TEST(model, test_l1_loopback);
// Blackhole: 8 DRAM banks, 64-byte DRAM alignment, a 10x13 grid.
ZYX_TEST_ON(model, test_l1_loopback, "p150a");

// ---- sharded buffers -------------------------------------------------------------

// The holder cores of a shard spec with one range, computed by hand.
std::vector<CoreCoord> holders(const std::array<uint32_t, 4>& r, ShardOrientation o, uint32_t shards) {
  uint32_t h = r[2] - r[0] + 1, w = r[3] - r[1] + 1;
  std::vector<CoreCoord> out;
  for (uint32_t k = 0; k < shards; k++)
    out.push_back(o == ShardOrientation::RowMajor ? CoreCoord{r[0] + k / w, r[1] + k % w}
                                                  : CoreCoord{r[0] + k % h, r[1] + k / h});
  return out;
}

// The same add with no producer: the shard data is in place, so the kernel
// reads and pops the buffer-backed pages without waiting for them.
const char* kAddInPlace = R"(
#include "compute_kernel_api/eltwise_binary.h"
void kernel_main() {
  constexpr uint32_t n = get_compile_time_arg_val(0);
  binary_op_init_common(0, 1, 16);
  add_tiles_init(0, 1);
  for (uint32_t t = 0; t < n; t++) {
    tile_regs_acquire();
    add_tiles(0, 1, 0, 0, 0);
    tile_regs_commit();
    cb_pop_front(0, 1);
    cb_pop_front(1, 1);
    tile_regs_wait();
    pack_tile(0, 16);
    tile_regs_release();
    cb_push_back(16, 1);
  }
}
)";

// Copies this core's whole shard region (its own pointer to the buffer) to
// page k of a DRAM buffer of shard-sized pages.
const char* kShardDump = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t l1 = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1), k = get_arg_val<uint32_t>(2);
  const uint32_t bytes = get_arg_val<uint32_t>(3);
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = bytes};
  noc_async_write(l1, get_noc_addr(k, o), bytes);
  noc_async_write_barrier();
}
)";

// Gathers every page of a tensor through its TensorAccessor (accessor words
// at compile arg 0) into an interleaved DRAM output.
const char* kGather = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1), pages = get_arg_val<uint32_t>(2);
  constexpr auto args = TensorAccessorArgs<0>();
  const auto s = TensorAccessor(args, src);
  const uint32_t page = s.get_page_size();
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = page};
  for (uint32_t p = 0; p < pages; p++) {
    cb_reserve_back(0, 1);
    noc_async_read_page(p, s, get_write_ptr(0));
    noc_async_read_barrier();
    noc_async_write(get_write_ptr(0), get_noc_addr(p, o), page);
    noc_async_write_barrier();
    cb_push_back(0, 1);
    cb_wait_front(0, 1);
    cb_pop_front(0, 1);
  }
}
)";

// Reads one page through the bank coordinates and bank-local offset the host
// passes (get_noc_addr(x, y, addr)), and writes it and the bank id out.
const char* kBankRead = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0), offset = get_arg_val<uint32_t>(1);
  const uint32_t x = get_arg_val<uint32_t>(2), y = get_arg_val<uint32_t>(3), bank = get_arg_val<uint32_t>(4);
  const uint32_t out = get_arg_val<uint32_t>(5), page = get_arg_val<uint32_t>(6);
  cb_reserve_back(0, 1);
  noc_async_read(get_noc_addr(x, y, src + offset), get_write_ptr(0), page);
  noc_async_read_barrier();
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0) + page);
  w[0] = bank;
  w[1] = x;
  w[2] = y;
  noc_async_write(get_write_ptr(0), get_noc_addr(0u, 0u, out), page + 16);
  noc_async_write_barrier();
}
)";

struct ShardCase {
  const char* name;
  BufferLayout layout;
  uint32_t s0, s1;  // shard shape in tiles
  ShardOrientation o;
};

// Eltwise add over shards: every holder core adds the tiles of its shards of
// a and b into its shard of c (shard_push, add_n, shard_wait); the circular
// buffers sit on the shards.
void test_sharded(DeviceLayer& layer) {
  const uint32_t T0 = 5, T1 = 3, tiles = T0 * T1;  // a 160 x 96 bf16 tensor in tiles
  const std::array<uint32_t, 4> grid = {0, 0, 2, 2};
  ShardCase cases[] = {
      {"height", BufferLayout::HeightSharded, 2, 3, ShardOrientation::RowMajor},
      {"width", BufferLayout::WidthSharded, 5, 1, ShardOrientation::RowMajor},
      {"block", BufferLayout::BlockSharded, 2, 2, ShardOrientation::RowMajor},
      {"block col_major", BufferLayout::BlockSharded, 2, 2, ShardOrientation::ColMajor},
      // tt-metal's ShardSpecBuffer takes these too: a height-sharded
      // buffer deals its pages out in row-major order, s0 * s1 to a shard
      // (the last one partial), whatever the tensor's width.
      {"height narrower than the tensor", BufferLayout::HeightSharded, 2, 1, ShardOrientation::RowMajor},
      {"height wider than the tensor", BufferLayout::HeightSharded, 1, 5, ShardOrientation::ColMajor},
      {"width shorter than the tensor", BufferLayout::WidthSharded, 2, 1, ShardOrientation::RowMajor},
  };
  for (const ShardCase& sc : cases) {
    // The tensor in tt-metal's page order: for height sharding, rows of s1
    // pages (a shard holds s0 of them, consecutive pages); else as given.
    uint32_t V0 = T0, V1 = T1;
    if (sc.layout == BufferLayout::HeightSharded) V0 = tiles / sc.s1, V1 = sc.s1;
    uint32_t spr = (V1 + sc.s1 - 1) / sc.s1, shards = ((V0 + sc.s0 - 1) / sc.s0) * spr, sp = sc.s0 * sc.s1;
    BufferSpec spec = sharded_spec(Placement::L1, sc.layout, 2048, cores_of({grid}), sc.s0, sc.s1, T0, T1, sc.o);
    auto a = bf16_values(tiles * 1024, 10), b = bf16_values(tiles * 1024, 11);
    uint64_t ia = upload(layer, a, spec), ib = upload(layer, b, spec);
    uint64_t ic = layer.alloc(tiles * 2048, spec, nullptr);
    std::vector<CoreCoord> hs = holders(grid, sc.o, shards);
    CoreRangeSet hold;
    for (CoreCoord c : hs) hold.ranges.push_back(CoreRange{c, c});
    // The eltwise add with circular buffers on the three sharded buffers.
    ProgramDesc p;
    p.name = std::string("sharded_") + sc.name;
    p.params = {P("a", "global", "bf16"), P("b", "global", "bf16"), P("c", "global_mut", "bf16")};
    p.buffers = {decl(0, spec), decl(1, spec), decl(2, spec)};
    KernelDesc push = kernel("push", Processor::Riscv0, hold, shared_kernel("shard_push"));
    KernelDesc wait = kernel("wait", Processor::Riscv1, hold, shared_kernel("shard_wait"));
    KernelDesc add = kernel("add", Processor::Compute, hold, shared_kernel("add_n"));
    push.compile_args = wait.compile_args = add.compile_args = entries({C(sp)});
    p.kernels = {push, add, wait};
    p.cbs = {cb_config(hold, sp * 2048, {cb_index(0, DataFormat::Float16_b, 2048)}, 0u),
             cb_config(hold, sp * 2048, {cb_index(1, DataFormat::Float16_b, 2048)}, 1u),
             cb_config(hold, sp * 2048, {cb_index(16, DataFormat::Float16_b, 2048)}, 2u)};
    for (int variant = 0; variant < 2; variant++) {
      if (variant == 1) {  // compute only, no producer or consumer kernels
        KernelDesc inplace = kernel("add_in_place", Processor::Compute, hold, kAddInPlace);
        inplace.compile_args = entries({C(sp)});
        p.kernels = {inplace};
        std::vector<uint16_t> junk(a.size(), 0x7fc0);
        layer.write(ic, 0, reinterpret_cast<const uint8_t*>(junk.data()), junk.size() * 2);
      }
      uint64_t prog = layer.compile(p);
      layer.run(prog, {Buf(ia), Buf(ib), Buf(ic)}, false);
      layer.release(prog);
      auto got = download<uint16_t>(layer, ic, a.size());
      for (size_t i = 0; i < a.size(); i++)
        if (got[i] != to_bf16(from_bf16(a[i]) + from_bf16(b[i])))
          throw Failure(std::string("sharded ") + sc.name + " eltwise (variant " + std::to_string(variant) +
                        "): element " + std::to_string(i) + " differs");
    }
    // Placement, by hand: shard k of a on holder k, page (lr, lc) of the
    // shard at offset (lr * s1 + lc) * 2048 (edge shards keep the stride),
    // pages counted in the V0 x V1 view.
    ProgramDesc dump;
    dump.name = "dump";
    dump.params = {P("a", "global", "bf16"), P("out", "global_mut", "bf16")};
    KernelDesc dk = kernel("dump", Processor::Riscv0, hold, kShardDump);
    for (uint32_t k = 0; k < shards; k++)
      runtime(dk, one_core(hs[k].row, hs[k].col), {L("buffer_addr", 0), L("buffer_addr", 1), C(k), C(sp * 2048)});
    dump.kernels = {dk};
    uint64_t out = layer.alloc(uint64_t(shards) * sp * 2048, dram_spec(sp * 2048), nullptr);
    layer.run(layer.compile(dump), {Buf(ia), Buf(out)}, false);
    auto placed = download<uint16_t>(layer, out, size_t(shards) * sp * 1024);
    for (uint32_t k = 0; k < shards; k++)
      for (uint32_t lr = 0; lr < sc.s0; lr++)
        for (uint32_t lc = 0; lc < sc.s1; lc++) {
          uint32_t r = (k / spr) * sc.s0 + lr, c = (k % spr) * sc.s1 + lc;
          if (r >= V0 || c >= V1) continue;  // past a partial edge shard
          const uint16_t* want = &a[(r * V1 + c) * 1024];
          const uint16_t* have = &placed[(size_t(k) * sp + lr * sc.s1 + lc) * 1024];
          if (std::memcmp(want, have, 2048) != 0)
            throw Failure(std::string("sharded ") + sc.name + ": tile (" + std::to_string(r) + "," +
                          std::to_string(c) + ") is not at shard " + std::to_string(k) + " page (" +
                          std::to_string(lr) + "," + std::to_string(lc) + ")");
        }
    // TensorAccessor over the sharded buffer, from a core outside the grid.
    ProgramDesc g;
    g.name = "gather";
    g.params = {P("a", "global", "bf16"), P("out", "global_mut", "bf16")};
    g.buffers = {decl(0, spec)};
    KernelDesc gk = kernel("gather", Processor::Riscv0, one_core(4, 5), kGather);
    gk.compile_args = entries({L("accessor", 0)});
    runtime(gk, one_core(4, 5), {L("buffer_addr", 0), L("buffer_addr", 1), C(tiles)});
    g.kernels = {gk};
    g.cbs = {cb_config(one_core(4, 5), 2048, {cb_index(0, DataFormat::Float16_b, 2048)})};
    uint64_t gout = layer.alloc(tiles * 2048, dram_spec(2048), nullptr);
    layer.run(layer.compile(g), {Buf(ia), Buf(gout)}, false);
    CHECK(download<uint16_t>(layer, gout, a.size()) == a);
    // Bank id and NOC coordinates of page 7, read with get_noc_addr(x, y, addr).
    const uint32_t page = 7, pr = page / V1, pc = page % V1;
    uint32_t k = (pr / sc.s0) * spr + pc / sc.s1, local = (pr % sc.s0) * sc.s1 + pc % sc.s1;
    ProgramDesc br;
    br.name = "bank_read";
    br.params = {P("a", "global", "bf16"), P("out", "global_mut", "bf16")};
    KernelDesc bk = kernel("bank_read", Processor::Riscv0, one_core(6, 6), kBankRead);
    runtime(bk, one_core(6, 6),
            {L("buffer_addr", 0), C(local * 2048), Bank("bank_noc_x", 0, page), Bank("bank_noc_y", 0, page),
             Bank("bank_id", 0, page), L("buffer_addr", 1), C(2048)});
    br.kernels = {bk};
    br.cbs = {cb_config(one_core(6, 6), 4096, {cb_index(0, DataFormat::Float16_b, 4096)})};
    uint64_t bout = layer.alloc(4096, dram_spec(4096), nullptr);
    layer.run(layer.compile(br), {Buf(ia), Buf(bout)}, false);
    auto bgot = download<uint16_t>(layer, bout, 2048);
    CHECK(std::memcmp(bgot.data(), &a[page * 1024], 2048) == 0);
    uint32_t words[3];
    std::memcpy(words, &bgot[1024], 12);
    CHECK_EQ(words[0], hs[k].row * 8 + hs[k].col);  // the L1 bank of the holder core
    CHECK_EQ(words[1], hs[k].col + 1);               // its NOC x and y (docs/emulator.md)
    CHECK_EQ(words[2], hs[k].row + 1);
    for (uint64_t id : {ia, ib, ic, out, gout, bout}) layer.free(id);
    std::printf("  %s sharded: eltwise on shards (with and without producers), placement, accessor gather, bank coordinates: pass\n", sc.name);
  }
}
ZYX_TEST(model, test_sharded);

// Host write/read of sharded and interleaved layouts at odd offsets and
// lengths, against a plain host copy; DRAM sharding included.
void test_layout_roundtrips(DeviceLayer& layer) {
  std::mt19937 rng(3);
  std::vector<BufferSpec> specs = {
      dram_spec(4),
      dram_spec(100),
      l1_spec(48),
      sharded_spec(Placement::L1, BufferLayout::BlockSharded, 64, cores_of({{1, 1, 3, 4}}), 3, 2, 7, 5),
      sharded_spec(Placement::L1, BufferLayout::WidthSharded, 32, cores_of({{0, 0, 0, 7}, {1, 0, 1, 1}}), 4, 1, 4, 9,
                   ShardOrientation::ColMajor),
      sharded_spec(Placement::Dram, BufferLayout::HeightSharded, 256, cores_of({{0, 0, 0, 7}}), 3, 2, 24, 2),
      // Height shards narrower than the tensor, the last one partial.
      sharded_spec(Placement::L1, BufferLayout::HeightSharded, 64, cores_of({{0, 0, 1, 3}}), 3, 1, 5, 4),
      sharded_spec(Placement::Dram, BufferLayout::HeightSharded, 96, cores_of({{0, 0, 0, 7}}), 2, 2, 7, 4),
  };
  for (const BufferSpec& s : specs) {
    uint64_t pages = s.shard ? uint64_t(s.shard->tensor[0]) * s.shard->tensor[1] - 1 : 333;
    uint64_t size = pages * s.page_size - 3;  // a partial last page
    std::vector<uint8_t> data(size), back(size);
    for (auto& x : data) x = static_cast<uint8_t>(rng());
    uint64_t id = layer.alloc(size, s, nullptr);
    layer.write(id, 0, data.data(), size);
    layer.read(id, 0, back.data(), size);
    CHECK(back == data);
    for (int i = 0; i < 20; i++) {
      uint64_t off = rng() % size, len = rng() % (size - off + 1);
      std::vector<uint8_t> patch(len);
      for (auto& x : patch) x = static_cast<uint8_t>(rng());
      layer.write(id, off, patch.data(), len);
      std::memcpy(data.data() + off, patch.data(), len);
      uint64_t roff = rng() % size, rlen = rng() % (size - roff + 1);
      std::vector<uint8_t> part(rlen);
      layer.read(id, roff, part.data(), rlen);
      CHECK(std::memcmp(part.data(), data.data() + roff, rlen) == 0);
    }
    layer.read(id, 0, back.data(), size);
    CHECK(back == data);
    layer.free(id);
  }
  // Transfers of a MiB and more stream and read DRAM bank by bank; pages
  // that straddle the 1 MiB backing chunks (1500 bytes, 1504 with padding).
  {
    const uint64_t size = (3u << 20) + 17;
    std::vector<uint8_t> data(size);
    for (auto& x : data) x = static_cast<uint8_t>(rng());
    uint64_t id = layer.alloc(size, dram_spec(1500), nullptr);
    layer.write(id, 0, data.data(), size);
    for (auto [off, len] : {std::pair<uint64_t, uint64_t>{0, size}, {777, (5u << 19) + 3}, {size - (1u << 20) - 9, (1u << 20) + 9}}) {
      std::vector<uint8_t> part(len);
      layer.read(id, off, part.data(), len);
      CHECK(std::memcmp(part.data(), data.data() + off, len) == 0);
      std::vector<uint8_t> patch(len);
      for (auto& x : patch) x = static_cast<uint8_t>(rng());
      layer.write(id, off, patch.data(), len);
      std::memcpy(data.data() + off, patch.data(), len);
    }
    std::vector<uint8_t> back(size);
    layer.read(id, 0, back.data(), size);
    CHECK(back == data);
    layer.free(id);
  }
  std::printf("  host write/read of DRAM/L1 interleaved and L1/DRAM sharded layouts: pass\n");
}
ZYX_TEST(model, test_layout_roundtrips);
// Blackhole: 8 DRAM banks, 64-byte DRAM alignment, a 10x13 grid.
ZYX_TEST_ON(model, test_layout_roundtrips, "p150a");

// A DRAM-sharded tensor read back through its accessor and bank coordinates.
void test_dram_sharded(DeviceLayer& layer) {
  const uint32_t T0 = 7, T1 = 4;
  BufferSpec spec = sharded_spec(Placement::Dram, BufferLayout::BlockSharded, 512, cores_of({{0, 2, 0, 9}}), 2, 3, T0, T1);
  auto in = iota_values<uint32_t>(T0 * T1 * 128, 11, 3);
  uint64_t id = upload(layer, in, spec);
  ProgramDesc g;
  g.name = "gather_dram";
  g.params = {P("a", "global", "u32"), P("out", "global_mut", "u32")};
  g.buffers = {decl(0, spec)};
  KernelDesc gk = kernel("gather", Processor::Riscv0, one_core(0, 0), kGather);
  gk.compile_args = entries({L("accessor", 0)});
  runtime(gk, one_core(0, 0), {L("buffer_addr", 0), L("buffer_addr", 1), C(T0 * T1)});
  g.kernels = {gk};
  g.cbs = {cb_config(one_core(0, 0), 512, {cb_index(0, DataFormat::UInt32, 512)})};
  uint64_t out = layer.alloc(in.size() * 4, dram_spec(512), nullptr);
  layer.run(layer.compile(g), {Buf(id), Buf(out)}, false);
  CHECK(download<uint32_t>(layer, out, in.size()) == in);
  // Page 13 = (3, 1): shard (1, 0) = shard 2 on bank 2 + 2 = 4, local page (1, 1) = 4.
  ProgramDesc br;
  br.name = "bank_read_dram";
  br.params = {P("a", "global", "u32"), P("out", "global_mut", "u32")};
  br.buffers = {decl(0, spec)};
  KernelDesc bk = kernel("bank_read", Processor::Riscv0, one_core(0, 0), kBankRead);
  runtime(bk, one_core(0, 0),
          {L("buffer_addr", 0), C(4 * 512), Bank("bank_noc_x", 0, 13), Bank("bank_noc_y", 0, 13), Bank("bank_id", 0, 13),
           L("buffer_addr", 1), C(512)});
  br.kernels = {bk};
  br.cbs = {cb_config(one_core(0, 0), 1024, {cb_index(0, DataFormat::UInt32, 1024)})};
  uint64_t bout = layer.alloc(1024, dram_spec(1024), nullptr);
  layer.run(layer.compile(br), {Buf(id), Buf(bout)}, false);
  auto got = download<uint32_t>(layer, bout, 256);
  CHECK(std::memcmp(got.data(), &in[13 * 128], 512) == 0);
  CHECK_EQ(got[128], 4u);  // bank id
  CHECK_EQ(got[129], 0u);  // DRAM bank 4 is NOC node (0, 4)
  CHECK_EQ(got[130], 4u);
  for (uint64_t b : {id, out, bout}) layer.free(b);
  std::printf("  DRAM sharded: accessor gather and bank coordinates: pass\n");
}
ZYX_TEST(model, test_dram_sharded);

// L1-interleaved: pages round-robin over the 64 cores, read with
// InterleavedAddrGen<false>, get_noc_addr_from_bank_id<false> and an
// accessor, written with InterleavedAddrGenFast<false>.
const char* kL1Interleaved = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0), dst = get_arg_val<uint32_t>(1), out = get_arg_val<uint32_t>(2);
  const uint32_t pages = get_arg_val<uint32_t>(3), bank0 = get_arg_val<uint32_t>(4);
  constexpr auto args = TensorAccessorArgs<0>();
  const auto acc = TensorAccessor(args, src, 1024);
  const InterleavedAddrGen<false> s = {.bank_base_address = src, .page_size = 1024};
  const InterleavedAddrGenFast<false> d = {.bank_base_address = dst, .page_size = 1024, .data_format = DataFormat::UInt32};
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 1024};
  const uint32_t buf = get_write_ptr(0);
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(buf);
  for (uint32_t p = 0; p < pages; p++) {
    noc_async_read(get_noc_addr(p, s), buf, 1024);
    noc_async_read_barrier();
    for (uint32_t i = 0; i < 256; i++) w[i] += 1;
    d.noc_async_write_tile(p, buf);
    noc_async_write_barrier();
    noc_async_read_page(p, acc, buf);  // the same page through the accessor
    noc_async_read_barrier();
    noc_async_write(buf, get_noc_addr(p, o), 1024);
    noc_async_write_barrier();
  }
  // Page 0 once more, through its bank id: it is in bank 0 at the base address.
  noc_async_read(get_noc_addr_from_bank_id<false>(bank0, src), buf, 1024);
  noc_async_read_barrier();
  noc_async_write(buf, get_noc_addr(pages, o), 1024);
  noc_async_write_barrier();
}
)";

void test_l1_interleaved(DeviceLayer& layer) {
  const uint32_t pages = 100;
  auto in = iota_values<uint32_t>(pages * 256, 1);
  uint64_t src = upload(layer, in, l1_spec(1024));
  uint64_t dst = layer.alloc(in.size() * 4, l1_spec(1024), nullptr);
  uint64_t out = layer.alloc((pages + 1) * 1024, dram_spec(1024), nullptr);
  ProgramDesc p;
  p.name = "l1_interleaved";
  p.params = {P("src", "global", "u32"), P("dst", "global_mut", "u32"), P("out", "global_mut", "u32")};
  p.buffers = {decl(0, l1_spec(1024))};
  KernelDesc k = kernel("mover", Processor::Riscv1, one_core(3, 3), kL1Interleaved);
  k.compile_args = entries({L("accessor", 0)});
  runtime(k, one_core(3, 3),
          {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_addr", 2), C(pages), Bank("bank_id", 0, 0)});
  p.kernels = {k};
  p.cbs = {cb_config(one_core(3, 3), 1024, {cb_index(0, DataFormat::UInt32, 1024)})};
  layer.run(layer.compile(p), {Buf(src), Buf(dst), Buf(out)}, false);
  std::vector<uint32_t> plus(in.size());
  for (size_t i = 0; i < in.size(); i++) plus[i] = in[i] + 1;
  CHECK(download<uint32_t>(layer, dst, plus.size()) == plus);
  auto o = download<uint32_t>(layer, out, (pages + 1) * 256);
  CHECK(std::equal(in.begin(), in.end(), o.begin()));
  CHECK(std::equal(in.begin(), in.begin() + 256, o.begin() + pages * 256));
  for (uint64_t id : {src, dst, out}) layer.free(id);
  std::printf("  L1 interleaved: address generators, bank id, accessor, host read-back: pass\n");
}
ZYX_TEST(model, test_l1_interleaved);

// ---- multicast -------------------------------------------------------------------

// Core (0,0) waits until the 63 receivers are ready (they increment its
// semaphore 0), multicasts a tile into cb 1 of every core of the grid, then
// sets the receivers' semaphore 1 with noc_semaphore_set_multicast; the
// receivers also read their semaphore 2 (initial value 5).
void test_multicast(DeviceLayer& layer) {
  for (uint32_t loopback : {0u, 1u}) {
    ProgramDesc p;
    p.name = "mcast";
    p.params = {P("out", "global_mut", "u32")};
    CoreRangeSet grid = cores_of({{0, 0, 7, 7}}), sender = one_core(0, 0);
    CoreRangeSet receivers = cores_of({{0, 1, 0, 7}, {1, 0, 7, 7}});
    KernelDesc s = kernel("sender", Processor::Riscv0, sender, shared_kernel("mcast_sender"));
    s.compile_args = entries({C(loopback)});
    runtime(s, sender,
            {L("buffer_addr", 0), CoreNoc(true, 0, 0), CoreNoc(false, 0, 0), CoreNoc(true, 7, 7), CoreNoc(false, 7, 7),
             C(63), C(0), C(1)});
    KernelDesc r = kernel("receiver", Processor::Riscv0, receivers, shared_kernel("mcast_receiver"));
    for (CoreCoord c : receivers.cores())
      runtime(r, one_core(c.row, c.col), {L("buffer_addr", 0), CoreNoc(true, 0, 0), CoreNoc(false, 0, 0), C(c.row * 8 + c.col),
                                           C(0), C(1), C(2)});
    p.kernels = {s, r};
    p.cbs = {cb_config(grid, 1024, {cb_index(0, DataFormat::UInt32, 1024)}),
             cb_config(grid, 1024, {cb_index(1, DataFormat::UInt32, 1024)})};
    p.semaphores = {SemaphoreDesc{sender, 0, 0}, SemaphoreDesc{grid, 1, 0}, SemaphoreDesc{receivers, 2, 5}};
    uint64_t out = layer.alloc(64 * 1024, dram_spec(1024), nullptr);
    uint64_t prog = layer.compile(p);
    for (int rep = 0; rep < 2; rep++) {  // semaphores start from their initial values every run
      std::vector<uint32_t> zero(64 * 256, 0);
      layer.write(out, 0, reinterpret_cast<const uint8_t*>(zero.data()), zero.size() * 4);
      layer.run(prog, {Buf(out)}, false);
      auto got = download<uint32_t>(layer, out, 64 * 256);
      for (uint32_t i = 0; i < 256; i++) CHECK_EQ(got[i], loopback ? 7000 + i : 0xdeadu);
      for (uint32_t c = 1; c < 64; c++) {
        for (uint32_t i = 0; i < 255; i++) CHECK_EQ(got[c * 256 + i], 7000 + i + c);
        CHECK_EQ(got[c * 256 + 255], 5u);
      }
    }
    layer.release(prog);
    layer.free(out);
  }
  std::printf("  sender/receiver multicast on 8x8 with semaphores, with and without loopback: pass\n");
}
ZYX_TEST(model, test_multicast);

// ---- circular buffers ------------------------------------------------------------

// Reports the layout of its circular buffers: write pointers, page sizes,
// page counts and formats of cbs 0, 1 (one shared allocation) and 2.
const char* kCBLayout = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), l1buf = get_arg_val<uint32_t>(1);
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(3));
  w[0] = get_write_ptr(1) - get_write_ptr(0);
  w[1] = get_write_ptr(2) - get_write_ptr(0);
  w[2] = get_tile_size(0);
  w[3] = get_tile_size(1);
  w[4] = (uint32_t)get_dataformat(0);
  w[5] = (uint32_t)get_dataformat(1);
  // cb 0 holds 2 pages, cb 1 holds 4: reserve them all, fill through cb 0, read through cb 1.
  cb_reserve_back(0, 2);
  cb_reserve_back(1, 4);
  volatile tt_l1_ptr uint32_t* a = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  for (uint32_t i = 0; i < 1024; i++) a[i] = 100 + i;
  cb_push_back(1, 4);
  cb_wait_front(1, 4);
  volatile tt_l1_ptr uint32_t* b = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_read_ptr(1));
  w[6] = b[0];
  w[7] = b[1023];
  w[8] = get_write_ptr(4) == l1buf ? 1 : 0;  // cb 4 sits on the L1 buffer
  w[9] = get_write_ptr(0);
  noc_async_write(get_write_ptr(3), get_noc_addr(0u, 0u, out), 64);
  noc_async_write_barrier();
}
)";

void test_cb_configs(DeviceLayer& layer) {
  DeviceDesc dd = layer.describe();
  BufferSpec l1s = sharded_spec(Placement::L1, BufferLayout::HeightSharded, 512, one_core(2, 2), 4, 1, 4, 1);
  uint64_t l1_addr = 0;
  uint64_t l1 = layer.alloc(2048, l1s, &l1_addr);
  uint64_t out = layer.alloc(64, dram_spec(64), nullptr);
  ProgramDesc p;
  p.name = "cb_configs";
  p.params = {P("out", "global_mut", "u32"), P("l1", "global", "u32")};
  CoreRangeSet c = one_core(2, 2);
  KernelDesc k = kernel("layout", Processor::Riscv0, c, kCBLayout);
  runtime(k, c, {L("buffer_addr", 0), L("buffer_addr", 1)});
  p.kernels = {k};
  p.cbs = {cb_config(c, 4096, {cb_index(0, DataFormat::Float16_b, 2048), cb_index(1, DataFormat::Float32, 1024)}),
           cb_config(c, 1000, {cb_index(2, DataFormat::UInt8, 100)}),
           cb_config(c, 64, {cb_index(3, DataFormat::UInt32, 64)}),
           cb_config(c, 2048, {cb_index(4, DataFormat::UInt32, 512)}, 1u)};
  layer.run(layer.compile(p), {Buf(out), Buf(l1)}, false);
  auto w = download<uint32_t>(layer, out, 16);
  CHECK_EQ(w[0], 0u);     // cbs 0 and 1 share one allocation
  CHECK_EQ(w[1], 4096u);  // cb 2 follows it (32-byte aligned)
  CHECK_EQ(w[2], 2048u);
  CHECK_EQ(w[3], 1024u);
  CHECK_EQ(w[4], uint32_t(DataFormat::Float16_b));
  CHECK_EQ(w[5], uint32_t(DataFormat::Float32));
  CHECK_EQ(w[6], 100u);
  CHECK_EQ(w[7], 1123u);
  CHECK_EQ(w[8], 1u);
  CHECK_EQ(w[9] & ((2u << 20) - 1), uint32_t(dd.l1_unreserved_base));  // CBs start at the unreserved base
  layer.free(l1);
  layer.free(out);
  std::printf("  circular buffers: several indices in one allocation, layout order, CB on an L1 buffer: pass\n");
}
ZYX_TEST(model, test_cb_configs);

// ---- page sizes and coordinates --------------------------------------------------

// Sums u32 pages of 4 bytes (page i in bank i % banks) and copies a
// single-page buffer found through its bank id.
const char* kSmallPages = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t words = get_arg_val<uint32_t>(0), n = get_arg_val<uint32_t>(1);
  const uint32_t whole = get_arg_val<uint32_t>(2), whole_bank = get_arg_val<uint32_t>(3), whole_size = get_arg_val<uint32_t>(4);
  const uint32_t out = get_arg_val<uint32_t>(5);
  const InterleavedAddrGen<true> s = {.bank_base_address = words, .page_size = 4};
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  uint32_t sum = 0;
  for (uint32_t i = 0; i < n; i++) {
    noc_async_read(get_noc_addr(i, s), get_write_ptr(0), 4);
    noc_async_read_barrier();
    sum += w[0] * (i + 1);
  }
  // The whole page lands 64 bytes in: a DRAM read keeps the NOC's
  // alignment rule (the same offset within 32 bytes, 64 on Blackhole).
  noc_async_read(get_noc_addr_from_bank_id<true>(whole_bank, whole), get_write_ptr(0) + 64, whole_size);
  noc_async_read_barrier();
  w[0] = sum;
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 16 + whole_size};
  noc_async_write(get_write_ptr(0), get_noc_addr(0, o), 16);
  noc_async_write(get_write_ptr(0) + 64, get_noc_addr(0, o) + 16, whole_size);
  noc_async_write_barrier();
}
)";

void test_small_and_single_pages(DeviceLayer& layer) {
  const uint32_t n = 1001, whole = 10000;
  auto words = iota_values<uint32_t>(n, 3, 5);
  uint64_t iw = upload(layer, words, 4);
  auto one = iota_values<uint8_t>(whole, 1, 3);
  uint64_t io = upload(layer, one, whole);  // a whole-buffer single page (bank 0)
  uint64_t out = layer.alloc(16 + whole, dram_spec(16 + whole), nullptr);
  ProgramDesc p;
  p.name = "small_pages";
  p.params = {P("w", "global", "u32"), P("one", "global", "u8"), P("out", "global_mut", "u8")};
  KernelDesc k = kernel("pages", Processor::Riscv0, one_core(0, 0), kSmallPages);
  runtime(k, one_core(0, 0),
          {L("buffer_addr", 0), L("buffer_pages", 0), L("buffer_addr", 1), Bank("bank_id", 1, 0), L("buffer_size", 1),
           L("buffer_addr", 2)});
  p.kernels = {k};
  p.cbs = {cb_config(one_core(0, 0), 16384, {cb_index(0, DataFormat::UInt8, 16384)})};
  layer.run(layer.compile(p), {Buf(iw), Buf(io), Buf(out)}, false);
  auto got = download<uint8_t>(layer, out, 16 + whole);
  uint32_t sum = 0, want = 0;
  for (uint32_t i = 0; i < n; i++) want += words[i] * (i + 1);
  std::memcpy(&sum, got.data(), 4);
  CHECK_EQ(sum, want);
  CHECK(std::equal(one.begin(), one.end(), got.begin() + 16));
  for (uint64_t id : {iw, io, out}) layer.free(id);
  std::printf("  4-byte pages and a whole-buffer single page: pass\n");
}
ZYX_TEST(model, test_small_and_single_pages);

// Core A writes a token into core B's L1 at the NOC coordinates the host
// passed (core_noc_x/y), B waits for it; DRAM pages are read through the
// bank NOC coordinates of their page.
const char* kCoordWriter = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t bx = get_arg_val<uint32_t>(0), by = get_arg_val<uint32_t>(1);
  const uint32_t src = get_arg_val<uint32_t>(2), page = get_arg_val<uint32_t>(3);
  const uint32_t nx = get_arg_val<uint32_t>(4), ny = get_arg_val<uint32_t>(5), off = get_arg_val<uint32_t>(6);
  // The page, read from its bank by coordinates, forwarded to B's cb 0.
  noc_async_read(get_noc_addr(nx, ny, src + off), get_write_ptr(0), 256);
  noc_async_read_barrier();
  noc_async_write(get_write_ptr(0), get_noc_addr(bx, by, get_write_ptr(0)), 256);
  noc_async_write_barrier();
  noc_semaphore_inc(get_noc_addr(bx, by, get_semaphore(3)), page + 1);
}
)";
const char* kCoordReader = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), expect = get_arg_val<uint32_t>(1);
  noc_semaphore_wait_min(reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_semaphore(3)), expect);
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 256};
  noc_async_write(get_write_ptr(0), get_noc_addr(0, o), 256);
  noc_async_write_barrier();
}
)";

void test_coordinates(DeviceLayer& layer) {
  DeviceDesc dd = layer.describe();
  // The init tables: worker (r, c) is (c + 1, r + 1), DRAM bank b is (0, b), L1 banks row-major.
  CHECK_EQ(dd.noc.worker_x.size(), size_t(dd.grid.cols));
  CHECK_EQ(dd.noc.worker_y.size(), size_t(dd.grid.rows));
  for (uint32_t c = 0; c < dd.grid.cols; c++) CHECK_EQ(dd.noc.worker_x[c], c + 1);
  for (uint32_t r = 0; r < dd.grid.rows; r++) CHECK_EQ(dd.noc.worker_y[r], r + 1);
  CHECK_EQ(dd.noc.dram_banks.size(), size_t(dd.dram_banks));
  for (uint32_t b = 0; b < dd.dram_banks; b++) CHECK(dd.noc.dram_banks[b] == std::make_pair(0u, b));
  CHECK_EQ(dd.l1_bank_cores.size(), size_t(dd.grid.rows * dd.grid.cols));
  CHECK(dd.l1_bank_cores[9] == (CoreCoord{1, 1}));
  CHECK_EQ(dd.l1_alignment, uint64_t(16));
  CHECK_EQ(dd.semaphores, 16u);
  const uint32_t page = 17;  // bank 17 % 12 = 5, second row of the bank
  auto data = iota_values<uint32_t>(64 * 30, 9, 2);
  uint64_t src = upload(layer, data, 256), out = layer.alloc(256, dram_spec(256), nullptr);
  ProgramDesc p;
  p.name = "coords";
  p.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  KernelDesc a = kernel("a", Processor::Riscv0, one_core(5, 6), kCoordWriter);
  runtime(a, one_core(5, 6),
          {CoreNoc(true, 2, 1), CoreNoc(false, 2, 1), L("buffer_addr", 0), C(page), Bank("bank_noc_x", 0, page),
           Bank("bank_noc_y", 0, page), C((page / dd.dram_banks) * 256)});
  KernelDesc b = kernel("b", Processor::Riscv1, one_core(2, 1), kCoordReader);
  runtime(b, one_core(2, 1), {L("buffer_addr", 1), C(page + 1)});
  p.kernels = {a, b};
  CoreRangeSet both = cores_of({{2, 1, 2, 1}, {5, 6, 5, 6}});
  p.cbs = {cb_config(both, 256, {cb_index(0, DataFormat::UInt32, 256)})};
  p.semaphores = {SemaphoreDesc{one_core(2, 1), 3, 0}};
  layer.run(layer.compile(p), {Buf(src), Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 64);
  CHECK(std::equal(got.begin(), got.end(), data.begin() + page * 64));
  layer.free(src);
  layer.free(out);
  std::printf("  NOC tables, core and bank coordinates through get_noc_addr(x, y, addr): pass\n");
}
ZYX_TEST(model, test_coordinates);

// ---- include files and named args ------------------------------------------------

void test_include_files(const std::string& parent) {
  std::string cache = parent + "/include-test-" + std::to_string(getpid());
  auto layer = make_emu_layer("n150", 0, cache);
  ProgramDesc p;
  p.name = "includes";
  p.params = {P("out", "global_mut", "u32")};
  p.include_files = {IncludeFile{"kernels/common.h", "#pragma once\n#include \"more/value.h\"\ninline uint32_t twice(uint32_t v) { return 2 * v; }\n"},
                     IncludeFile{"kernels/more/value.h", "#define MAGIC 21\n"}};
  KernelDesc k = kernel("inc", Processor::Riscv0, one_core(0, 0), R"(
#include "dataflow_api.h"
#include "kernels/common.h"
void kernel_main() {
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  w[0] = twice(MAGIC);
  noc_async_write(get_write_ptr(0), get_noc_addr(0u, 0u, get_arg_val<uint32_t>(0)), 64);
  noc_async_write_barrier();
}
)");
  runtime(k, one_core(0, 0), {L("buffer_addr", 0)});
  k.named_compile_args = {{"block", C(4).entry}};
  p.kernels = {k};
  p.cbs = {cb_config(one_core(0, 0), 64, {cb_index(0, DataFormat::UInt32, 64)})};
  uint64_t out = layer->alloc(64, dram_spec(64), nullptr);
  layer->run(layer->compile(p), {Buf(out)}, false);
  CHECK_EQ(download<uint32_t>(*layer, out, 1)[0], 42u);
  CHECK_EQ(count_objects(cache), size_t(1));
  // The cache key covers the include files' content and the named args.
  p.include_files[1].source = "#define MAGIC 50\n";
  layer->run(layer->compile(p), {Buf(out)}, false);
  CHECK_EQ(download<uint32_t>(*layer, out, 1)[0], 100u);
  CHECK_EQ(count_objects(cache), size_t(2));
  p.kernels[0].named_compile_args[0].second.value = 5;
  layer->compile(p);
  CHECK_EQ(count_objects(cache), size_t(3));
  // Include paths that would leave the build directory.
  for (const char* bad : {"../x.h", "/etc/x.h", "a//b.h", "a/./b.h", ""}) {
    ProgramDesc q = p;
    q.include_files.push_back(IncludeFile{bad, "x"});
    expect_error("invalid_argument", [&] { layer->compile(q); });
  }
  remove_tree(cache);
  std::printf("  include files beside the kernels; cache key over includes and named args: pass\n");
}
ZYX_TEST(model, test_include_files);

// Compile args that read a variable are resolved at the run and built once
// per distinct value; const ones are built at compile.
void test_param_compile_args(const std::string& parent) {
  std::string cache = parent + "/param-test-" + std::to_string(getpid());
  auto layer = make_emu_layer("n150", 0, cache);
  ProgramDesc p;
  p.name = "param_compile_args";
  p.params = {P("out", "global_mut", "u32"), P("k", "variable", "u32")};
  KernelDesc k = kernel("scale", Processor::Riscv0, one_core(0, 0), R"(
#include "dataflow_api.h"
void kernel_main() {
  constexpr uint32_t k = get_compile_time_arg_val(0), base = get_compile_time_arg_val(1);
  static_assert(k < 1000000, "a compile-time constant");
  volatile tt_l1_ptr uint32_t* w = reinterpret_cast<volatile tt_l1_ptr uint32_t*>(get_write_ptr(0));
  w[0] = k * base;
  noc_async_write(get_write_ptr(0), get_noc_addr(0u, 0u, get_arg_val<uint32_t>(0)), 64);
  noc_async_write_barrier();
}
)");
  k.compile_args = entries({L("param", 1), C(10)});
  runtime(k, one_core(0, 0), {L("buffer_addr", 0)});
  p.kernels = {k};
  p.cbs = {cb_config(one_core(0, 0), 64, {cb_index(0, DataFormat::UInt32, 64)})};
  uint64_t out = layer->alloc(64, dram_spec(64), nullptr);
  uint64_t prog = layer->compile(p);
  CHECK_EQ(count_objects(cache), size_t(0));  // nothing to build before the values are known
  for (uint32_t v : {3u, 4u, 3u, 7u}) {
    layer->run(prog, {Buf(out), Val(v)}, false);
    CHECK_EQ(download<uint32_t>(*layer, out, 1)[0], v * 10);
  }
  CHECK_EQ(count_objects(cache), size_t(3));
  remove_tree(cache);
  std::printf("  compile args from variables: built at the run, once per value: pass\n");
}
ZYX_TEST(model, test_param_compile_args);

// ---- wrong programs --------------------------------------------------------------

void test_model_errors(DeviceLayer& layer) {
  // The program's rules are the validator's: these go through it as the
  // server's requests do (checked_compile, checked_alloc).
  const char* empty = "void kernel_main() {}";
  auto base = [&] {
    ProgramDesc p;
    p.name = "bad";
    p.params = {P("a", "global", "u32"), P("n", "variable", "u32")};
    p.kernels = {kernel("k", Processor::Riscv0, cores_of({{0, 0, 1, 1}}), empty)};
    return p;
  };
  // Two kernels on one processor of a core.
  ProgramDesc p = base();
  p.kernels.push_back(kernel("k2", Processor::Riscv0, cores_of({{1, 1, 2, 2}}), empty));
  std::string msg = expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  CHECK(msg.find("core (1, 1)") != std::string::npos);
  // The same cores on different processors are fine.
  p.kernels[1].processor = Processor::Compute;
  layer.release(checked_compile(layer, p));
  // Runtime args outside the kernel's cores, or given twice for a core.
  p = base();
  runtime(p.kernels[0], one_core(3, 3), {C(1)});
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p = base();
  runtime(p.kernels[0], one_core(0, 0), {C(1)});
  runtime(p.kernels[0], cores_of({{0, 0, 0, 1}}), {C(1)});
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  // Overlapping ranges in one set, a range outside the grid, no kernels.
  p = base();
  p.kernels[0].cores = cores_of({{0, 0, 1, 1}, {1, 1, 2, 2}});
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p.kernels[0].cores = cores_of({{0, 0, 8, 0}});
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p.kernels.clear();
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  // Semaphores: id out of range, id twice on a core.
  p = base();
  p.semaphores = {SemaphoreDesc{one_core(0, 0), 16, 0}};
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p.semaphores = {SemaphoreDesc{one_core(0, 0), 2, 0}, SemaphoreDesc{cores_of({{0, 0, 1, 0}}), 2, 1}};
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  // CBs: an index twice on a core, page_bytes not dividing total_bytes, past L1.
  p = base();
  p.cbs = {cb_config(one_core(0, 0), 4096, {cb_index(3, DataFormat::UInt32, 1024)}),
           cb_config(cores_of({{0, 0, 1, 1}}), 4096, {cb_index(3, DataFormat::UInt32, 1024)})};
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p.cbs = {cb_config(one_core(0, 0), 4000, {cb_index(3, DataFormat::UInt32, 1024)})};
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  p.cbs = {cb_config(one_core(0, 0), 1 << 20, {cb_index(0, DataFormat::UInt32, 1024)}),
           cb_config(one_core(0, 0), 1 << 20, {cb_index(1, DataFormat::UInt32, 1024)})};
  msg = expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  CHECK(msg.find("core (0, 0)") != std::string::npos);
  // A named compile arg's name is any string, as on tt-metal; an accessor
  // as a runtime arg is refused.
  p = base();
  p.kernels[0].named_compile_args = {{"not an identifier", C(1).entry}};
  layer.release(checked_compile(layer, p));
  p = base();
  runtime(p.kernels[0], one_core(0, 0), {L("accessor", 0)});
  expect_error("invalid_argument", [&] { checked_compile(layer, p); });
  // Shard specs: too many shards, a height deal in shard rows (3 pages) that
  // do not divide the pages (100), cores outside the grid.
  expect_error("invalid_argument", [&] {
    checked_alloc(layer, 64 * 100, sharded_spec(Placement::L1, BufferLayout::BlockSharded, 64, cores_of({{0, 0, 1, 1}}), 2, 2, 10, 10));
  });
  expect_error("invalid_argument", [&] {
    checked_alloc(layer, 64 * 100, sharded_spec(Placement::L1, BufferLayout::HeightSharded, 64, cores_of({{0, 0, 7, 7}}), 2, 3, 10, 10));
  });
  expect_error("invalid_argument", [&] {
    checked_alloc(layer, 64 * 4, sharded_spec(Placement::L1, BufferLayout::HeightSharded, 64, cores_of({{0, 0, 8, 0}}), 1, 1, 4, 1));
  });
  expect_error("invalid_argument", [&] {  // the tensor holds fewer pages than the size
    checked_alloc(layer, 64 * 100, sharded_spec(Placement::L1, BufferLayout::HeightSharded, 64, cores_of({{0, 0, 7, 7}}), 2, 1, 9, 1));
  });
  expect_error("invalid_argument", [&] {  // DRAM shards name banks as [0, bank]
    checked_alloc(layer, 64 * 4, sharded_spec(Placement::Dram, BufferLayout::HeightSharded, 64, cores_of({{1, 0, 1, 3}}), 1, 1, 4, 1));
  });
  uint64_t half = layer.alloc(1 << 20, l1_spec(1 << 20), nullptr);  // 1 MiB on core (0,0)
  expect_error("out_of_memory", [&] { layer.alloc(1 << 20, l1_spec(1 << 20), nullptr); });
  layer.free(half);
  // A CB over a live L1 buffer: out_of_memory naming the core. The buffer
  // takes L1 from the top down to just above the base.
  DeviceDesc dd = layer.describe();
  uint64_t room = dd.l1_size - dd.l1_unreserved_base;
  uint64_t big = layer.alloc(room - 8192, sharded_spec(Placement::L1, BufferLayout::HeightSharded, room - 8192,
                                                       one_core(1, 1), 1, 1, 1, 1),
                             nullptr);
  p = base();
  p.cbs = {cb_config(cores_of({{0, 0, 1, 1}}), 16384, {cb_index(0, DataFormat::UInt32, 1024)})};
  uint64_t prog = layer.compile(p);
  uint64_t a = layer.alloc(64, dram_spec(64), nullptr);
  msg = expect_error("out_of_memory", [&] { layer.run(prog, {Buf(a), Val(1)}, false); });
  CHECK(msg.find("core (1,1)") != std::string::npos);
  layer.free(big);
  layer.run(prog, {Buf(a), Val(1)}, false);  // fits once the buffer is gone
  layer.release(prog);
  // A CB on a buffer that is not in L1, or on a core that holds none of it,
  // or bigger than the core's share.
  p = base();
  p.cbs = {cb_config(one_core(0, 0), 1024, {cb_index(0, DataFormat::UInt32, 1024)}, 0u)};
  prog = layer.compile(p);
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(a), Val(1)}, false); });
  CHECK(msg.find("DRAM") != std::string::npos);
  uint64_t sh = layer.alloc(1024, sharded_spec(Placement::L1, BufferLayout::HeightSharded, 1024, one_core(5, 5), 1, 1, 1, 1),
                            nullptr);
  expect_error("invalid_argument", [&] { layer.run(prog, {Buf(sh), Val(1)}, false); });
  layer.release(prog);
  uint64_t l1i = layer.alloc(1024, l1_spec(512), nullptr);  // 512 bytes on each core
  prog = layer.compile(p);
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(l1i), Val(1)}, false); });
  CHECK(msg.find("cbs[0].total_bytes: 1024 is more than the 512 bytes per core of param a's L1 buffer") !=
        std::string::npos);
  layer.release(prog);
  p.cbs = {cb_config(one_core(0, 0), 512, {cb_index(0, DataFormat::UInt32, 512)}, 0u)};
  prog = layer.compile(p);
  layer.run(prog, {Buf(l1i), Val(1)}, false);
  layer.release(prog);
  // A buffer that does not match the program's declaration.
  p = base();
  p.buffers = {decl(0, l1_spec(64))};
  prog = layer.compile(p);
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(a), Val(1)}, false); });
  CHECK(msg.find("run.args[0]: buffer " + std::to_string(a) + " is dram interleaved with 64-byte pages, but param "
                 "a's declaration in compile.buffers is l1 interleaved with 64-byte pages") != std::string::npos);
  layer.release(prog);
  // A bank arg for a page past the buffer.
  p = base();
  runtime(p.kernels[0], one_core(0, 0), {Bank("bank_id", 0, 1)});
  prog = layer.compile(p);
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(a), Val(1)}, false); });
  CHECK(msg.find(": page 1 is past the end of param a's buffer (1 pages)") != std::string::npos);
  layer.release(prog);
  // Bank args past the buffer on three cores, which the workers set up in
  // parallel: no kernel runs, and the error is always the first core's in
  // grid order, whichever worker set it up; the layer runs on afterwards.
  p = base();
  runtime(p.kernels[0], one_core(0, 1), {Bank("bank_id", 0, 3)});
  runtime(p.kernels[0], one_core(1, 0), {Bank("bank_id", 0, 4)});
  runtime(p.kernels[0], one_core(1, 1), {Bank("bank_id", 0, 5)});
  prog = layer.compile(p);
  setenv("ZYX_EMU_THREADS", "4", 1);
  for (int i = 0; i < 20; i++) {
    msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(a), Val(1)}, false); });
    CHECK(msg.find(": page 3 is past the end of param a's buffer (1 pages)") != std::string::npos);
  }
  layer.release(prog);
  p = base();
  runtime(p.kernels[0], one_core(1, 1), {Bank("bank_id", 0, 0)});
  prog = layer.compile(p);
  layer.run(prog, {Buf(a), Val(1)}, false);
  unsetenv("ZYX_EMU_THREADS");
  layer.release(prog);
  p = base();
  runtime(p.kernels[0], one_core(0, 0), {Bank("bank_id", 0, 1)});
  prog = layer.compile(p);
  // A value of the wrong kind, and too few args.
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Val(1), Val(1)}, false); });
  CHECK(msg.find("run.args[0]: param a is a buffer") != std::string::npos);
  msg = expect_error("invalid_argument", [&] { layer.run(prog, {Buf(a)}, false); });
  CHECK(msg.find("run.args: 1 args for a program of 2 params") != std::string::npos);
  for (uint64_t id : {a, sh, l1i}) layer.free(id);
  std::printf("  wrong programs and buffers: the right error codes: pass\n");
}
ZYX_TEST(model, test_model_errors);

// ---- stalls -----------------------------------------------------------------------

void test_stalls(const std::string& cache) {
  setenv("ZYX_EMU_TIMEOUT_MS", "300", 1);
  setenv("ZYX_EMU_THREADS", "3", 1);
  auto layer = make_emu_layer("n150", 0, cache);
  // Every core of the grid blocked: the report names all 64, whichever
  // worker holds them.
  ProgramDesc p;
  p.name = "stuck";
  CoreRangeSet grid = cores_of({{0, 0, 7, 7}});
  p.kernels = {kernel("waiter", Processor::Riscv0, grid, "void kernel_main() { cb_wait_front(0, 1); }")};
  p.cbs = {cb_config(grid, 2048, {cb_index(0, DataFormat::Float16_b, 2048)})};
  uint64_t prog = layer->compile(p);
  std::string msg = expect_error("deadlock", [&] { layer->run(prog, {}, false); });
  for (uint32_t r = 0; r < 8; r++)
    for (uint32_t c = 0; c < 8; c++) {
      std::string core = "core (" + std::to_string(r) + "," + std::to_string(c) + ") waiter (riscv_0) waiting on cb 0";
      if (msg.find(core) == std::string::npos) throw Failure("deadlock report lacks " + core + ": " + msg);
    }
  // Long real work on one core while another waits for it is no deadlock,
  // even when the two are on different workers.
  setenv("ZYX_EMU_THREADS", "2", 1);
  ProgramDesc busy;
  busy.name = "busy";
  KernelDesc worker = kernel("worker", Processor::Riscv0, one_core(0, 0), R"(
#include <chrono>
#include "dataflow_api.h"
void kernel_main() {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
  volatile uint64_t spins = 0;
  while (std::chrono::steady_clock::now() < until) spins = spins + 1;
  noc_semaphore_inc(get_noc_addr(get_arg_val<uint32_t>(0), get_arg_val<uint32_t>(1), get_semaphore(0)), 1);
}
)");
  runtime(worker, one_core(0, 0), {CoreNoc(true, 0, 1), CoreNoc(false, 0, 1)});
  KernelDesc waiter = kernel("waiter", Processor::Riscv0, one_core(0, 1),
                             "void kernel_main() { noc_semaphore_wait(reinterpret_cast<volatile uint32_t*>(get_semaphore(0)), 1); }");
  busy.kernels = {worker, waiter};
  busy.semaphores = {SemaphoreDesc{one_core(0, 1), 0, 0}};
  layer->run(layer->compile(busy), {}, false);
  unsetenv("ZYX_EMU_THREADS");
  unsetenv("ZYX_EMU_TIMEOUT_MS");
  std::printf("  stall reports name all 64 blocked cores; long work on another worker is no deadlock: pass\n");
}
ZYX_TEST(stalls, test_stalls);

}  // namespace

