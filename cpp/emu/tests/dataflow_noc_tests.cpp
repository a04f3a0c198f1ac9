// Data movement API tests: the stateful NOC calls (set_state/with_state,
// one packet, transaction ids, DRAM-sharded reads), inline writes,
// multicast (writes, semaphores, atomic increments; with and without the
// sender), the integer-literal get_noc_addr overload, logical coordinates,
// MEM_ZEROS, get_local_cb_interface, tensor-accessor args in tt-metal's
// layout, and the object API (Noc, CircularBuffer, DataflowBuffer,
// Semaphore, CoreLocalMem, endpoints), each checked against values computed
// on the host.
#include <cstdlib>

#include "harness.hpp"

using namespace zyx;
using namespace zyx_test;

namespace {

// Word w of page p of the source buffer.
uint32_t src_word(uint32_t p, uint32_t w) { return p * 1000 + w + 7; }

// 12 pages of 128 bytes (32 words): page p lives in DRAM bank p (n150).
std::vector<uint32_t> source_pages() {
  std::vector<uint32_t> v(12 * 32);
  for (uint32_t p = 0; p < 12; p++)
    for (uint32_t w = 0; w < 32; w++) v[p * 32 + w] = src_word(p, w);
  return v;
}

// Reads page 3 (bank 3) into L1 through every stateful read form, then
// writes it to page 5 (bank 5) of the output through every stateful write
// form. A form that dropped the state's coordinates would hit bank 0.
const char* kStateful = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_arg_val<uint32_t>(0), out = get_arg_val<uint32_t>(1);
  const uint32_t l1 = get_write_ptr(0);
  // Words 0-7: read_set_state + read_with_state.
  noc_async_read_set_state(get_noc_addr_from_bank_id<true>(3, src));
  noc_async_read_with_state(src, l1, 32);
  // Words 8-11: one-packet state (coordinates and size), then local addresses.
  noc_async_read_one_packet_set_state(get_noc_addr_from_bank_id<true>(3, src), 16);
  noc_async_read_one_packet_with_state(src + 32, l1 + 32);
  // Words 12-15: with a transaction id (base + offset).
  noc_async_read_set_trid(3);
  noc_async_read_one_packet_with_state_with_trid(src, 48, l1 + 48, 3);
  noc_async_read_barrier_with_trid(3);
  // Words 16-23: the DRAM-sharded forms (state from bank id and page size).
  uint32_t bank_addr = noc_async_read_tile_dram_sharded_set_state<false>(src, 16, 3);
  noc_async_read_tile_dram_sharded_with_state(bank_addr, 64, l1 + 64);
  noc_async_read_tile_dram_sharded_set_trid(2);
  noc_async_read_tile_dram_sharded_with_state_with_trid(bank_addr, 80, l1 + 80, 2);
  // Words 24-31: one packet, and the template form.
  noc_async_read_one_packet(get_noc_addr_from_bank_id<true>(3, src + 96), l1 + 96, 16);
  noc_async_read<NOC_MAX_BURST_SIZE>(get_noc_addr_from_bank_id<true>(3, src + 112), l1 + 112, 16);
  noc_async_read_inc_num_issued(1);
  noc_async_read_barrier();
  noc_async_read_barrier(noc_index);
  // Writes to bank 5.
  noc_async_write_one_packet_set_state(get_noc_addr_from_bank_id<true>(5, out), 32);
  noc_async_write_one_packet_with_state(l1, out);
  noc_async_write_set_trid(4);
  noc_async_write_one_packet_with_trid(l1 + 32, get_noc_addr_from_bank_id<true>(5, out + 32), 32, 4);
  noc_async_write_one_packet_with_trid_set_state(get_noc_addr_from_bank_id<true>(5, out));
  noc_async_write_one_packet_with_trid_with_state(l1 + 64, out + 64, 32, 5);
  noc_async_write_barrier_with_trid(4);
  noc_async_write_flushed_with_trid(5);
  noc_async_write_one_packet(l1 + 96, get_noc_addr_from_bank_id<true>(5, out + 96), 16);
  noc_async_write<NOC_MAX_BURST_SIZE + 1, true, true>(l1 + 112, get_noc_addr_from_bank_id<true>(5, out + 112), 16);
  noc_async_writes_flushed();
  noc_async_posted_writes_flushed();
  noc_async_write_barrier();
  noc_async_write_barrier(noc_index);
  noc_async_atomic_barrier();
  noc_async_full_barrier();
  reset_noc_trid_barrier_counter();
}
)";

void test_stateful(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "stateful";
  p.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  p.reader.source = kStateful;
  p.reader.runtime_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.cbs = {CB(0, "UInt32", 128, 1)};
  auto in = source_pages();
  uint64_t src = upload(layer, in, 128);
  uint64_t out = upload(layer, std::vector<uint32_t>(12 * 32, 0), 128);
  uint64_t prog = layer.compile(one_group_program(p, 1, 1));
  layer.run(prog, {Buf(src), Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 12 * 32);
  for (uint32_t w = 0; w < 32; w++) CHECK_EQ(got[5 * 32 + w], src_word(3, w));
  for (uint32_t pg = 0; pg < 12; pg++)
    if (pg != 5)
      for (uint32_t w = 0; w < 32; w++) CHECK_EQ(got[pg * 32 + w], 0u);
  // A one-packet call larger than a packet is a run error.
  p.reader.source = R"(
void kernel_main() { noc_async_read_one_packet(get_noc_addr_from_bank_id<true>(0, get_arg_val<uint32_t>(0)), get_write_ptr(0), 8200); }
)";
  p.cbs = {CB(0, "UInt32", 8704, 1)};
  std::string msg = expect_error("run_error", [&] { layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src), Buf(out)}, false); });
  CHECK(msg.find("larger than one packet") != std::string::npos);
  // A transaction id past 0xF is a run error.
  p.reader.source = "void kernel_main() { noc_async_read_set_trid(16); }";
  msg = expect_error("run_error", [&] { layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src), Buf(out)}, false); });
  CHECK(msg.find("beyond 0xF") != std::string::npos);
  layer.release(prog);
  layer.free(src);
  layer.free(out);
}
ZYX_TEST(noc, test_stateful);

// Core (0,0) sends to the 2x3 rectangle. Each core's buffer (cb 0, 64
// words) starts as 0xEEEEEEEE; every core copies it and semaphores 1-4 to
// the output at core_index * 64 words.
const char* kMulticast = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), core = get_arg_val<uint32_t>(1);
  const uint32_t buf = get_write_ptr(0), scratch = get_write_ptr(1);
  volatile uint32_t* b = reinterpret_cast<volatile uint32_t*>(buf);
  for (int i = 0; i < 64; i++) b[i] = 0xEEEEEEEEu;
  auto sem = [](uint32_t id) { return reinterpret_cast<volatile uint32_t*>(get_semaphore(id)); };
  const uint32_t x0 = get_arg_val<uint32_t>(2), y0 = get_arg_val<uint32_t>(3);  // the rectangle's first core
  auto rect = [&](uint32_t addr) { return get_noc_multicast_addr(x0, y0, x0 + 2, y0 + 1, addr); };
  if (core == 0) {
    noc_semaphore_wait(sem(0), 5);  // every receiver has filled its buffer
    volatile uint32_t* s = reinterpret_cast<volatile uint32_t*>(scratch);
    for (int i = 0; i < 8; i++) s[i] = 0x100 + i;
    s[8] = 7, s[12] = 9, s[4] = 11;  // 16-byte aligned as the semaphores (the NOC's alignment rule)
    noc_async_write_multicast(scratch, rect(buf + 4 * 16), 16, 5);             // words 16-19, not self
    noc_async_write_multicast_loopback_src(scratch, rect(buf + 4 * 20), 16, 6);  // words 20-23, self too
    noc_async_write_multicast_one_packet(scratch, rect(buf + 4 * 24), 8, 5);   // words 24-25
    noc_inline_dw_write(get_noc_addr(x0 + 1, y0, buf + 4 * 28), 0x12345678u, 0x5);  // core (0,1): bytes 0, 2
    noc_inline_mcast_dw_write(rect(buf + 4 * 29), 0xCAFEF00Du);                   // word 29, not self
    noc_inline_dw_write_set_state<false, true>(get_noc_addr(x0 + 2, y0 + 1, buf + 4 * 30), 0xAAAA0001u);
    noc_inline_dw_write_with_state(0);                                           // core (1,2) word 30
    noc_inline_dw_write_with_state<true, true, false, false, true>(0xBBBB0002u, buf + 4 * 31);  // word 31
    noc_semaphore_set_multicast(scratch + 32, rect(get_semaphore(1)), 5);       // 7, not self
    noc_semaphore_set_multicast_loopback_src(scratch + 48, rect(get_semaphore(2)), 6);  // 9, self too
    noc_semaphore_inc_multicast(rect(get_semaphore(3)), 2, 5);                  // +2, not self
    noc_semaphore_set_remote(scratch + 16, get_noc_addr(x0, y0 + 1, get_semaphore(4)));  // core (1,0): 11
    noc_async_write_barrier();
    noc_semaphore_inc_multicast(rect(get_semaphore(5)), 1, 5);                  // done
  } else {
    noc_semaphore_inc(get_noc_addr(x0, y0, get_semaphore(0)), 1);
    noc_semaphore_wait(sem(5), 1);
  }
  b[32] = *sem(1), b[33] = *sem(2), b[34] = *sem(3), b[35] = *sem(4);
  noc_async_write(buf, get_noc_addr_from_bank_id<true>(0, out + 256 * core), 256);
  noc_async_write_barrier();
}
)";

void test_multicast(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "multicast";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kMulticast;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), CoreNoc(true, 1, 2), CoreNoc(false, 1, 2)};
  p.cbs = {CB(0, "UInt32", 256, 1), CB(1, "UInt32", 64, 1)};
  p.semaphores = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}};
  uint64_t out = layer.alloc(6 * 256, dram_spec(6 * 256), nullptr);
  // The rectangle starts at core (1,2) of the grid, so coordinates are not
  // the origin's.
  uint64_t prog = layer.compile(one_group_program(p, 2, 3, 1, 2));
  layer.run(prog, {Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 6 * 64);
  const uint32_t E = 0xEEEEEEEEu;
  for (uint32_t c = 0; c < 6; c++) {
    const uint32_t* w = &got[c * 64];
    bool self = c == 0;
    for (uint32_t i = 0; i < 4; i++) {
      CHECK_EQ(w[16 + i], self ? E : 0x100 + i);
      CHECK_EQ(w[20 + i], 0x100 + i);
    }
    for (uint32_t i = 0; i < 2; i++) CHECK_EQ(w[24 + i], self ? E : 0x100 + i);
    CHECK_EQ(w[26], E);
    CHECK_EQ(w[28], c == 1 ? 0xEE34EE78u : E);
    CHECK_EQ(w[29], self ? E : 0xCAFEF00Du);
    CHECK_EQ(w[30], c == 5 ? 0xAAAA0001u : E);
    CHECK_EQ(w[31], c == 5 ? 0xBBBB0002u : E);
    CHECK_EQ(w[32], self ? 0u : 7u);
    CHECK_EQ(w[33], 9u);
    CHECK_EQ(w[34], self ? 0u : 2u);
    CHECK_EQ(w[35], c == 3 ? 11u : 0u);
  }
  // Inline writes reach only L1: a DRAM target is a run error.
  p.reader.source = "void kernel_main() { noc_inline_dw_write(get_noc_addr_from_bank_id<true>(0, 0), 1); }";
  p.semaphores.clear();
  std::string msg = expect_error("run_error", [&] { layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(out)}, false); });
  CHECK(msg.find("reach only L1") != std::string::npos);
  layer.release(prog);
  layer.free(out);
}
ZYX_TEST(noc, test_multicast);

// Addresses, coordinates, MEM_ZEROS and the circular-buffer interface.
const char* kMisc = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), core = get_arg_val<uint32_t>(1), dram = get_arg_val<uint32_t>(2);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1));
  uint64_t a = get_noc_addr(1, 0, 0x1234);  // integer literals: the (x, y, addr) form
  w[0] = static_cast<uint32_t>(a), w[1] = static_cast<uint32_t>(a >> 32);
  InterleavedAddrGen<true> g{.bank_base_address = dram, .page_size = 64};
  uint64_t b = get_noc_addr(13, g, 8);      // page 13: bank 1, second row
  w[2] = static_cast<uint32_t>(b), w[3] = static_cast<uint32_t>(b >> 32);
  w[4] = get_absolute_logical_x(), w[5] = get_absolute_logical_y();
  w[6] = get_relative_logical_x(), w[7] = get_relative_logical_y();
  w[8] = my_x[0], w[9] = my_y[0], w[10] = my_x[1], w[11] = my_y[noc_index];
  w[12] = get_num_dram_banks(), w[13] = MEM_ZEROS_SIZE;
  // MEM_ZEROS: a region of zeros to copy from.
  volatile uint8_t* z = reinterpret_cast<volatile uint8_t*>(get_write_ptr(2));
  for (uint32_t i = 0; i < MEM_ZEROS_SIZE + 4; i++) z[i] = 0xFF;
  noc_async_read(get_noc_addr(MEM_ZEROS_BASE), get_write_ptr(2), MEM_ZEROS_SIZE);
  noc_async_read_barrier();
  uint32_t nonzero = 0;
  for (uint32_t i = 0; i < MEM_ZEROS_SIZE; i++) nonzero += z[i] != 0;
  w[14] = nonzero, w[15] = z[MEM_ZEROS_SIZE];
  // get_local_cb_interface: cb 0 has 4 pages of 64 bytes.
  LocalCBInterface& cb = get_local_cb_interface(0);
  const uint32_t base = get_write_ptr(0);
  w[16] = cb.fifo_page_size, w[17] = cb.fifo_num_pages, w[18] = cb.fifo_size;
  w[19] = cb.fifo_rd_ptr == get_read_ptr(0);
  w[20] = cb.fifo_limit - cb.fifo_size == base;
  cb.fifo_wr_ptr += cb.fifo_page_size;      // the kernel moves its write pointer
  w[21] = get_write_ptr(0) == base + 64;
  cb_reserve_back(0, 1);
  cb_push_back(0, 1);
  w[22] = cb.tiles_received;                 // the view follows the section's calls
  w[23] = cb.fifo_wr_ptr == base + 128;
  noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out + 96 * core), 96);
}
)";

void test_misc(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "misc";
  p.params = {P("out", "global_mut", "u32"), P("dram", "global", "u32")};
  p.reader.source = kMisc;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), L("buffer_addr", 1)};
  p.cbs = {CB(0, "UInt32", 64, 4), CB(1, "UInt32", 128, 1), CB(2, "UInt32", 1024, 1)};
  uint64_t out = layer.alloc(4 * 96, dram_spec(4 * 96), nullptr);
  uint64_t daddr = 0;
  uint64_t dram = layer.alloc(64 * 24, dram_spec(64), &daddr);
  uint64_t prog = layer.compile(one_group_program(p, 2, 2, 3, 4));
  layer.run(prog, {Buf(out), Buf(dram)}, false);
  auto got = download<uint32_t>(layer, out, 4 * 24);
  for (uint32_t c = 0; c < 4; c++) {
    const uint32_t* w = &got[c * 24];
    uint32_t row = 3 + c / 2, col = 4 + c % 2;
    uint64_t a = (uint64_t(w[1]) << 32) | w[0];
    CHECK_EQ(a, (uint64_t(0) << 42) | (uint64_t(1) << 36) | 0x1234u);
    uint64_t b = (uint64_t(w[3]) << 32) | w[2];
    CHECK_EQ(b, (uint64_t(1) << 42) | (uint64_t(0) << 36) | (daddr + 64 + 8));  // bank 1, row 1
    CHECK_EQ(w[4], col);
    CHECK_EQ(w[5], row);
    CHECK_EQ(w[6], col);
    CHECK_EQ(w[7], row);
    CHECK_EQ(w[8], col + 1);
    CHECK_EQ(w[9], row + 1);
    CHECK_EQ(w[10], col + 1);
    CHECK_EQ(w[11], row + 1);
    CHECK_EQ(w[12], 12u);
    CHECK_EQ(w[13], 512u);
    CHECK_EQ(w[14], 0u);
    CHECK_EQ(w[15], 0xFFu);
    CHECK_EQ(w[16], 64u);
    CHECK_EQ(w[17], 4u);
    CHECK_EQ(w[18], 256u);
    CHECK_EQ(w[19], 1u);
    CHECK_EQ(w[20], 1u);
    CHECK_EQ(w[21], 1u);
    CHECK_EQ(w[22], 1u);
    CHECK_EQ(w[23], 1u);
  }
  // Moving a pointer off the buffer's pages is a run error naming it.
  p.reader.source = R"(
void kernel_main() { get_local_cb_interface(0).fifo_rd_ptr += 3; cb_wait_front(0, 1); }
)";
  std::string msg = expect_error("run_error", [&] { layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(out), Buf(dram)}, false); });
  CHECK(msg.find("fifo_rd_ptr") != std::string::npos);
  CHECK(msg.find("not the start of a page") != std::string::npos);
  layer.release(prog);
  layer.free(out);
  layer.free(dram);
}
ZYX_TEST(noc, test_misc);

// The object API. The reader streams pages of src through cb 0 with
// Noc::async_read from a TensorAccessor; the writer sends them to dst with
// Noc::async_write. On the way the reader also exercises the endpoints,
// CoreLocalMem, DataflowBuffer (cb 1) and Semaphore, and leaves results in
// page `pages` of dst.
const char* kObjectsReader = R"(
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_buffer.h"
#include "experimental/noc_semaphore.h"
#include "experimental/core_local_mem.h"
#include "experimental/endpoints.h"
void kernel_main() {
  constexpr auto sa = TensorAccessorArgs<0>();
  constexpr auto da = TensorAccessorArgs<sa.next_compile_time_args_offset()>();
  // tt-metal's layout: an interleaved accessor is two words, so a compile
  // arg after two of them is at index 4.
  static_assert(da.next_compile_time_args_offset() == 4);
  constexpr uint32_t pages = get_compile_time_arg_val(4);
  constexpr auto both = make_tensor_accessor_args_tuple<2, 0>();
  static_assert(std::get<1>(both).next_compile_time_args_offset() == 4);
  static_assert(make_tensor_accessor_args<2>().get_aligned_page_size() == 128);
  const uint32_t src = get_arg_val<uint32_t>(0);
  const auto s = TensorAccessor(sa, src, 128);
  Noc noc;
  CircularBuffer cb(0);
  for (uint32_t p = 0; p < pages; p++) {
    cb.reserve_back(1);
    if (p % 3 == 0)
      noc.async_read(s, cb, 128, {.page_id = p}, {.offset_bytes = 0});
    else if (p % 3 == 1)  // the earlier template form, with a transaction id
      noc.async_read<Noc::TxnIdMode::ENABLED>(s, cb, 128, {.page_id = p}, {}, NOC_UNICAST_WRITE_VC, 2);
    else  // a DRAM bank endpoint: page p is in bank p % 12 at row p / 12
      noc.async_read<NocOptions::TXN_ID>(AllocatorBank<AllocatorBankType::DRAM>{}, cb, 128,
                                          {.bank_id = p % 12, .addr = src + (p / 12) * 128}, {}, {.trid = 3});
    noc.async_read_barrier();
    noc.async_read_barrier<NocOptions::TXN_ID>({.trid = 3});
    cb.push_back(1);
  }
  // Stateful Noc reads of page 0 into cb 2, through a unicast endpoint.
  CircularBuffer scratch(2);
  uint64_t page0 = s.get_noc_addr(0);
  noc.set_async_read_state(UnicastEndpoint{}, 64, {.noc_x = uint32_t(NOC_UNICAST_ADDR_X(page0)),
                                                   .noc_y = uint32_t(NOC_UNICAST_ADDR_Y(page0)), .addr = 0});
  noc.async_read_with_state(UnicastEndpoint{}, scratch, 64, {.addr = uint32_t(NOC_LOCAL_ADDR_OFFSET(page0))},
                            {.offset_bytes = 0});
  // CoreLocalMem over the scratch page.
  experimental::CoreLocalMem<uint32_t> m(scratch.get_write_ptr());
  uint32_t first = m[0], second = *(m + 1);
  ++m;
  uint32_t via_inc = *m;
  // A DataflowBuffer (cb 1) carries results to the writer.
  DataflowBuffer dfb(1);
  dfb.reserve_back(1);
  {
    auto lock = dfb.scoped_write_lock();
    auto out = lock.get_ptr<uint32_t>();
    out[0] = first, out[1] = second, out[2] = via_inc;
    out[3] = dfb.get_entry_size(), out[4] = dfb.get_total_num_entries(), out[5] = dfb.get_total_size_bytes();
    out[6] = (m - experimental::CoreLocalMem<uint32_t>(scratch.get_write_ptr()));
    // Semaphore: the other core adds 3; down(3) waits for it and takes it off.
    experimental::Semaphore<> sem(0);
    sem.down(3);
    out[7] = *reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    sem.up(5);
    sem.wait_min(5);
    out[8] = *reinterpret_cast<volatile uint32_t*>(get_semaphore(0));
    sem.set(2);
    sem.wait(2);
    out[9] = noc.is_local_addr(get_noc_addr(0x100)) ? 1 : 0;
    out[10] = noc.is_local_addr(s.get_noc_addr(0)) ? 1 : 0;
    out[11] = pages;
  }
  dfb.push_back(1);
}
)";

const char* kObjectsWriter = R"(
#include "api/dataflow/dataflow_api.h"
#include "api/dataflow/noc.h"
#include "api/dataflow/circular_buffer.h"
#include "api/dataflow/dataflow_buffer.h"
void kernel_main() {
  constexpr auto sa = TensorAccessorArgs<0>();
  constexpr auto da = TensorAccessorArgs<sa.next_compile_time_args_offset()>();
  constexpr uint32_t pages = get_compile_time_arg_val(da.next_compile_time_args_offset());
  const uint32_t dst = get_arg_val<uint32_t>(0);
  const auto d = TensorAccessor(da, dst, 128);
  Noc noc(1);
  CircularBuffer cb(0);
  for (uint32_t p = 0; p < pages; p++) {
    cb.wait_front(1);
    if (p % 2 == 0)
      noc.async_write(cb, d, 128, {.offset_bytes = 0}, {.page_id = p});
    else  // the earlier template form: posted
      noc.async_write<Noc::TxnIdMode::DISABLED, Noc::ResponseMode::POSTED>(use<CircularBuffer::AddrSelector::READ_PTR>(cb), d, 128, {}, {.page_id = p});
    noc.async_write_barrier();
    noc.async_writes_flushed();
    cb.pop_front(1);
  }
  DataflowBuffer dfb(1);
  dfb.wait_front(1);
  noc.async_write(dfb, d, 64, {}, {.page_id = pages});
  noc.async_write_barrier();
  dfb.pop_front(1);
  // Zeros: a scratch entry zeroed locally, then copied to DRAM page pages + 1.
  CircularBuffer z(2);
  z.reserve_back(1);
  noc.async_write_zeros(z, 128);
  noc.write_zeros_l1_barrier();
  noc.async_write_zeros(d, 128, {.page_id = pages + 1}, z);
  noc.write_zeros_dram_barrier();
  noc.async_atomic_barrier();
  noc.async_full_barrier();
}
)";

// The second core adds 3 to the first core's semaphore.
const char* kSemaphoreUp = R"(
#include "experimental/noc_semaphore.h"
void kernel_main() {
  experimental::Semaphore<> sem(0);
  Noc noc;
  sem.up(noc, my_x[0] - 1, my_y[0], 3);
}
)";

void test_objects(DeviceLayer& layer) {
  const uint32_t pages = 30;
  ProgramDesc d;
  d.name = "objects";
  d.params = {P("src", "global", "u32"), P("dst", "global_mut", "u32")};
  KernelDesc r = kernel("reader", Processor::Riscv0, one_core(0, 0), kObjectsReader);
  r.compile_args = entries({L("accessor", 0), L("accessor", 1), C(pages)});
  runtime(r, one_core(0, 0), {L("buffer_addr", 0)});
  KernelDesc w = kernel("writer", Processor::Riscv1, one_core(0, 0), kObjectsWriter);
  w.compile_args = entries({L("accessor", 0), L("accessor", 1), C(pages)});
  runtime(w, one_core(0, 0), {L("buffer_addr", 1)});
  KernelDesc up = kernel("up", Processor::Riscv0, one_core(0, 1), kSemaphoreUp);
  d.kernels = {r, w, up};
  d.cbs = {cb_config(one_core(0, 0), 256, {cb_index(0, DataFormat::UInt32, 128)}),
           cb_config(one_core(0, 0), 64, {cb_index(1, DataFormat::UInt32, 64)}),
           cb_config(one_core(0, 0), 128, {cb_index(2, DataFormat::UInt32, 128)})};
  d.semaphores = {SemaphoreDesc{cores_of({{0, 0, 0, 1}}), 0, 0}};
  std::vector<uint32_t> in(pages * 32);
  for (uint32_t i = 0; i < in.size(); i++) in[i] = 0x5000 + i * 3;
  uint64_t src = upload(layer, in, 128);
  std::vector<uint32_t> ones((pages + 2) * 32, 0x11111111u);
  uint64_t dst = upload(layer, ones, 128);
  uint64_t prog = layer.compile(d);
  layer.run(prog, {Buf(src), Buf(dst)}, false);
  auto got = download<uint32_t>(layer, dst, (pages + 2) * 32);
  for (uint32_t i = 0; i < pages * 32; i++) CHECK_EQ(got[i], in[i]);
  const uint32_t* res = &got[pages * 32];
  CHECK_EQ(res[0], in[0]);
  CHECK_EQ(res[1], in[1]);
  CHECK_EQ(res[2], in[1]);
  CHECK_EQ(res[3], 64u);
  CHECK_EQ(res[4], 1u);
  CHECK_EQ(res[5], 64u);
  CHECK_EQ(res[6], 1u);
  CHECK_EQ(res[7], 0u);
  CHECK_EQ(res[8], 5u);
  CHECK_EQ(res[9], 1u);
  CHECK_EQ(res[10], 0u);
  CHECK_EQ(res[11], pages);
  for (uint32_t i = 16; i < 32; i++) CHECK_EQ(res[i], 0x11111111u);  // past the 64 bytes written
  for (uint32_t i = 0; i < 32; i++) CHECK_EQ(got[(pages + 1) * 32 + i], 0u);
  layer.release(prog);
  layer.free(src);
  layer.free(dst);
}
ZYX_TEST(noc, test_objects);


// The rest of the listed calls, each with a result the host checks:
// common args and their L1 address, the address generators' page reads and
// writes, circular-buffer queries, noc_semaphore_set, TensorAccessor page
// calls, get_noc_addr with an accessor.
const char* kSweep = R"(
#include "dataflow_api.h"
void kernel_main() {
  const uint32_t src = get_common_arg_val<uint32_t>(0), out = get_common_arg_val<uint32_t>(1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(1));
  w[0] = *reinterpret_cast<volatile uint32_t*>(get_common_arg_addr(1)) == out;
  // Page 5 of src (64-byte pages) through each generator into cb 0, then to
  // page 7 of out through each generator; out page 9 from the accessor.
  InterleavedAddrGen<true> g{.bank_base_address = src, .page_size = 64};
  InterleavedAddrGenFast<true> gf{.bank_base_address = src, .page_size = 64, .data_format = DataFormat::UInt32};
  InterleavedPow2AddrGenFast<true> gp{.bank_base_address = src, .log_base_2_of_page_size = 6};
  InterleavedAddrGen<true> og{.bank_base_address = out, .page_size = 64};
  InterleavedAddrGenFast<true> ogf{.bank_base_address = out, .page_size = 64, .data_format = DataFormat::UInt32};
  uint32_t l1 = get_write_ptr(0);
  noc_async_read_page(5, g, l1);
  noc_async_read_tile(5, gf, l1 + 64);
  noc_async_read(gp.get_noc_addr(5), l1 + 128, 64);
  noc_async_read(get_dram_noc_addr(5, 64, src), l1 + 192, 64);
  noc_async_read_barrier();
  w[1] = 0;
  for (int i = 0; i < 64; i++) w[1] += reinterpret_cast<volatile uint32_t*>(l1)[i];  // four copies
  noc_async_write_page(7, og, l1);
  noc_async_write_tile(8, ogf, l1 + 64, noc_index);
  noc_async_write_page(6, og, l1 + 128, 32);  // the first 32 bytes only
  constexpr auto oa = TensorAccessorArgs<0>();
  const auto acc = TensorAccessor(oa, out, 64);
  noc_async_write_page(9, acc, l1 + 192);
  w[2] = get_noc_addr(9, acc) == acc.get_noc_addr(9);
  noc_async_write_barrier();
  // Circular-buffer queries on cb 0 (2 pages of 256 bytes).
  w[3] = cb_pages_reservable_at_back(0, 2), w[4] = cb_pages_available_at_front(0, 1);
  cb_reserve_back(0, 1);
  cb_push_back(0, 1);
  w[5] = cb_pages_available_at_front(0, 1), w[6] = cb_pages_reservable_at_back(0, 2);
  CircularBuffer cb(0);
  w[7] = cb.pages_available_at_front(1), w[8] = cb.get_tile_size(), w[9] = static_cast<uint32_t>(get_dataformat(0));
  w[10] = get_tile_size(0);
  volatile uint32_t* sem = reinterpret_cast<volatile uint32_t*>(get_semaphore(6));
  noc_semaphore_set(sem, 77);
  w[11] = *sem;
  noc_semaphore_set(reinterpret_cast<volatile uint32_t*>(uintptr_t(get_semaphore(6) & 0x1fffff)), 78);  // a plain offset
  w[12] = *sem;
  constexpr SliceRange r = SliceRange::hw0_32_16();
  w[13] = r.h1 * 100 + r.hs;
  noc_async_write(get_write_ptr(1), get_noc_addr_from_bank_id<true>(0, out), 64);
}
)";

void test_sweep(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "sweep";
  p.params = {P("src", "global", "u32"), P("out", "global_mut", "u32")};
  p.reader.source = kSweep;
  p.reader.compile_args = {L("accessor", 1)};
  p.reader.common_args = {L("buffer_addr", 0), L("buffer_addr", 1)};
  p.cbs = {CB(0, "UInt32", 256, 2), CB(1, "UInt32", 64, 1)};
  std::vector<uint32_t> in(24 * 16);
  for (uint32_t i = 0; i < in.size(); i++) in[i] = i * 5 + 1;
  uint64_t src = upload(layer, in, 64);
  uint64_t out = upload(layer, std::vector<uint32_t>(24 * 16, 0xABABABABu), 64);
  layer.run(layer.compile(one_group_program(p, 1, 1)), {Buf(src), Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 24 * 16);
  uint32_t page_sum = 0;
  for (uint32_t i = 0; i < 16; i++) page_sum += in[5 * 16 + i];
  CHECK_EQ(got[0], 1u);
  CHECK_EQ(got[1], 4 * page_sum);
  CHECK_EQ(got[2], 1u);
  CHECK_EQ(got[3], 1u);
  CHECK_EQ(got[4], 0u);
  CHECK_EQ(got[5], 1u);
  CHECK_EQ(got[6], 0u);
  CHECK_EQ(got[7], 1u);
  CHECK_EQ(got[8], 256u);
  CHECK_EQ(got[9], 24u);  // UInt32
  CHECK_EQ(got[10], 256u);
  CHECK_EQ(got[11], 77u);
  CHECK_EQ(got[12], 78u);
  CHECK_EQ(got[13], 3216u);
  for (uint32_t pg : {7u, 8u, 9u})
    for (uint32_t i = 0; i < 16; i++) CHECK_EQ(got[pg * 16 + i], in[5 * 16 + i]);
  for (uint32_t i = 0; i < 16; i++) CHECK_EQ(got[6 * 16 + i], i < 8 ? in[5 * 16 + i] : 0xABABABABu);
  layer.free(src);
  layer.free(out);
}
ZYX_TEST(noc, test_sweep);

// The object API's multicast and stateful writes: core 0 of a 1x3 row sends
// to the other two with Noc::async_write_multicast (MulticastEndpoint and a
// CircularBuffer destination), Noc::inline_dw_write, Semaphore::set_multicast
// and inc_multicast; each core then writes its results to DRAM with
// set_async_write_state / async_write_with_state.
const char* kObjectsMcast = R"(
#include "api/dataflow/noc.h"
#include "api/dataflow/endpoints.h"
#include "experimental/noc_semaphore.h"
void kernel_main() {
  const uint32_t out = get_arg_val<uint32_t>(0), core = get_arg_val<uint32_t>(1);
  const uint32_t x0 = get_arg_val<uint32_t>(2), y0 = get_arg_val<uint32_t>(3);
  Noc noc;
  CircularBuffer cb(0);
  volatile uint32_t* b = reinterpret_cast<volatile uint32_t*>(cb.get_write_ptr());
  for (int i = 0; i < 16; i++) b[i] = core == 0 ? 0x700 + i : 0;
  experimental::Semaphore<> ready(0), got(1), count(2);
  if (core == 0) {
    ready.wait(2);
    noc.async_write_multicast(cb, MulticastEndpoint{}, 32, 2, {},
                              {.noc_x_start = x0 + 1, .noc_y_start = y0, .noc_x_end = x0 + 2, .noc_y_end = y0,
                               .addr = cb.get_write_ptr() + 32});
    noc.async_write_multicast<NocOptions::MCAST_INCL_SRC>(cb, cb, 16, 3, {},
                              {.noc_x_start = x0, .noc_y_start = y0, .noc_x_end = x0 + 2, .noc_y_end = y0,
                               .offset_bytes = 48});
    noc.inline_dw_write(UnicastEndpoint{}, 0x5151u, {.noc_x = x0 + 2, .noc_y = y0, .addr = cb.get_write_ptr() + 60});
    noc.async_write_barrier();
    count.inc_multicast(noc, x0 + 1, y0, x0 + 2, y0, 4, 2);
    got.set(1);
    got.set_multicast(noc, x0 + 1, y0, x0 + 2, y0, 2);
  } else {
    ready.up(noc, x0, y0, 1);
    got.wait(1);
  }
  b[14] = *reinterpret_cast<volatile uint32_t*>(get_semaphore(2));
  // Results: 64 bytes per core, written as 2 stateful 32-byte writes.
  const auto d = AllocatorBank<AllocatorBankType::DRAM>{};
  noc.set_async_write_state(d, 32, {.bank_id = 0, .addr = out});
  noc.async_write_with_state(cb, d, 32, {}, {.bank_id = 0, .addr = out + 64 * core});
  noc.async_write_with_state(cb, d, 32, {.offset_bytes = 32}, {.bank_id = 0, .addr = out + 64 * core + 32});
  noc.async_write_barrier();
}
)";

void test_objects_mcast(DeviceLayer& layer) {
  GroupProgram p;
  p.name = "objects_mcast";
  p.params = {P("out", "global_mut", "u32")};
  p.reader.source = kObjectsMcast;
  p.reader.runtime_args = {L("buffer_addr", 0), L("core_index"), CoreNoc(true, 2, 1), CoreNoc(false, 2, 1)};
  p.cbs = {CB(0, "UInt32", 64, 1)};
  p.semaphores = {{0, 0}, {1, 0}, {2, 0}};
  uint64_t out = layer.alloc(3 * 64, dram_spec(3 * 64), nullptr);
  layer.run(layer.compile(one_group_program(p, 1, 3, 2, 1)), {Buf(out)}, false);
  auto got = download<uint32_t>(layer, out, 3 * 16);
  for (uint32_t c = 0; c < 3; c++) {
    const uint32_t* w = &got[c * 16];
    for (uint32_t i = 0; i < 8; i++) CHECK_EQ(w[i], c == 0 ? 0x700 + i : 0u);         // not overwritten
    for (uint32_t i = 8; i < 12; i++) CHECK_EQ(w[i], c == 0 ? 0x700 + i : 0x700 + i - 8);  // mcast, not self
    for (uint32_t i = 12; i < 14; i++) CHECK_EQ(w[i], 0x700 + i - 12);                 // loopback mcast
    CHECK_EQ(w[14], c == 0 ? 0u : 4u);                                                  // inc_multicast
    CHECK_EQ(w[15], c == 2 ? 0x5151u : 0x703u);  // inline write over the loopback word
  }
  layer.free(out);
}
ZYX_TEST(noc, test_objects_mcast);

// TensorAccessor page ranges and shard pages, the accessor tuple and its
// type-erased wrappers, PageView/ShardView, get_l1_noc_addr, the forms of
// get_interleaved_addr_gen, DFBAccessor and wait_for_sync_register_value.
// Every page address is checked by reading the page's words, which the host
// wrote as known values.
const char* kAccessorReader = R"(
#include "dataflow_api.h"
#include "api/dataflow/dataflow_buffer.h"
#include "api/dataflow/noc.h"
// The word lands at the same offset within 64 bytes as its source (the
// NOC's alignment rule).
uint32_t word_at(uint64_t noc_addr, uint32_t scratch) {
  const uint32_t at = scratch + ((static_cast<uint32_t>(noc_addr) - scratch) & 63);
  noc_async_read(noc_addr, at, 4);
  noc_async_read_barrier();
  return *reinterpret_cast<volatile uint32_t*>(at);
}
void kernel_main() {
  constexpr auto sa = TensorAccessorArgs<0>();
  constexpr auto da = TensorAccessorArgs<sa.next_compile_time_args_offset()>();
  const uint32_t a = get_arg_val<uint32_t>(0), d = get_arg_val<uint32_t>(1), out = get_arg_val<uint32_t>(2);
  const uint32_t l1buf = get_arg_val<uint32_t>(3), e = get_arg_val<uint32_t>(4);
  const auto s = TensorAccessor(sa, a, 64);
  const auto dd = TensorAccessor(da, d, 64);
  cb_reserve_back(0, 1);
  cb_reserve_back(1, 1);
  volatile uint32_t* w = reinterpret_cast<volatile uint32_t*>(get_write_ptr(0));
  const uint32_t scratch = get_write_ptr(1);
  uint32_t n = 0;
  w[n++] = s.tensor_volume();
  w[n++] = s.get_bank_base_address() == a;
  for (const auto& pg : s.pages()) {
    w[n++] = pg.page_id();
    w[n++] = word_at(pg.noc_addr(), scratch);
  }
  for (uint32_t k = 0; k < 6; k++) {
    uint32_t at = n++, count = 0;
    for (const auto& pg : s.shard_pages(k)) {
      w[n++] = pg.page_id();
      w[n++] = word_at(pg.noc_addr(), scratch);
      count++;
    }
    w[at] = count;
  }
  uint32_t from1 = 0;
  for (const auto& pg : s.shard_pages(0, 1)) from1 = from1 * 16 + pg.page_id() + 1;
  w[n++] = from1;
  w[n++] = word_at(s.get_shard_noc_addr(2, 64 + 8), scratch);
  for (const auto& pg : dd.pages(3, 7)) {
    w[n++] = pg.page_id();
    w[n++] = word_at(pg.noc_addr(), scratch);
  }
  auto it = dd.pages(2, 10).begin();
  w[n++] = (it + 3)->page_id();
  w[n++] = it[5].page_id();
  w[n++] = dd.pages(2, 10).end() == dd.pages(2, 10).begin() + 8;
  auto t = make_tensor_accessor_tuple(std::make_tuple(sa, da), 0);
  auto wr = make_abstract_tensor_accessor_wrappers(t);
  w[n++] = word_at(wr[1].get_noc_addr(9, 4), scratch);
  w[n++] = word_at(wr[0].get_noc_addr(7), scratch);
  {  // a wrapper as a Noc source, as ttnn's concat reader uses it
    Noc noc;
    CircularBuffer into(1);
    // (at the same offset in the CB page as in the source page: the NOC's
    // alignment rule)
    noc.async_read(wr[1], into, 4, {.page_id = 9, .offset_bytes = 4}, {.offset_bytes = 4});
    noc.async_read_barrier();
    w[n++] = *reinterpret_cast<volatile uint32_t*>(scratch + 4);
  }
  w[n++] = word_at(PageView(dd).get_noc_addr(11, 8, noc_index), scratch);
  w[n++] = word_at(ShardView(s).get_noc_addr(2, 4, noc_index), scratch);
  w[n++] = word_at(get_l1_noc_addr(5, 64, l1buf, 12), scratch);
  auto g1 = get_interleaved_addr_gen<true, 64>(d);
  auto g2 = get_interleaved_addr_gen<true, 48>(e);
  auto g3 = get_interleaved_addr_gen<true, true>(d, 64, 6);
  auto g4 = get_interleaved_addr_gen<true, false>(e, 48);
  w[n++] = word_at(get_noc_addr(6, g1), scratch);
  w[n++] = word_at(get_noc_addr(5, g2), scratch);
  w[n++] = word_at(get_noc_addr(13, g3), scratch);
  w[n++] = word_at(get_noc_addr(7, g4), scratch);
  w[n++] = static_cast<uint32_t>(DFBAccessor(3));
  // The writer sets word 0 of cb 2 to 77 only after this sets word 1.
  volatile uint32_t* sync = reinterpret_cast<volatile uint32_t*>(get_write_ptr(2));
  sync[0] = 0;
  sync[1] = 1;
  wait_for_sync_register_value(get_write_ptr(2), 77);
  w[n++] = sync[0];
  w[n++] = n + 1;
  const InterleavedAddrGen<true> o = {.bank_base_address = out, .page_size = 4096};
  noc_async_write(get_write_ptr(0), get_noc_addr(0, o), 4096);
  noc_async_write_barrier();
}
)";

const char* kAccessorWriter = R"(
#include "dataflow_api.h"
void kernel_main() {
  volatile uint32_t* sync = reinterpret_cast<volatile uint32_t*>(get_write_ptr(2));
  noc_semaphore_wait(sync + 1, 1);
  sync[0] = 77;
}
)";

void test_accessor_pages(DeviceLayer& layer) {
  // a: 5 x 3 pages of 64 bytes, block sharded in 2 x 2 shards over the 3 x 2
  // cores at (0, 0); d: 16 DRAM pages of 64; l: 8 L1 pages of 64; e: 8 DRAM
  // pages of 48. Word w of page p is base + 100 p + w.
  const uint32_t T0 = 5, T1 = 3, S0 = 2, S1 = 2;
  BufferSpec spec = sharded_spec(Placement::L1, BufferLayout::BlockSharded, 64, cores_of({{0, 0, 2, 1}}), S0, S1, T0, T1);
  auto pages_of = [](uint32_t base, uint32_t pages, uint32_t words) {
    std::vector<uint32_t> v(pages * words);
    for (uint32_t p = 0; p < pages; p++)
      for (uint32_t w = 0; w < words; w++) v[p * words + w] = base + 100 * p + w;
    return v;
  };
  uint64_t ia = upload(layer, pages_of(0, T0 * T1, 16), spec);
  uint64_t id = upload(layer, pages_of(5000, 16, 16), 64);
  uint64_t il = upload(layer, pages_of(9000, 8, 16), l1_spec(64));
  uint64_t ie = upload(layer, pages_of(20000, 8, 12), 48);
  uint64_t out = layer.alloc(4096, dram_spec(4096), nullptr);
  ProgramDesc p;
  p.name = "accessor_pages";
  p.params = {P("a", "global", "u32"), P("d", "global", "u32"), P("out", "global_mut", "u32"), P("l", "global", "u32"),
              P("e", "global", "u32")};
  p.buffers = {decl(0, spec), decl(3, l1_spec(64))};
  KernelDesc r = kernel("reader", Processor::Riscv0, one_core(6, 6), kAccessorReader);
  r.compile_args = entries({L("accessor", 0), L("accessor", 1)});
  runtime(r, one_core(6, 6), {L("buffer_addr", 0), L("buffer_addr", 1), L("buffer_addr", 2), L("buffer_addr", 3),
                              L("buffer_addr", 4)});
  KernelDesc wk = kernel("writer", Processor::Riscv1, one_core(6, 6), kAccessorWriter);
  p.kernels = {r, wk};
  p.cbs = {cb_config(one_core(6, 6), 4096, {cb_index(0, DataFormat::UInt32, 4096)}),
           cb_config(one_core(6, 6), 64, {cb_index(1, DataFormat::UInt32, 64)}),
           cb_config(one_core(6, 6), 64, {cb_index(2, DataFormat::UInt32, 64)})};
  uint64_t prog = layer.compile(p);
  layer.run(prog, {Buf(ia), Buf(id), Buf(out), Buf(il), Buf(ie)}, false);
  auto got = download<uint32_t>(layer, out, 1024);
  // The expected words, in the kernel's order.
  std::vector<uint32_t> want = {T0 * T1, 1};
  for (uint32_t q = 0; q < T0 * T1; q++) want.push_back(q), want.push_back(100 * q);
  for (uint32_t k = 0; k < 6; k++) {
    uint32_t sr = k / 2, sc = k % 2;
    std::vector<uint32_t> ids;
    for (uint32_t lr = 0; lr < S0; lr++)
      for (uint32_t lc = 0; lc < S1; lc++) {
        uint32_t row = sr * S0 + lr, col = sc * S1 + lc;
        if (row < T0 && col < T1) ids.push_back(row * T1 + col);
      }
    want.push_back(uint32_t(ids.size()));
    for (uint32_t q : ids) want.push_back(q), want.push_back(100 * q);
  }
  want.push_back((1 + 1) * 16 * 16 + (3 + 1) * 16 + (4 + 1));  // shard 0 from local page 1: pages 1, 3, 4
  want.push_back(100 * 7 + 2);  // shard 2's local page 1 is page (2, 1) = 7; word 2
  for (uint32_t q = 3; q < 7; q++) want.push_back(q), want.push_back(5000 + 100 * q);
  want.push_back(5);
  want.push_back(7);
  want.push_back(1);
  want.push_back(5000 + 900 + 1);
  want.push_back(700);
  want.push_back(5000 + 900 + 1);  // the same page through Noc::async_read
  want.push_back(5000 + 1100 + 2);
  want.push_back(600 + 1);  // shard 2's first page is (2, 0) = 6; word 1
  want.push_back(9000 + 500 + 3);
  want.push_back(5000 + 600);
  want.push_back(20000 + 500);
  want.push_back(5000 + 1300);
  want.push_back(20000 + 700);
  want.push_back(3);
  want.push_back(77);
  want.push_back(uint32_t(want.size() + 1));
  for (size_t i = 0; i < want.size(); i++)
    if (got[i] != want[i])
      throw Failure("accessor pages: word " + std::to_string(i) + " = " + std::to_string(got[i]) + ", want " +
                    std::to_string(want[i]));
  layer.release(prog);
  for (uint64_t b : {ia, id, il, ie, out}) layer.free(b);
}
ZYX_TEST(noc, test_accessor_pages);

}  // namespace
