// The watcher's switches and the source location of a kernel's failure
// (watcher.hpp).
#include "watcher.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <unwind.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "debug_mode.hpp"
#include "kernel_api.hpp"
#include "runner.hpp"

extern char** environ;

namespace zyx::emu {

WatchConfig WatchConfig::from_env() {
  WatchConfig c;
  const char* v = std::getenv("ZYX_EMU_WATCHER");
  if (!v || !*v || std::strcmp(v, "1") == 0 || std::strcmp(v, "on") == 0) return c;
  if (std::strcmp(v, "0") == 0 || std::strcmp(v, "off") == 0) {
    c.args = c.noc = c.cb = c.cb_access = c.race = c.stack = false;
    return c;
  }
  std::string s = v;
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    std::string w = s.substr(start, end - start);
    if (w == "no-args")
      c.args = false;
    else if (w == "no-noc")
      c.noc = false;
    else if (w == "no-cb")
      c.cb = false;
    else if (w == "no-cb-access")
      c.cb_access = false;
    else if (w == "no-race")
      c.race = false;
    else if (w == "no-stack")
      c.stack = false;
    else if (w == "strict-noc")
      c.strict_noc = true;
    else if (w == "strict-noc-loads")
      c.strict_noc = c.strict_noc_loads = true;
    else if (!w.empty())
      c.unknown += (c.unknown.empty() ? "" : ", ") + w;
    start = end + 1;
  }
  return c;
}

bool debug_mode() {
  static const bool on = [] {
    const char* v = std::getenv("ZYX_EMU_DEBUG");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

namespace {

// This process's tracer (TracerPid in /proc/self/status), 0 when none.
long tracer_pid() {
  FILE* f = std::fopen("/proc/self/status", "re");
  if (!f) return 0;
  char line[256];
  long pid = 0;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "TracerPid:", 10) == 0) {
      pid = std::strtol(line + 10, nullptr, 10);
      break;
    }
  std::fclose(f);
  return pid;
}

}  // namespace

void wait_for_debugger() {
  static std::once_flag once;
  if (!debug_mode()) return;
  std::call_once(once, [] {
    if (tracer_pid() != 0) return;
    // The Go driver lifts its call deadlines in debug mode, so the run may
    // wait here for as long as the user takes; ending zyx-tt ends it.
    std::fprintf(stderr, "zyx-emu: debug: pid %ld waits for a debugger to attach before its first run\n",
                 static_cast<long>(getpid()));
    while (tracer_pid() == 0) usleep(50 * 1000);
  });
}

namespace {

// The local data memory of each processor of a Tensix core, where the card
// keeps a kernel's stack together with the firmware's and the kernel's
// globals (tt-metal's dev_mem_map.h, MEM_*_LOCAL_SIZE: Wormhole 4 KiB for
// BRISC and NCRISC, 2 KiB per TRISC; Blackhole twice that). The linker
// keeps at least 256 bytes (BRISC, NCRISC, TRISC2) or 192 (TRISC0, TRISC1)
// for the stack; how much more depends on the globals, so the check holds a
// kernel to the whole memory: deeper overflows on every card.
uint32_t card_stack_bytes(const std::string& arch, Processor p) {
  uint32_t scale = arch == "blackhole" ? 2 : 1;
  bool dm = p == Processor::Riscv0 || p == Processor::Riscv1;
  return (dm ? 4096u : 2048u) * scale;
}

const char* processor_core(Processor p) {
  switch (p) {
    case Processor::Riscv0: return "BRISC";
    case Processor::Riscv1: return "NCRISC";
    default: return "TRISC";
  }
}

}  // namespace

namespace {

// Whether a data symbol is the kernel's own: not the emulator prelude's
// (zyx_emu_*), the toolchain's (__dso_handle, completed.0, DW.ref.*) or a
// guard variable (_ZGV*: a card keeps its guards apart from the stack too,
// but they are a byte or eight).
bool kernel_own_symbol(const char* name) {
  static const char* const kNotOwn[] = {"zyx_emu", "__", "completed.", "DW.ref.", "_ZGV"};
  for (const char* p : kNotOwn)
    if (std::strncmp(name, p, std::strlen(p)) == 0) return false;
  return *name != 0;
}

bool read_at(int fd, void* out, size_t n, uint64_t off) {
  return pread(fd, out, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
}

}  // namespace

uint32_t kernel_globals_bytes(int fd) {
  Elf64_Ehdr eh;
  if (!read_at(fd, &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
    return 0;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  if (sh.empty() || !read_at(fd, sh.data(), sh.size() * sizeof(Elf64_Shdr), eh.e_shoff)) return 0;
  uint64_t total = 0;
  for (const Elf64_Shdr& tab : sh) {
    if (tab.sh_type != SHT_SYMTAB || tab.sh_link >= sh.size() || tab.sh_entsize != sizeof(Elf64_Sym)) continue;
    const Elf64_Shdr& strs = sh[tab.sh_link];
    std::vector<Elf64_Sym> syms(tab.sh_size / sizeof(Elf64_Sym));
    std::string names(strs.sh_size, '\0');
    if (!read_at(fd, syms.data(), syms.size() * sizeof(Elf64_Sym), tab.sh_offset) ||
        !read_at(fd, names.data(), names.size(), strs.sh_offset))
      return 0;
    for (const Elf64_Sym& y : syms) {
      if (ELF64_ST_TYPE(y.st_info) != STT_OBJECT || !y.st_size || y.st_shndx == SHN_UNDEF ||
          y.st_shndx >= sh.size() || y.st_name >= names.size())
        continue;
      const Elf64_Shdr& sec = sh[y.st_shndx];
      // Mutable data (.data, .bss and the like), not thread-local.
      if (!(sec.sh_flags & SHF_WRITE) || (sec.sh_flags & SHF_TLS) || (sec.sh_flags & SHF_EXECINSTR)) continue;
      if (kernel_own_symbol(names.c_str() + y.st_name)) total += y.st_size;
    }
  }
  return static_cast<uint32_t>(std::min<uint64_t>(total, UINT32_MAX));
}

void watch_kernel_start(Fiber* f, uintptr_t sp) {
  KernelState& k = f->api;
  const RunState& rs = *f->core->run;
  k.noc.guard = rs.watch.strict_noc_loads || (f->desc && f->desc->defines.count("ZYX_EMU_STRICT_NOC_LOADS"));
  k.noc.strict = k.noc.guard || rs.watch.strict_noc || (f->desc && f->desc->defines.count("ZYX_EMU_STRICT_NOC"));
  if (!rs.watch.stack) return;
  k.stack_base = sp;
  // The kernel's globals take their share of the memory first; a kernel
  // whose globals fill it has no stack left (any depth fails at its first
  // checked call).
  uint32_t memory = card_stack_bytes(rs.board->arch, f->processor);
  k.stack_globals = f->kernel ? f->kernel->globals_bytes : 0;
  k.stack_limit = k.stack_globals < memory ? memory - k.stack_globals : 1;
}

void check_stack_depth(uintptr_t frame, const char* op) {
  const Fiber* f = t_fiber;
  const KernelState& k = f->api;
  if (!k.stack_limit || frame >= k.stack_base || k.stack_base - frame <= k.stack_limit) return;
  std::ostringstream s;
  s << op << ": the kernel's stack is " << (k.stack_base - frame) << " bytes deep at this call, more than the ";
  if (k.stack_globals) {
    uint32_t memory = card_stack_bytes(f->core->run->board->arch, f->processor);
    s << (k.stack_globals < memory ? memory - k.stack_globals : 0) << " bytes that the kernel's " << k.stack_globals
      << " bytes of globals leave of the " << memory << " bytes";
  } else
    s << k.stack_limit << " bytes";
  s << " of local data memory a " << processor_core(f->processor) << " has on a " << f->core->run->board->arch
    << " card, where its stack shares that memory with the globals: on a card it overflows (watcher check "
       "stack; measured on the host, whose frames are larger than a RISC-V core's, so a kernel near the limit "
       "may pass on a card; ZYX_EMU_WATCHER=no-stack turns it off)";
  kernel_fail(s.str());
}

namespace {

struct Collect {
  uintptr_t* pcs;
  uint32_t n, max;
};

// Each frame's address as a lookup address: a return address less one (the
// call instruction), a signal frame's address as it is (the faulting
// instruction).
_Unwind_Reason_Code collect_frame(struct _Unwind_Context* ctx, void* arg) {
  auto* c = static_cast<Collect*>(arg);
  int before = 0;
  uintptr_t pc = _Unwind_GetIPInfo(ctx, &before);
  if (!pc) return _URC_END_OF_STACK;
  if (c->n >= c->max) return _URC_END_OF_STACK;
  c->pcs[c->n++] = before ? pc : pc - 1;
  return _URC_NO_REASON;
}

void capture(KernelState& k) {
  Collect c{k.site_pcs, 0, ZYX_EMU_SITE_PCS};
  _Unwind_Backtrace(collect_frame, &c);
  k.site_n = c.n;
}

// One frame of addr2line's answer.
struct Frame {
  std::string function, file;
  uint32_t line = 0;
};

// Runs addr2line on `object` for the offsets; per offset its frames,
// innermost inlined first. Empty when addr2line is not there.
std::vector<std::vector<Frame>> addr2line(const std::string& object, const std::vector<uintptr_t>& offsets) {
  std::vector<std::vector<Frame>> out;
  const char* tool = std::getenv("ZYX_EMU_ADDR2LINE");
  std::string exe = tool && *tool ? tool : "addr2line";
  std::vector<std::string> args = {exe, "-e", object, "-f", "-i", "-C", "-a"};
  for (uintptr_t o : offsets) {
    char b[32];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(o));
    args.push_back(b);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return out;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(p[1]);
  std::string text;
  if (rc == 0) {
    char buf[4096];
    for (ssize_t r; (r = read(p[0], buf, sizeof buf)) != 0;) {
      if (r < 0) {
        if (errno == EINTR) continue;
        break;
      }
      text.append(buf, static_cast<size_t>(r));
    }
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  close(p[0]);
  std::istringstream in(text);
  std::string l;
  std::vector<Frame>* cur = nullptr;
  while (std::getline(in, l)) {
    if (l.rfind("0x", 0) == 0) {
      out.emplace_back();
      cur = &out.back();
      continue;
    }
    if (!cur) continue;
    Frame fr;
    fr.function = l;
    if (!std::getline(in, l)) break;
    if (size_t d = l.find(" (discriminator"); d != std::string::npos) l.resize(d);
    size_t colon = l.rfind(':');
    if (colon != std::string::npos) {
      fr.file = l.substr(0, colon);
      fr.line = static_cast<uint32_t>(std::strtoul(l.c_str() + colon + 1, nullptr, 10));
    }
    cur->push_back(std::move(fr));
  }
  return out;
}

// A file of the kernel's own source, as the author names it: the kernel
// ("<name>.cpp", compiled from the runtime's working directory, mapped to
// /zyx-kernel-cwd) or an include file of the program (/zyx-kernel/include/…);
// "" for the emulator's headers and the generated wrapper.
std::string user_file(const std::string& file, const std::string& kernel_name) {
  static const std::string cwd = "/zyx-kernel-cwd/", inc = "/zyx-kernel/include/";
  if (file == cwd + kernel_name + ".cpp") return kernel_name + ".cpp";
  if (file.rfind(inc, 0) == 0) return file.substr(inc.size());
  return "";
}

// Symbolized answers by (object path, offset): a kernel that fails on many
// cores at one line costs one addr2line run.
std::mutex g_sym_mu;
std::map<std::pair<std::string, uintptr_t>, std::vector<Frame>> g_sym_cache;

// The first frame in the kernel's source among the addresses (outermost
// call last), as " at file:line"; failing that, the kernel function of the
// first address in the object.
std::string locate(const Fiber* f, const uintptr_t* pcs, uint32_t n) {
  if (!f || !f->kernel || !f->kernel->handle) return "";
  Dl_info self{};
  if (!dladdr(reinterpret_cast<void*>(f->kernel->run), &self) || !self.dli_fbase) return "";
  uintptr_t base = reinterpret_cast<uintptr_t>(self.dli_fbase);
  std::vector<uintptr_t> offs;
  for (uint32_t i = 0; i < n; i++) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(pcs[i]), &info) && info.dli_fbase == self.dli_fbase)
      offs.push_back(pcs[i] - base);
  }
  if (offs.empty()) return "";
  const std::string& path = f->kernel->path;
  std::vector<std::vector<Frame>> frames(offs.size());
  {
    std::lock_guard<std::mutex> lock(g_sym_mu);
    std::vector<uintptr_t> missing;
    for (uintptr_t o : offs)
      if (!g_sym_cache.count({path, o})) missing.push_back(o);
    if (!missing.empty()) {
      auto got = addr2line(path, missing);
      for (size_t i = 0; i < missing.size(); i++)
        g_sym_cache[{path, missing[i]}] = i < got.size() ? got[i] : std::vector<Frame>{};
    }
    for (size_t i = 0; i < offs.size(); i++) frames[i] = g_sym_cache[{path, offs[i]}];
  }
  const std::string& name = f->desc->name;
  for (const auto& chain : frames)
    for (const Frame& fr : chain) {
      std::string file = user_file(fr.file, name);
      if (!file.empty() && fr.line) return " at " + file + ":" + std::to_string(fr.line);
    }
  for (const auto& chain : frames)
    if (!chain.empty() && chain.back().function != "??")
      return " in " + chain.back().function + " (no line: build kernels with -g for file:line)";
  return "";
}

}  // namespace

void capture_site(KernelState& k) { capture(k); }
void capture_site_in_handler(KernelState& k) { capture(k); }

std::string site_text(const Fiber* f) {
  if (!f || !f->api.site_n) return "";
  return locate(f, f->api.site_pcs, f->api.site_n);
}

std::string site_of_pc(const Fiber* f, uintptr_t pc) {
  if (!pc) return "";
  uintptr_t at = pc - 1;
  return locate(f, &at, 1);
}

}  // namespace zyx::emu
