// The runner: checks and registers programs, lays out circular buffers in
// L1, resolves argument layouts per core and runs the cores.
//
// Scheduling. Each core's reader, compute and writer run as three fibers
// (ucontext) that share the core's state; a blocking call (a circular buffer
// that is full or empty, a semaphore wait) switches to the next runnable
// section of the core instead of blocking an OS thread. Cores run in parallel
// on a pool of worker threads, one per hardware thread. A worker runs one core
// at a time and takes on further cores only while all of its sections are
// blocked, so cores that wait on each other (semaphores, L1 to L1 traffic)
// still all get to run. A worker that makes no progress for the timeout
// reports a deadlock naming every blocked section, cancels the run, and each
// blocked wait then throws out of its kernel, so no thread is left behind.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>

#include "runner.hpp"

namespace zyx::emu {

namespace {

constexpr size_t kStackSize = 1u << 20;  // reserved, committed lazily
constexpr size_t kGuard = 4096;

struct Cancelled {};

thread_local Fiber* t_fiber = nullptr;

}  // namespace

struct Worker {
  ucontext_t sched{};
};

Fiber* current_fiber() { return t_fiber; }

// ---- errors ----------------------------------------------------------------

void RunState::fail(const std::string& code, const std::string& msg) {
  std::lock_guard<std::mutex> lock(err_mu);
  if (err_code.empty()) {
    err_code = code;
    err_msg = msg;
  }
  cancel.store(true);
}

static std::string where(const Fiber* f) {
  std::ostringstream s;
  s << "core (" << f->core->row << "," << f->core->col << ") section " << section_name(f->kind);
  return s.str();
}

[[noreturn]] void kernel_fail(const std::string& msg) { throw Error("run_error", msg); }

// ---- blocking --------------------------------------------------------------

static bool satisfied(const CoreState& c, const Wait& w) {
  switch (w.kind) {
    case Wait::None: return true;
    case Wait::CBFront: return c.cbs[w.cb].available() >= w.pages;
    case Wait::CBBack: return c.cbs[w.cb].num_pages - c.cbs[w.cb].available() >= w.pages;
    case Wait::Word: {
      uint32_t v = __atomic_load_n(w.word, __ATOMIC_ACQUIRE);
      if (w.cmp == 0) return v == w.value;
      if (w.cmp == 1) return v >= w.value;
      return v != w.value;
    }
  }
  return true;
}

static void block_until(const Wait& w) {
  Fiber* f = t_fiber;
  while (!satisfied(*f->core, w)) {
    f->wait = w;
    f->blocked = true;
    swapcontext(&f->ctx, &f->worker->sched);
    f->blocked = false;
    if (f->core->run->cancel.load(std::memory_order_relaxed)) throw Cancelled{};
  }
  f->wait = Wait{};
}

static std::string describe_wait(const Fiber* f) {
  const Wait& w = f->wait;
  std::ostringstream s;
  s << where(f);
  if (w.kind == Wait::CBFront || w.kind == Wait::CBBack) {
    const auto& cb = f->core->cbs[w.cb];
    s << " waiting on cb " << w.cb << " ("
      << (w.kind == Wait::CBFront ? "cb_wait_front for " : "cb_reserve_back for ") << w.pages << " page(s); "
      << cb.available() << " of " << cb.num_pages << " filled)";
  } else if (w.kind == Wait::Word) {
    uintptr_t off = reinterpret_cast<uintptr_t>(w.word) & (L1Arena::kWindow - 1);
    s << " waiting on the L1 word at 0x" << std::hex << off << std::dec << " (semaphore wait for "
      << (w.cmp == 0 ? "== " : w.cmp == 1 ? ">= " : "!= ") << w.value << ", value "
      << __atomic_load_n(w.word, __ATOMIC_ACQUIRE) << ")";
  } else {
    s << " blocked";
  }
  return s.str();
}

// ---- API: arguments, circular buffers, NOC ---------------------------------

static CircularBuffer& cb_of(uint32_t id) {
  if (id >= 32) kernel_fail("circular buffer index " + std::to_string(id) + " is out of range (0-31)");
  auto& cb = t_fiber->core->cbs[id];
  if (!cb.configured) kernel_fail("circular buffer " + std::to_string(id) + " is not configured by the program");
  return cb;
}

static const uint32_t* api_args(uint32_t kind, uint32_t* count) {
  const auto& v = kind == 0 ? t_fiber->args : t_fiber->core->run->common_args[static_cast<int>(t_fiber->kind)];
  if (count) *count = static_cast<uint32_t>(v.size());
  return v.data();
}

static void api_cb_reserve_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (pages > cb.num_pages)
    kernel_fail("cb_reserve_back(" + std::to_string(id) + ", " + std::to_string(pages) + "): the buffer has only " +
                std::to_string(cb.num_pages) + " pages");
  Wait w;
  w.kind = Wait::CBBack, w.cb = id, w.pages = pages;
  block_until(w);
  cb.reserved = pages;
}

static void api_cb_push_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (cb.available() + pages > cb.num_pages)
    kernel_fail("cb_push_back(" + std::to_string(id) + ", " + std::to_string(pages) + ") overflows the buffer (" +
                std::to_string(cb.available()) + " of " + std::to_string(cb.num_pages) + " pages filled)");
  cb.pushed += pages;
  cb.wr_page = (cb.wr_page + pages) % cb.num_pages;
  cb.pack_next = 0;
  cb.reserved = 0;
}

static void api_cb_wait_front(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (pages > cb.num_pages)
    kernel_fail("cb_wait_front(" + std::to_string(id) + ", " + std::to_string(pages) + "): the buffer has only " +
                std::to_string(cb.num_pages) + " pages");
  Wait w;
  w.kind = Wait::CBFront, w.cb = id, w.pages = pages;
  block_until(w);
}

static void api_cb_pop_front(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  if (pages > cb.available())
    kernel_fail("cb_pop_front(" + std::to_string(id) + ", " + std::to_string(pages) + ") pops more than the " +
                std::to_string(cb.available()) + " filled page(s)");
  cb.popped += pages;
  cb.rd_page = (cb.rd_page + pages) % cb.num_pages;
}

static int api_cb_pages_available_at_front(uint32_t id, uint32_t pages) { return cb_of(id).available() >= pages; }
static int api_cb_pages_reservable_at_back(uint32_t id, uint32_t pages) {
  auto& cb = cb_of(id);
  return cb.num_pages - cb.available() >= pages;
}

static uint32_t l1_va(uint64_t offset) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(t_fiber->core->l1) + offset);
}

static uint32_t api_cb_write_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.wr_page) * cb.page_size);
}
static uint32_t api_cb_read_ptr(uint32_t id) {
  auto& cb = cb_of(id);
  return l1_va(cb.offset + uint64_t(cb.rd_page) * cb.page_size);
}
static uint32_t api_cb_page_size(uint32_t id) { return cb_of(id).page_size; }
static uint32_t api_cb_format(uint32_t id) { return static_cast<uint32_t>(cb_of(id).format); }
static uint32_t api_cb_num_pages(uint32_t id) { return cb_of(id).num_pages; }

// Resolves an L1 address (a host pointer below 4 GiB or a plain offset) of
// core `core` to a host pointer, checking [addr, addr+size) fits in L1.
static uint8_t* l1_target(const CoreState* core, uint32_t addr, uint64_t size, const char* op) {
  uint64_t off = addr & (L1Arena::kWindow - 1);
  uint64_t l1_size = core->run->board->l1_size;
  if (off > l1_size || size > l1_size - off) {
    std::ostringstream s;
    s << op << ": L1 range [0x" << std::hex << off << ", +0x" << size << ") is outside the core's " << std::dec
      << l1_size << " bytes of L1";
    kernel_fail(s.str());
  }
  return core->l1 + off;
}

struct NocTarget {
  bool dram = false;
  uint32_t bank = 0;
  uint64_t addr = 0;
  const CoreState* core = nullptr;
  uint8_t* l1 = nullptr;
};

// Core L1 windows exist for every core of the board, not just the launch
// grid; a core outside the launch has a zero index state of its own.
static NocTarget decode_noc(uint64_t a, uint64_t size, const char* op) {
  NocTarget t;
  uint32_t y = (a >> 42) & 63, x = (a >> 36) & 63;
  uint64_t local = a & ((1ull << 36) - 1);
  RunState* rs = t_fiber->core->run;
  if (x == 0) {
    if (y >= rs->board->dram_banks) {
      std::ostringstream s;
      s << op << ": NOC node (0," << y << ") is not a DRAM bank (there are " << rs->board->dram_banks << ")";
      kernel_fail(s.str());
    }
    t.dram = true, t.bank = y, t.addr = local;
    return t;
  }
  uint32_t row = y - 1, col = x - 1;
  if (y == 0 || row >= rs->rows || col >= rs->cols) {
    std::ostringstream s;
    s << op << ": NOC node (" << x << "," << y << ") is not a DRAM bank or a core of the launch grid ("
      << rs->rows << "x" << rs->cols << ")";
    kernel_fail(s.str());
  }
  t.core = rs->cores[row * rs->cols + col];
  t.l1 = l1_target(t.core, static_cast<uint32_t>(local), size, op);
  return t;
}

static void api_noc_read(uint64_t src, uint32_t dst_l1, uint32_t size) {
  uint8_t* dst = l1_target(t_fiber->core, dst_l1, size, "noc_async_read");
  NocTarget s = decode_noc(src, size, "noc_async_read");
  if (s.dram)
    t_fiber->core->run->dram->read(s.bank, s.addr, dst, size);
  else
    std::memmove(dst, s.l1, size);
}

static void api_noc_write(uint32_t src_l1, uint64_t dst, uint32_t size) {
  const uint8_t* src = l1_target(t_fiber->core, src_l1, size, "noc_async_write");
  NocTarget d = decode_noc(dst, size, "noc_async_write");
  if (d.dram)
    t_fiber->core->run->dram->write(d.bank, d.addr, src, size);
  else
    std::memmove(d.l1, src, size);
}

static void api_noc_atomic_inc(uint64_t dst, uint32_t incr) {
  NocTarget d = decode_noc(dst, 4, "noc_semaphore_inc");
  if (d.dram) kernel_fail("noc_semaphore_inc: the target is DRAM, not a core's L1");
  __atomic_fetch_add(reinterpret_cast<uint32_t*>(d.l1), incr, __ATOMIC_SEQ_CST);
}

static uint64_t api_l1_noc_addr(uint32_t x, uint32_t y, uint32_t addr) { return noc_addr(x, y, addr); }

static void api_core_xy(uint32_t* x, uint32_t* y) {
  *x = t_fiber->core->col + 1;
  *y = t_fiber->core->row + 1;
}

static uint32_t api_semaphore_addr(uint32_t id) {
  if (id >= Runner::kSemaphores)
    kernel_fail("get_semaphore(" + std::to_string(id) + "): the emulator has " + std::to_string(Runner::kSemaphores) +
                " semaphores per core");
  return l1_va(Runner::semaphore_offset(*t_fiber->core->run->board, id));
}

static void api_wait_word(uint32_t addr, uint32_t value, uint32_t cmp) {
  Wait w;
  w.kind = Wait::Word;
  w.word = reinterpret_cast<volatile uint32_t*>(l1_target(t_fiber->core, addr, 4, "noc_semaphore_wait"));
  w.value = value, w.cmp = cmp;
  block_until(w);
}

static void* api_l1_ptr(uint32_t addr) { return l1_target(t_fiber->core, addr, 0, "l1 pointer"); }

static uint32_t api_buffer_page_size(uint32_t addr) {
  const auto& m = t_fiber->core->run->page_sizes;
  auto it = m.find(addr);
  return it == m.end() ? 0 : it->second;
}

static void api_fail(const char* msg) { kernel_fail(msg ? msg : "kernel failure"); }

static void api_dprint(const char* text) {
  static const bool on = std::getenv("ZYX_EMU_DPRINT") != nullptr;
  if (!on || !text) return;
  // DPRINT output is what a kernel author asked for; it goes to stderr only
  // when ZYX_EMU_DPRINT is set.
  std::string line = "[" + where(t_fiber) + "] " + text;
  std::fwrite(line.data(), 1, line.size(), stderr);
}

// Compute functions live in tile_math.cpp.
void fill_compute_api(zyx_emu_api& api);

const zyx_emu_api* kernel_api() {
  static const zyx_emu_api api = [] {
    zyx_emu_api a{};
    a.abi_version = ZYX_EMU_ABI_VERSION;
    a.args = api_args;
    a.cb_reserve_back = api_cb_reserve_back;
    a.cb_push_back = api_cb_push_back;
    a.cb_wait_front = api_cb_wait_front;
    a.cb_pop_front = api_cb_pop_front;
    a.cb_pages_available_at_front = api_cb_pages_available_at_front;
    a.cb_pages_reservable_at_back = api_cb_pages_reservable_at_back;
    a.cb_write_ptr = api_cb_write_ptr;
    a.cb_read_ptr = api_cb_read_ptr;
    a.cb_page_size = api_cb_page_size;
    a.cb_format = api_cb_format;
    a.cb_num_pages = api_cb_num_pages;
    a.noc_read = api_noc_read;
    a.noc_write = api_noc_write;
    a.noc_atomic_inc = api_noc_atomic_inc;
    a.l1_noc_addr = api_l1_noc_addr;
    a.core_xy = api_core_xy;
    a.semaphore_addr = api_semaphore_addr;
    a.wait_word = api_wait_word;
    a.l1_ptr = api_l1_ptr;
    a.fail = api_fail;
    a.dprint = api_dprint;
    a.buffer_page_size = api_buffer_page_size;
    fill_compute_api(a);
    return a;
  }();
  return &api;
}

// ---- Runner ----------------------------------------------------------------

Runner::Runner(const Board& board, Dram& dram, KernelBuilder& builder)
    : board_(board), dram_(dram), builder_(builder) {}

Runner::~Runner() {
  for (void* s : stacks_) munmap(s, kStackSize);
}

void* Runner::take_stack() {
  {
    std::lock_guard<std::mutex> lock(stack_mu_);
    if (!stacks_.empty()) {
      void* s = stacks_.back();
      stacks_.pop_back();
      return s;
    }
  }
  void* s = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                 -1, 0);
  if (s == MAP_FAILED) throw Error("internal", "emulator: cannot map a kernel stack");
  mprotect(s, kGuard, PROT_NONE);  // overflow faults instead of corrupting
  return s;
}

void Runner::give_stack(void* s) {
  std::lock_guard<std::mutex> lock(stack_mu_);
  stacks_.push_back(s);
}

static bool layout_is_const(const std::vector<LayoutEntry>& l) {
  return std::all_of(l.begin(), l.end(), [](const LayoutEntry& e) { return e.kind == "const"; });
}

static void check_layout(const std::vector<LayoutEntry>& layout, const std::vector<ParamDesc>& params,
                         const char* section, const char* which) {
  static const char* kinds[] = {"param",     "buffer_addr", "buffer_size", "buffer_pages", "page_size", "accessor",
                                "core_row",  "core_col",    "core_index",  "num_cores",    "const"};
  for (size_t i = 0; i < layout.size(); i++) {
    const auto& e = layout[i];
    std::string at = std::string(section) + " " + which + "[" + std::to_string(i) + "]";
    if (std::find_if(std::begin(kinds), std::end(kinds), [&](const char* k) { return e.kind == k; }) ==
        std::end(kinds))
      throw Error("invalid_argument", at + ": unknown layout entry kind \"" + e.kind + "\"");
    bool wants_buffer = e.kind == "buffer_addr" || e.kind == "buffer_size" || e.kind == "buffer_pages" ||
                        e.kind == "page_size" || e.kind == "accessor";
    if (e.kind == "param" || wants_buffer) {
      if (e.param >= params.size())
        throw Error("invalid_argument", at + ": param " + std::to_string(e.param) + " does not exist (" +
                                            std::to_string(params.size()) + " params)");
      if (wants_buffer != params[e.param].is_buffer())
        throw Error("invalid_argument", at + ": " + e.kind + " needs a " + (wants_buffer ? "buffer" : "variable") +
                                            " param, but param " + std::to_string(e.param) + " (" +
                                            params[e.param].name + ") is " + params[e.param].kind);
    }
  }
}

static std::vector<uint32_t> const_values(const std::vector<LayoutEntry>& l) {
  std::vector<uint32_t> v;
  for (auto& e : l) v.push_back(e.value);
  return v;
}

uint64_t Runner::compile(const ProgramDesc& desc) {
  auto prog = std::make_shared<Program>();
  prog->desc = desc;
  static const char* fidelities[] = {"LoFi", "HiFi2", "HiFi3", "HiFi4"};
  if (std::find(std::begin(fidelities), std::end(fidelities), desc.math_fidelity) == std::end(fidelities))
    throw Error("invalid_argument", "math_fidelity \"" + desc.math_fidelity + "\" (want LoFi, HiFi2, HiFi3 or HiFi4)");
  if (desc.cbs.size() > 32) throw Error("invalid_argument", "at most 32 circular buffers");
  uint32_t seen = 0;
  uint64_t at = board_.l1_unreserved_base;
  for (const auto& cb : desc.cbs) {
    if (cb.index >= 32) throw Error("invalid_argument", "circular buffer index " + std::to_string(cb.index) + " > 31");
    if (seen & (1u << cb.index))
      throw Error("invalid_argument", "circular buffer " + std::to_string(cb.index) + " configured twice");
    seen |= 1u << cb.index;
    CircularBuffer& state = prog->cbs[cb.index];
    state.format = parse_format(cb.format);
    if (cb.page_bytes == 0 || cb.pages == 0)
      throw Error("invalid_argument", "circular buffer " + std::to_string(cb.index) + ": page_bytes and pages must be > 0");
    state.configured = true;
    state.page_size = cb.page_bytes;
    state.num_pages = cb.pages;
    state.offset = at;
    at += (uint64_t(cb.page_bytes) * cb.pages + 31) / 32 * 32;
  }
  if (at > board_.l1_size)
    throw Error("invalid_argument", "circular buffers need " + std::to_string(at - board_.l1_unreserved_base) +
                                        " bytes of L1; " + std::to_string(board_.l1_size - board_.l1_unreserved_base) +
                                        " are free per core");
  const Section* secs[3] = {&desc.reader, &desc.compute, &desc.writer};
  for (int i = 0; i < 3; i++) {
    const char* name = section_name(SectionKind(i));
    check_layout(secs[i]->compile_args, desc.params, name, "compile_args");
    check_layout(secs[i]->runtime_args, desc.params, name, "runtime_args");
    check_layout(secs[i]->common_args, desc.params, name, "common_args");
  }
  // Build the sections whose compile args are known now, in parallel.
  std::future<std::shared_ptr<KernelObject>> f[3];
  for (int i = 0; i < 3; i++) {
    if (!layout_is_const(secs[i]->compile_args)) continue;
    f[i] = std::async(std::launch::async, [this, i, secs, &desc] {
      return builder_.get(SectionKind(i), *secs[i], const_values(secs[i]->compile_args), desc);
    });
  }
  std::exception_ptr first;
  for (int i = 0; i < 3; i++) {
    if (!f[i].valid()) continue;
    try {
      prog->prebuilt[i] = f[i].get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
  std::lock_guard<std::mutex> lock(mu_);
  uint64_t id = next_id_++;
  programs_[id] = std::move(prog);
  return id;
}

void Runner::release(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!programs_.erase(id)) throw Error("unknown_program", "program " + std::to_string(id) + " does not exist");
}

static std::chrono::milliseconds timeout_from_env() {
  if (const char* s = std::getenv("ZYX_EMU_TIMEOUT_MS")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v > 0) return std::chrono::milliseconds(v);
  }
  return std::chrono::milliseconds(10000);
}

uint64_t Runner::run(uint64_t id, uint32_t rows, uint32_t cols, const std::vector<RunArg>& args, bool timed,
                     DeviceLayer& layer) {
  std::shared_ptr<Program> prog;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = programs_.find(id);
    if (it == programs_.end()) throw Error("unknown_program", "program " + std::to_string(id) + " does not exist");
    prog = it->second;
  }
  const ProgramDesc& d = prog->desc;
  if (rows == 0 || cols == 0 || rows > board_.rows || cols > board_.cols)
    throw Error("invalid_argument", "grid [" + std::to_string(rows) + ", " + std::to_string(cols) +
                                        "] is outside the " + board_.name + " worker grid [" +
                                        std::to_string(board_.rows) + ", " + std::to_string(board_.cols) + "]");
  if (args.size() != d.params.size())
    throw Error("invalid_argument",
                std::to_string(args.size()) + " args for " + std::to_string(d.params.size()) + " params");
  for (size_t i = 0; i < args.size(); i++) {
    if (args[i].is_buffer != d.params[i].is_buffer())
      throw Error("invalid_argument", "arg " + std::to_string(i) + " (" + d.params[i].name + ") must be a " +
                                          (d.params[i].is_buffer() ? "buffer" : "value"));
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  if (!l1_) l1_ = std::make_unique<L1Arena>(board_.rows * board_.cols, board_.l1_size);

  RunState rs;
  rs.board = &board_;
  rs.dram = &dram_;
  rs.l1 = l1_.get();
  rs.rows = rows, rs.cols = cols;
  rs.fp32_dest_acc = d.fp32_dest_acc;
  rs.timeout = timeout_from_env();
  for (const auto& a : args) {
    if (!a.is_buffer) continue;
    BufferInfo bi = layer.buffer_info(a.buffer);  // unknown_buffer if it is gone
    rs.page_sizes[static_cast<uint32_t>(bi.address)] = static_cast<uint32_t>(bi.page_size);
  }
  // Interleaved DRAM tensor-accessor args: one compile-time word, the
  // ArgsConfig flags (bit 1: the buffer is in DRAM), as tt-metal appends for
  // an interleaved DRAM buffer.
  auto accessor = [](const BufferInfo&, std::vector<uint32_t>& out) { out.push_back(2); };
  const Section* secs[3] = {&d.reader, &d.compute, &d.writer};
  // Each section has common args of its own, as each kernel does on a card.
  CoreCtx origin{0, 0, rows, cols};
  for (int i = 0; i < 3; i++)
    rs.common_args[i] = resolve_layout(secs[i]->common_args, d.params, args, layer, origin, accessor);
  std::map<std::vector<uint32_t>, std::shared_ptr<KernelObject>> built[3];
  rs.cores.reserve(rows * cols);
  if (core_pool_.size() < size_t(rows) * cols) core_pool_.resize(size_t(rows) * cols);
  for (uint32_t r = 0; r < rows; r++) {
    for (uint32_t c = 0; c < cols; c++) {
      // Core states are reused across runs; DST keeps its contents, and its
      // written tiles are cleared at the next tile_regs_acquire.
      auto& core = core_pool_[r * cols + c];
      if (!core) core = std::make_unique<CoreState>();
      core->cbs = prog->cbs;
      core->cstate = ComputeState{};
      core->fibers = {};
      core->dst_acquired = false;
      core->row = r, core->col = c, core->index = r * board_.cols + c;
      core->l1 = l1_->core_base(core->index);
      core->run = &rs;
      CoreCtx cc{r, c, rows, cols};
      for (int i = 0; i < 3; i++) {
        Fiber& f = core->fibers[i];
        f.core = core.get();
        f.kind = SectionKind(i);
        if (prog->prebuilt[i]) {
          f.kernel = prog->prebuilt[i];
        } else {
          auto ca = resolve_layout(secs[i]->compile_args, d.params, args, layer, cc, accessor);
          auto& slot = built[i][ca];
          if (!slot) slot = builder_.get(SectionKind(i), *secs[i], ca, d);
          f.kernel = slot;
        }
        f.args = resolve_layout(secs[i]->runtime_args, d.params, args, layer, cc, accessor);
      }
      for (uint32_t s = 0; s < kSemaphores; s++) std::memset(core->l1 + semaphore_offset(board_, s), 0, 4);
      rs.cores.push_back(core.get());
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  execute(rs);
  auto t1 = std::chrono::steady_clock::now();
  if (!rs.err_code.empty()) throw Error(rs.err_code, rs.err_msg);
  return timed ? static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()) : 0;
}

static void fiber_main() {
  Fiber* f = t_fiber;
  try {
    f->kernel->run();
  } catch (const Cancelled&) {
  } catch (const Error& e) {
    f->core->run->fail(e.code, where(f) + ": " + e.what());
  } catch (const std::exception& e) {
    f->core->run->fail("run_error", where(f) + ": " + e.what());
  } catch (...) {
    f->core->run->fail("run_error", where(f) + ": unknown exception");
  }
  f->done = true;
  // Returning switches to uc_link, the worker's scheduler context.
}

void Runner::execute(RunState& rs) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  if (const char* s = std::getenv("ZYX_EMU_THREADS")) {
    int v = std::atoi(s);
    if (v > 0) hw = static_cast<unsigned>(v);
  }
  unsigned nworkers = std::min<unsigned>(hw, static_cast<unsigned>(rs.cores.size()));
  auto work = [this, &rs] {
    Worker wk;
    std::vector<CoreState*> active;
    auto last_progress = std::chrono::steady_clock::now();
    auto resume = [&](Fiber& f) {
      t_fiber = &f;
      swapcontext(&wk.sched, &f.ctx);
      t_fiber = nullptr;
    };
    // Takes core c on, or fails the run when its stacks cannot be mapped: an
    // exception must not leave a worker thread.
    auto start = [&](CoreState* c) {
      size_t taken = 0;
      try {
        for (; taken < c->fibers.size(); taken++) c->fibers[taken].stack = take_stack();
      } catch (const Error& e) {
        while (taken > 0) {
          Fiber& f = c->fibers[--taken];
          give_stack(f.stack);
          f.stack = nullptr;
        }
        rs.fail(e.code, e.what());
        return;
      }
      for (auto& f : c->fibers) {
        f.worker = &wk;
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = static_cast<char*>(f.stack) + kGuard;
        f.ctx.uc_stack.ss_size = kStackSize - kGuard;
        f.ctx.uc_link = &wk.sched;
        makecontext(&f.ctx, fiber_main, 0);
      }
      active.push_back(c);
    };
    while (true) {
      bool progressed = false;
      bool cancel = rs.cancel.load(std::memory_order_relaxed);
      for (size_t i = 0; i < active.size();) {
        CoreState* c = active[i];
        bool all_done = true;
        for (auto& f : c->fibers) {
          if (f.done) continue;
          if (cancel && !f.started) {
            f.done = true;
            continue;
          }
          if (cancel || !f.blocked || satisfied(*c, f.wait)) {
            f.started = true;
            resume(f);
            progressed = true;
          }
          if (!f.done) all_done = false;
        }
        if (all_done) {
          for (auto& f : c->fibers) give_stack(f.stack), f.stack = nullptr;
          active.erase(active.begin() + static_cast<long>(i));
        } else {
          i++;
        }
      }
      if (progressed) {
        last_progress = std::chrono::steady_clock::now();
        continue;
      }
      if (!rs.cancel.load()) {
        uint32_t k = rs.next_core.fetch_add(1);
        if (k < rs.cores.size()) {
          start(rs.cores[k]);
          continue;
        }
      }
      if (active.empty()) break;
      if (rs.cancel.load()) continue;
      auto now = std::chrono::steady_clock::now();
      if (now - last_progress > rs.timeout) {
        std::string msg;
        for (CoreState* c : active)
          for (auto& f : c->fibers)
            if (!f.done && f.blocked) msg += (msg.empty() ? "" : "; ") + describe_wait(&f);
        rs.fail("deadlock", msg + " (no progress for " + std::to_string(rs.timeout.count()) + " ms)");
        continue;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  };
  // This thread is a worker too. Fewer threads than asked for still finish
  // the run (each worker takes cores until none are left), so a thread that
  // cannot be created is no error.
  std::vector<std::thread> threads;
  threads.reserve(nworkers - 1);
  try {
    while (threads.size() + 1 < nworkers) threads.emplace_back(work);
  } catch (const std::system_error&) {
  }
  work();
  for (auto& t : threads) t.join();
}

}  // namespace zyx::emu
