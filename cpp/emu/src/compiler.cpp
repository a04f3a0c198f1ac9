// KernelBuilder: turns one kernel into a shared object with the host C++
// compiler, against the emulation headers, and caches the result on disk
// (and loaded, in memory) under a hash of everything that goes into it.
//
// The cache is code the runtime loads and runs, so it is treated as such
// (docs/emulator.md, "Building kernels"):
//  - it never lives in a shared place: without a cache_dir, XDG_CACHE_HOME or
//    HOME the builder makes a private directory (mkdtemp, 0700) and removes it
//    when the layer goes;
//  - every directory from the cache root down is checked: ours, not writable
//    by others (an ancestor may be root's, or writable by others when sticky);
//  - an object is opened with O_NOFOLLOW and checked on the open descriptor
//    (a regular file of ours that nobody else can write) before it is
//    dlopen'ed through /proc/self/fd, so what is checked is what is loaded;
//  - a build happens in a private mkdtemp directory, files are created with
//    O_EXCL|O_NOFOLLOW, and the object is renamed into place;
//  - the compiler runs under a small supervisor process: in a process group
//    of its own, with a bounded wait; on a timeout, a cancel or the death of
//    the runtime the supervisor kills the whole group and removes the build
//    directory.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string_view>
#include <system_error>
#include <thread>

#include "emu.hpp"
#include "runner.hpp"
#include "debug_mode.hpp"

#ifndef ZYX_EMU_INCLUDE_DIR
#define ZYX_EMU_INCLUDE_DIR ""
#endif
#ifndef ZYX_EMU_GENERATED_INCLUDE_DIR
#define ZYX_EMU_GENERATED_INCLUDE_DIR ""
#endif

extern char** environ;

namespace fs = std::filesystem;

namespace zyx::emu {

KernelObject::~KernelObject() {
  if (handle) dlclose(handle);
}

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string errno_text(int e) { return std::strerror(e); }

// ---- trusted directories and files -----------------------------------------

// Why a directory we are about to use as (part of) the cache is not safe, or
// "" when it is. `leaf`: the cache directory itself (must be ours and not
// writable by others); otherwise an ancestor (ours or root's; writable by
// others only with the sticky bit, as /tmp).
std::string dir_problem(const struct stat& st, bool leaf) {
  uid_t me = geteuid();
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (leaf) {
    if (st.st_uid != me)
      return "owned by uid " + std::to_string(st.st_uid) + ", not by this process's uid " + std::to_string(me);
    if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by its group or by others";
    return "";
  }
  if (st.st_uid != me && st.st_uid != 0)
    return "owned by uid " + std::to_string(st.st_uid) + " (neither this process's uid nor root)";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return "writable by its group or by others and not sticky";
  return "";
}

// Checks every ancestor of `dir` (an existing directory) and `dir` itself,
// and returns its resolved path: later lookups go through that, so that a
// symbolic link on the way cannot be repointed after the check.
std::string check_dir_chain(const std::string& dir, const char* what) {
  std::error_code ec;
  fs::path real = fs::canonical(dir, ec);
  if (ec) throw Error("invalid_argument", std::string(what) + " " + dir + ": " + ec.message());
  fs::path at = "/";
  std::vector<fs::path> chain{at};
  for (const auto& part : real.relative_path()) chain.push_back(at /= part);
  for (size_t i = 0; i < chain.size(); i++) {
    struct stat st{};
    if (stat(chain[i].c_str(), &st) != 0)
      throw Error("invalid_argument", std::string(what) + " " + chain[i].string() + ": " + errno_text(errno));
    bool leaf = i + 1 == chain.size();
    std::string why = dir_problem(st, leaf);
    if (!why.empty())
      throw Error("invalid_argument", std::string("refusing ") + what + " " + dir + ": " +
                                          (leaf ? "it" : chain[i].string()) + " is " + why +
                                          " (a kernel cache must be private: others could plant code the runtime runs)");
  }
  return real.string();
}

// Creates `dir` and its missing parents (mode 0700), then checks the chain;
// returns the resolved path.
std::string make_private_dir(const std::string& dir, const char* what) {
  std::string cur;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    cur = dir.substr(0, pos);
    if (cur.empty()) continue;
    if (mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST)
      throw Error("invalid_argument", std::string("cannot create ") + what + " " + cur + ": " + errno_text(errno));
  }
  return check_dir_chain(dir, what);
}

// A subdirectory we create ourselves: no symlink, a directory of ours that
// nobody else can write.
void make_own_subdir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw Error("invalid_argument", "cannot create the kernel cache " + dir + ": " + errno_text(errno));
  struct stat st{};
  if (lstat(dir.c_str(), &st) != 0)
    throw Error("invalid_argument", "kernel cache " + dir + ": " + errno_text(errno));
  if (S_ISLNK(st.st_mode)) throw Error("invalid_argument", "refusing kernel cache " + dir + ": it is a symbolic link");
  std::string why = dir_problem(st, true);
  if (!why.empty()) throw Error("invalid_argument", "refusing kernel cache " + dir + ": it is " + why);
}

// Why an opened object file must not be loaded, or "".
std::string object_problem(int fd) {
  struct stat st{};
  if (fstat(fd, &st) != 0) return "cannot stat it: " + errno_text(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_uid != geteuid())
    return "owned by uid " + std::to_string(st.st_uid) + ", not by this process's uid " + std::to_string(geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by its group or by others";
  return "";
}

// Removes a directory tree without following symbolic links, with raw system
// calls only (no allocation), so that the compiler supervisor can use it
// after fork in a multithreaded process. Returns false if anything is left.
bool remove_tree_at(int parent, const char* name, int depth) {
  if (depth > 32) return false;
  int fd = static_cast<int>(syscall(SYS_openat, parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd < 0) return syscall(SYS_unlinkat, parent, name, 0) == 0 || errno == ENOENT;
  alignas(8) char buf[4096];
  bool ok = true;
  for (;;) {
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      struct Dirent64 {
        uint64_t ino;
        int64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      auto* d = reinterpret_cast<Dirent64*>(buf + off);
      off += d->reclen;
      const char* nm = d->name;
      if ((nm[0] == '.' && nm[1] == 0) || (nm[0] == '.' && nm[1] == '.' && nm[2] == 0)) continue;
      if (d->type == DT_DIR) {
        ok = remove_tree_at(fd, nm, depth + 1) && ok;
      } else if (syscall(SYS_unlinkat, fd, nm, 0) != 0 && errno != ENOENT) {
        if (errno == EISDIR) ok = remove_tree_at(fd, nm, depth + 1) && ok;
        else ok = false;
      }
    }
  }
  syscall(SYS_close, fd);
  if (syscall(SYS_unlinkat, parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT) ok = false;
  return ok;
}

bool remove_tree(const std::string& path) { return remove_tree_at(AT_FDCWD, path.c_str(), 0); }

// Hash of every file under the include dirs, in their search order, so
// that a header change (or a header moving from one dir to another)
// invalidates cached kernels without anyone bumping a constant.
std::string hash_headers(const std::vector<std::string>& dirs) {
  Hasher h;
  h.add_u64(ZYX_EMU_ABI_VERSION);
  h.add_u64(dirs.size());
  for (const std::string& dir : dirs) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
      if (it->is_regular_file()) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    h.add_u64(files.size());
    for (auto& p : files) {
      std::ifstream in(p, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      h.add(fs::relative(p, dir).string());
      h.add(ss.str());
    }
  }
  return h.hex();
}

// The kernel header directories, searched in this order: ZYX_EMU_INCLUDE
// (':'-separated), else the source tree's hand-written headers and the
// build's generated forwarding headers.
std::vector<std::string> kernel_include_dirs() {
  std::vector<std::string> dirs;
  std::string list = env_or("ZYX_EMU_INCLUDE", "");
  if (list.empty()) {
    for (const char* d : {ZYX_EMU_INCLUDE_DIR, ZYX_EMU_GENERATED_INCLUDE_DIR})
      if (*d) dirs.emplace_back(d);
    return dirs;
  }
  for (size_t at = 0; at <= list.size();) {
    size_t colon = list.find(':', at);
    if (colon == std::string::npos) colon = list.size();
    if (colon > at) dirs.push_back(list.substr(at, colon - at));
    at = colon + 1;
  }
  return dirs;
}

const std::regex& old_style_main() {
  static const std::regex re(R"(void\s+MAIN\b)");
  return re;
}

// ---- the compiler supervisor ------------------------------------------------

// Exit status of a supervisor whose compiler it killed on request.
constexpr int kKilledStatus = 250;

// Runs in the child of fork() (of a multithreaded process): async-signal-safe
// calls only. Starts the compiler in a process group of its own, waits for
// it, and kills the whole group (then removes the build directory) when the
// runtime dies (parent-death signal) or asks (SIGTERM). Never returns.
[[noreturn]] void supervise(pid_t runtime, int out_fd, int null_fd, const char* exe, const char* const* argv,
                            const char* const* envp, const char* build_dir, const sigset_t* orig_mask) {
  sigset_t waitset;
  sigemptyset(&waitset);
  sigaddset(&waitset, SIGCHLD);
  sigaddset(&waitset, SIGTERM);
  sigaddset(&waitset, SIGHUP);
  sigaddset(&waitset, SIGINT);
  sigprocmask(SIG_BLOCK, &waitset, nullptr);
  // Dispositions the runtime may have changed would be inherited; the
  // compiler wants the defaults.
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGPIPE, SIGCHLD, SIGSEGV, SIGBUS, SIGFPE}) sigaction(s, &dfl, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  auto cleanup_exit = [&](int code) {
    remove_tree(build_dir);
    _exit(code);
  };
  if (getppid() != runtime) cleanup_exit(kKilledStatus);  // the runtime died before the signal was armed
  // Keep only the compiler's stdin (/dev/null) and output (the pipe): other
  // threads' pipes and the runtime's protocol stream must not stay open here.
  int o = fcntl(out_fd, F_DUPFD, 10), z = fcntl(null_fd, F_DUPFD, 10);
  if (o < 0 || z < 0) cleanup_exit(126);
  dup2(z, 0);
  dup2(o, 1);
  dup2(o, 2);
  syscall(SYS_close_range, 3u, ~0u, 0u);
  pid_t c = fork();
  if (c < 0) cleanup_exit(126);
  if (c == 0) {
    setpgid(0, 0);
    sigprocmask(SIG_SETMASK, orig_mask, nullptr);
    execve(exe, const_cast<char* const*>(argv), const_cast<char* const*>(envp));
    static const char msg[] = "zyx-emu: cannot run the kernel compiler (ZYX_EMU_CXX)\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    _exit(127);
  }
  setpgid(c, c);
  dup2(0, 1);  // drop this process's copies of the pipe
  dup2(0, 2);
  int status = 0;
  for (;;) {
    siginfo_t info{};
    int sig = sigwaitinfo(&waitset, &info);
    if (sig < 0) continue;  // EINTR
    if (sig == SIGCHLD) {
      pid_t w;
      bool done = false;
      while ((w = waitpid(-1, &status, WNOHANG)) > 0)
        if (w == c) done = true;
      if (!done) continue;
      // The compiler driver is gone; take down anything it left in its group.
      kill(-c, SIGKILL);
      while (waitpid(-1, nullptr, WNOHANG) > 0) {
      }
      if (WIFEXITED(status)) _exit(WEXITSTATUS(status) == kKilledStatus ? 1 : WEXITSTATUS(status));
      _exit(WIFSIGNALED(status) ? 128 + (WTERMSIG(status) & 63) : 1);  // below kKilledStatus
    }
    // SIGTERM (a cancel, a timeout, or the runtime's death), SIGHUP, SIGINT.
    kill(-c, SIGKILL);
    while (waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
    }
    cleanup_exit(kKilledStatus);
  }
}

// The compiler's executable: a path as given, or found on PATH (before fork:
// the supervisor may not search).
std::string find_executable(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  std::string path = env_or("PATH", "/usr/local/bin:/usr/bin:/bin");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string d = path.substr(start, end - start);
    std::string cand = (d.empty() ? std::string(".") : d) + "/" + name;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  throw Error("compile_error", "the kernel compiler \"" + name + "\" (ZYX_EMU_CXX) is not on PATH");
}

std::chrono::seconds compile_timeout() {
  if (const char* s = std::getenv("ZYX_EMU_COMPILE_TIMEOUT_S")) {
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end != s && v > 0) return std::chrono::seconds(v);
  }
  return std::chrono::seconds(600);
}

}  // namespace

void write_new_file(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw Error("compile_error", "cannot create " + path + ": " + errno_text(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      close(fd);
      throw Error("compile_error", "cannot write " + path + ": " + errno_text(e));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0) throw Error("compile_error", "cannot write " + path + ": " + errno_text(errno));
}

std::string include_path_problem(const std::string& path) {
  if (path.empty()) return "empty path";
  if (path.size() > 4096) return "path longer than 4096 bytes";
  if (path.find('\0') != std::string::npos) return "path contains a NUL byte";
  if (path[0] == '/') return "absolute path (want a relative one)";
  for (size_t at = 0; at <= path.size();) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    std::string part = path.substr(at, slash - at);
    if (part.empty()) return "empty path component";
    if (part == "." || part == "..") return "\"" + part + "\" component";
    at = slash + 1;
  }
  return "";
}

std::string kernel_path_problem(const std::string& path) {
  if (std::string why = include_path_problem(path); !why.empty()) return why;
  for (char ch : path)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && std::string("._+-/").find(ch) == std::string::npos)
      return "holds a character other than letters, digits and ._+-/";
  return "";
}

namespace {
// The count of a `#pragma GCC unroll` line (its text after "unroll"), when
// it is an integer literal the host compiler evaluates anywhere: 8, (8), 8u.
bool literal_unroll_count(std::string_view count) {
  auto trim = [](std::string_view v) {
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.front()))) v.remove_prefix(1);
    while (!v.empty() && std::isspace(static_cast<unsigned char>(v.back()))) v.remove_suffix(1);
    return v;
  };
  count = trim(count);
  if (count.size() >= 2 && count.front() == '(' && count.back() == ')')
    count = trim(count.substr(1, count.size() - 2));
  if (count.empty() || !std::isdigit(static_cast<unsigned char>(count[0]))) return false;
  for (char c : count)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '\'') return false;
  return true;
}

// Whether a line is `# pragma GCC unroll …` (any spacing); *count is the rest.
bool unroll_pragma_line(std::string_view line, std::string_view* count) {
  size_t at = 0;
  auto space = [&] {
    while (at < line.size() && (line[at] == ' ' || line[at] == '\t')) at++;
  };
  auto word = [&](std::string_view w) {
    space();
    if (line.substr(at, w.size()) != w) return false;
    at += w.size();
    return at == line.size() || !(std::isalnum(static_cast<unsigned char>(line[at])) || line[at] == '_');
  };
  space();
  if (at >= line.size() || line[at] != '#') return false;
  at++;
  if (!word("pragma") || !word("GCC") || !word("unroll")) return false;
  *count = line.substr(at);
  return true;
}
}  // namespace

std::string without_unevaluable_unroll_pragmas(const std::string& text) {
  if (text.find("unroll") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string_view whole(text.data() + at, end - at), line = whole, count;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!(unroll_pragma_line(line, &count) && !literal_unroll_count(count))) out.append(whole);
    if (end < text.size()) out.push_back('\n');
    at = end + 1;
  }
  return out;
}

// ---- KernelBuilder ----------------------------------------------------------

KernelBuilder::KernelBuilder(std::string cache_dir, const Board& board) : board_(board) {
  include_dirs_ = kernel_include_dirs();
  cxx_ = env_or("ZYX_EMU_CXX", "c++");
  // Debug mode (watcher.hpp): no optimization and full debug info, so that
  // a debugger can step through a kernel and print its locals.
  cxxflags_ = env_or("ZYX_EMU_CXXFLAGS", debug_mode()
                                             ? "-O0 -g -std=c++20 -fPIC -shared -fstack-clash-protection"
                                             : "-O2 -g1 -fno-optimize-sibling-calls -std=c++20 -fPIC -shared "
                                               "-fstack-clash-protection");
  header_hash_ = hash_headers(include_dirs_);
  std::string root = cache_dir;
  if (root.empty()) {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/')
      root = std::string(x) + "/zyx/tt";
    else if (const char* h = std::getenv("HOME"); h && *h == '/')
      root = std::string(h) + "/.cache/zyx/tt";
  }
  if (root.empty()) {
    // No place of the user's own to cache in: a private directory for this
    // layer's lifetime, never a shared, predictable one.
    std::string tmp = env_or("TMPDIR", "/tmp");
    if (tmp[0] != '/') tmp = "/tmp";
    std::string templ = tmp + "/zyx-tt-kernels-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back(0);
    if (!mkdtemp(buf.data()))
      throw Error("invalid_argument", "no kernel cache: cache_dir is empty and XDG_CACHE_HOME and HOME are unset, and "
                                      "a private directory in " + tmp + " cannot be made: " + errno_text(errno));
    root = buf.data();
    private_root_ = root;
    root = check_dir_chain(root, "kernel cache");
  } else {
    root = make_private_dir(root, "kernel cache");
  }
  cache_dir_ = root + "/emu";
  make_own_subdir(cache_dir_);
}

KernelBuilder::~KernelBuilder() {
  cancel();
  loaded_.clear();
  if (!private_root_.empty()) remove_tree(private_root_);
}

void KernelBuilder::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (pid_t p : supervisors_) kill(p, SIGTERM);
}

std::shared_ptr<KernelObject> KernelBuilder::get(const KernelDesc& kernel, const std::vector<uint32_t>& compile_args,
                                                 const std::vector<std::pair<std::string, uint32_t>>& named_args,
                                                 const ProgramDesc& program, bool check_cb_access) {
  BuildSpec s;
  s.name = kernel.name;
  s.program_name = program.name;
  s.processor = kernel.processor == Processor::Riscv0 ? 0 : kernel.processor == Processor::Riscv1 ? 1 : 2;
  s.noc = kernel.noc;
  s.source = &kernel.source;
  s.path = &kernel.path;
  s.defines = &kernel.defines;
  s.compile_args = compile_args;
  s.named_args = named_args;
  s.bindings = kernel_bindings_source(kernel, compile_args, named_args);
  for (const auto& f : program.include_files) s.include_files.emplace_back(&f.path, &f.source);
  s.fp32_dest_acc = kernel.compute.fp32_dest_acc;
  s.math_approx = kernel.compute.math_approx_mode;
  s.dst_full_sync = kernel.compute.dst_full_sync;
  static const char* fidelities[] = {"LoFi", "HiFi2", "HiFi3", "HiFi4"};
  s.math_fidelity = fidelities[static_cast<int>(kernel.compute.math_fidelity) & 3];
  s.check_cb_access = check_cb_access;
  // What tt-metal compiles into the kernel as its CBs' tile sizes: the CB
  // configs on the kernel's cores. An index whose page size differs between
  // those cores has no compile-time value (get_tile_size asks at run time).
  // The same for their data formats and tile shapes (get_dataformat,
  // get_tile_hw).
  std::array<bool, kCircularBuffersPerCore> conflict{}, format_conflict{}, hw_conflict{};
  std::array<bool, kCircularBuffersPerCore> seen{};
  for (const CoreCoord& c : kernel.cores.cores())
    for (const auto& cfg : program.cbs) {
      if (!cfg.cores.contains(c)) continue;
      for (const auto& ix : cfg.indices) {
        if (ix.index >= kCircularBuffersPerCore || ix.page_bytes == 0) continue;
        uint32_t& v = s.cb_tile_sizes[ix.index];
        if (v != 0 && v != ix.page_bytes) conflict[ix.index] = true;
        v = ix.page_bytes;
        uint32_t format = static_cast<uint32_t>(ix.format);
        if (seen[ix.index] && s.cb_formats[ix.index] != format) format_conflict[ix.index] = true;
        if (seen[ix.index] && (s.cb_tile_rows[ix.index] != ix.tile_rows || s.cb_tile_cols[ix.index] != ix.tile_cols))
          hw_conflict[ix.index] = true;
        s.cb_formats[ix.index] = format;
        s.cb_tile_rows[ix.index] = ix.tile_rows;
        s.cb_tile_cols[ix.index] = ix.tile_cols;
        seen[ix.index] = true;
      }
    }
  for (size_t i = 0; i < kCircularBuffersPerCore; i++) {
    if (conflict[i]) s.cb_tile_sizes[i] = 0;
    if (format_conflict[i]) s.cb_formats[i] = 0xff;
    if (hw_conflict[i]) s.cb_tile_rows[i] = s.cb_tile_cols[i] = 0;
  }
  if (s.processor == 2) {
    TriscMode mode = trisc_mode_from_env();
    if (mode == TriscMode::Three ||
        (mode == TriscMode::Auto && refers_to_triscs(kernel.source, kernel.path, s.include_files)))
      return get_triscs(s);
  }
  return get(s);
}

// The three builds of a compute kernel (TRISC_UNPACK, TRISC_MATH,
// TRISC_PACK), each built or taken from the caches as any object is (its
// role is in its generated source, so in its key), in parallel.
std::shared_ptr<KernelObject> KernelBuilder::get_triscs(const BuildSpec& spec) {
  auto obj = std::make_shared<KernelObject>();
  std::exception_ptr err[3];
  auto one = [&](int r) {
    try {
      BuildSpec s = spec;
      s.trisc = r + 1;
      obj->triscs[r] = get(s);
    } catch (...) {
      err[r] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (int r = 1; r < 3; r++) {
    try {
      threads.emplace_back(one, r);
    } catch (const std::system_error&) {
      one(r);  // no thread: build it here
    }
  }
  one(0);
  for (auto& t : threads) t.join();
  for (auto& e : err)
    if (e) std::rethrow_exception(e);
  return obj;
}

// The version of what compile_inputs wraps around a kernel: part of the
// key, so that objects built by an older wrapper are rebuilt, not reused.
// 2: everything but the entry points has hidden visibility (-fvisibility=hidden).
// 3: and GCC builds with -fno-gnu-unique.
// 4: the key hashes the generated source and the flags themselves.
// 5: a kernel with a path in the include tree is compiled there, and the
//    tree's ttnn/cpp is an include root.
constexpr uint64_t kWrapperVersion = 5;

// The key is a hash of exactly what reaches the compiler: its command (less
// the build directory's paths), the generated source, the include files and
// the headers' contents. Nothing can reach the compiler without reaching the
// key, whatever field it came from.
std::string KernelBuilder::key_of(const CompileInputs& in) const {
  Hasher h;
  h.add_u64(kWrapperVersion);
  h.add(header_hash_);
  h.add_u64(in.flags.size());
  for (const auto& f : in.flags) h.add(f);
  h.add(in.source);
  h.add_u64(in.include_files.size());
  for (auto& f : in.include_files) h.add(*f.first), h.add(*f.second);
  return h.hex();
}

std::shared_ptr<KernelObject> KernelBuilder::get(const BuildSpec& spec) {
  CompileInputs in = compile_inputs(spec);
  std::string key = key_of(in);
  std::shared_ptr<std::mutex> key_mu;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
    auto& m = building_[key];
    if (!m) m = std::make_shared<std::mutex>();
    key_mu = m;
  }
  std::lock_guard<std::mutex> build_lock(*key_mu);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
  }
  std::string path = cache_dir_ + "/" + key + ".so";
  std::shared_ptr<KernelObject> obj;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno != ENOENT) {
    std::fprintf(stderr, "zyx-emu: not loading cached kernel object %s: %s; rebuilding it\n", path.c_str(),
                 errno_text(errno).c_str());
    unlink(path.c_str());  // ours to remove: the directory is checked to be ours
  }
  struct Fd {
    int fd;
    ~Fd() {
      if (fd >= 0) close(fd);
    }
  };
  if (fd >= 0) {
    Fd hold{fd};
    std::string why = object_problem(fd);
    if (why.empty()) {
      obj = load(fd, path);
      disk_hits_++;
    } else {
      std::fprintf(stderr, "zyx-emu: refusing cached kernel object %s: %s; rebuilding it\n", path.c_str(),
                   why.c_str());
      unlink(path.c_str());
    }
  }
  if (!obj) {
    Fd hold{build(key, spec, in)};
    obj = load(hold.fd, path);
  }
  std::lock_guard<std::mutex> lock(mu_);
  loaded_[key] = obj;
  return obj;
}

std::shared_ptr<KernelObject> KernelBuilder::load(int fd, const std::string& path) {
  auto obj = std::make_shared<KernelObject>();
  obj->path = path;
  // Load what was checked: the open descriptor, not the name. The loader
  // knows objects by the name they were opened under, and descriptor
  // numbers are reused, so the name is a fresh link (in our own directory)
  // to /proc/self/fd/N, removed once the object is loaded.
  // The sequence is the process's, not the builder's: names must differ
  // across layers too.
  // In debug mode the object is loaded under its cache path (checked just
  // now through fd, in a directory only this user can write): a debugger
  // reads a loaded object's symbols from the name it was loaded under,
  // which then still exists, while "/proc/self/…" would name the
  // debugger's own descriptors.
  static std::atomic<uint64_t> load_seq{0};
  std::string via = "/proc/self/fd/" + std::to_string(fd), link;
  if (debug_mode()) {
    link = path;
  } else {
    for (;;) {
      link = cache_dir_ + "/.load-" + std::to_string(getpid()) + "-" + std::to_string(load_seq++) + ".so";
      if (symlink(via.c_str(), link.c_str()) == 0) break;
      if (errno != EEXIST) throw Error("compile_error", "cannot load kernel object " + path + ": " + errno_text(errno));
    }
  }
  obj->handle = dlopen(link.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char* dl_error = obj->handle ? nullptr : dlerror();
  if (link != path) unlink(link.c_str());
  if (!obj->handle)
    throw Error("compile_error", "cannot load kernel object " + path + " (through " + via +
                                     "; the emulator needs /proc): " + (dl_error ? dl_error : "unknown error"));
  auto abi = reinterpret_cast<int (*)()>(dlsym(obj->handle, "zyx_emu_kernel_abi"));
  auto bind = reinterpret_cast<void (*)(const zyx_emu_api*)>(dlsym(obj->handle, "zyx_emu_kernel_bind"));
  obj->run = reinterpret_cast<void (*)()>(dlsym(obj->handle, "zyx_emu_kernel_run"));
  if (!abi || !bind || !obj->run || abi() != ZYX_EMU_ABI_VERSION)
    throw Error("compile_error", "kernel object " + path + " does not speak emulator ABI " +
                                     std::to_string(ZYX_EMU_ABI_VERSION));
  bind(kernel_api());
  obj->globals_bytes = kernel_globals_bytes(fd);
  return obj;
}

std::string c_string_literal(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

KernelBuilder::CompileInputs KernelBuilder::compile_inputs(const BuildSpec& s) {
  CompileInputs in;
  in.source = generated_source(s);
  in.flags = compile_flags(s);
  in.include_files = s.include_files;
  // A kernel with a path is one file of the include tree, written and
  // hashed with the others; an include file at that path must be it.
  if (s.path && !s.path->empty()) {
    if (std::string why = kernel_path_problem(*s.path); !why.empty())
      throw Error("invalid_argument", "path \"" + *s.path + "\" of the " + s.name + " kernel: " + why);
    bool listed = false;
    for (auto& f : s.include_files)
      if (*f.first == *s.path) {
        if (*f.second != *s.source)
          throw Error("invalid_argument", "path \"" + *s.path + "\" of the " + s.name +
                                              " kernel is also an include file with other text");
        listed = true;
      }
    if (!listed) in.include_files.emplace_back(s.path, s.source);
  }
  return in;
}

std::string KernelBuilder::generated_source(const BuildSpec& s) const {
  bool is_compute = s.processor == 2;
  std::ostringstream out;
  // The kernel's name is free text (from tt.json or the protocol): it enters
  // the source only as a string literal, never as code or a comment, where a
  // line break or a trailing backslash would change the program.
  out << "// Generated by zyx-tt's emulator\n";
  out << "#define ZYX_EMU_SECTION_" << (is_compute ? "COMPUTE" : "DATAFLOW") << " 1\n";
  out << "#define ZYX_EMU_PROCESSOR " << s.processor << "\n";
  out << "#define ZYX_EMU_NOC " << s.noc << "\n";
  // A TRISC build: tt-metal's define of that processor, and ours, which
  // compute.h turns into the UNPACK/MATH/PACK macros of that build.
  static const char* trisc_defines[] = {"TRISC_UNPACK", "TRISC_MATH", "TRISC_PACK"};
  if (is_compute && s.trisc >= 1 && s.trisc <= 3)
    out << "#define ZYX_EMU_TRISC " << s.trisc << "\n#define " << trisc_defines[s.trisc - 1] << "\n";
  // Compile-time args in tt-metal's three forms: the list behind
  // get_compile_time_arg_val, one macro per index (usable in #if), and the
  // named map behind get_named_compile_time_arg_val.
  out << "#define ZYX_EMU_NUM_COMPILE_ARGS " << s.compile_args.size() << "\n";
  out << "#define KERNEL_COMPILE_TIME_ARGS ";
  for (size_t i = 0; i < s.compile_args.size(); i++) out << (i ? "," : "") << s.compile_args[i];
  out << "\n";
  for (size_t i = 0; i < s.compile_args.size(); i++)
    out << "#define KERNEL_COMPILE_TIME_ARG_" << i << " " << s.compile_args[i] << "\n";
  if (!s.named_args.empty()) {
    out << "#define KERNEL_COMPILE_TIME_ARG_MAP ";
    // A name is any string, as on tt-metal ("", "!@#$%^&*()"): a literal
    // with its length, so that every byte (a NUL too) is part of it.
    for (size_t i = 0; i < s.named_args.size(); i++) {
      const std::string& n = s.named_args[i].first;
      out << (i ? ", " : "") << "{std::string_view(" << c_string_literal(n) << ", " << n.size() << "), "
          << s.named_args[i].second << "u}";
    }
    out << "\n";
  }
  out << "#define ZYX_EMU_FP32_DEST_ACC " << (s.fp32_dest_acc ? 1 : 0) << "\n";
  out << "#define ZYX_EMU_MATH_APPROX " << (s.math_approx ? 1 : 0) << "\n";
  if (s.dst_full_sync) out << "#define DST_SYNC_MODE DstSync::SyncFull\n";
  out << "#define ZYX_EMU_MATH_FIDELITY_NAME \"" << s.math_fidelity << "\"\n";
  out << "#define ZYX_EMU_NUM_DRAM_BANKS " << board_.dram_banks << "\n";
  auto list = [&out](const char* name, const auto& values) {
    out << "#define " << name << " ";
    for (size_t i = 0; i < values.size(); i++) out << (i ? "," : "") << values[i];
    out << "\n";
  };
  list("ZYX_EMU_CB_TILE_SIZES", s.cb_tile_sizes);
  list("ZYX_EMU_CB_FORMATS", s.cb_formats);
  list("ZYX_EMU_CB_TILE_ROWS", s.cb_tile_rows);
  list("ZYX_EMU_CB_TILE_COLS", s.cb_tile_cols);
  out << "#include \"zyx_emu/kernel_prelude.h\"\n";
  out << s.bindings;
  if (s.path && !s.path->empty()) {
    // The kernel where it lives in the include tree, so that its relative
    // includes resolve from its own directory. Its path reaches the
    // compiler in a flag (compile_flags), never in this text.
    out << "#include ZYX_EMU_KERNEL_FILE\n";
  } else {
    out << "#line 1 " << c_string_literal(s.name + ".cpp") << "\n";
    out << without_unevaluable_unroll_pragmas(*s.source) << "\n";
  }
  out << "#line 1 \"zyx_emu_entry\"\n";
  bool old_style = is_compute && std::regex_search(*s.source, old_style_main());
  out << "extern \"C\" __attribute__((visibility(\"default\"))) void zyx_emu_kernel_run() { "
      << (old_style ? "::NAMESPACE::MAIN;" : "kernel_main();") << " }\n";
  return out.str();
}

std::vector<std::string> KernelBuilder::compile_flags(const BuildSpec& s) {
  std::vector<std::string> args = split_words(cxx_);
  if (args.empty()) throw Error("compile_error", "ZYX_EMU_CXX is empty");
  for (auto& w : split_words(cxxflags_)) args.push_back(w);
  args.push_back("-pipe");
  // No symbol with GNU unique binding, which GCC gives an exported symbol of
  // vague linkage (an inline variable such as the API table pointer, a
  // static local of an inline function or template): every later object
  // binds to the first object's, and the loader never unloads that one, so
  // it would stay mapped for the process's life, bound to a file that a
  // rebuild may since have replaced. -fvisibility=hidden keeps everything
  // but the entry points (marked default in the source) from being exported,
  // and leaves declarations (the C library's functions) alone, unlike the
  // visibility pragma; libstdc++ marks its own templates default, so GCC
  // also gets -fno-gnu-unique.
  args.push_back("-fvisibility=hidden");
  if (takes_no_gnu_unique()) args.push_back("-fno-gnu-unique");
  // The kernel's own calls that would end the process go to the __wrap_
  // functions of kernel_prelude.h, which stop the kernel instead.
  args.push_back(
      "-Wl,--wrap=abort,--wrap=exit,--wrap=_exit,--wrap=_Exit,--wrap=quick_exit,--wrap=__assert_fail,"
      "--wrap=__cxa_throw");
  // The watcher's check of the kernel's own loads and stores (cb-access):
  // GCC's outline address checks, each load and store a call to a hook of
  // kernel_prelude.h, with no shadow memory, poisoned stack or globals; a
  // memcpy, memmove or memset the instrumentation leaves to the library
  // goes through the prelude's checking wrappers.
  if (s.check_cb_access) {
    for (const char* a : {"-fsanitize=kernel-address", "--param=asan-instrumentation-with-call-threshold=0",
                          "--param=asan-stack=0", "--param=asan-globals=0", "--param=asan-instrument-allocas=0",
                          "--param=asan-use-after-return=0", "-Wl,--wrap=memcpy,--wrap=memmove,--wrap=memset"})
      args.push_back(a);
  }
  args.push_back(board_.arch == "blackhole" ? "-DARCH_BLACKHOLE" : "-DARCH_WORMHOLE");
  args.push_back("-DNUM_DRAM_BANKS=" + std::to_string(board_.dram_banks));
  args.push_back("-DZYX_EMU_DRAM_ALIGNMENT=" + std::to_string(board_.dram_alignment));
  args.push_back("-DNUM_L1_BANKS=" + std::to_string(board_.rows * board_.cols));
  args.push_back("-DZYX_EMU_L1_ALIGNMENT=" + std::to_string(board_.l1_alignment));
  args.push_back("-DZYX_EMU_GRID_ROWS=" + std::to_string(board_.rows));
  args.push_back("-DZYX_EMU_GRID_COLS=" + std::to_string(board_.cols));
  args.push_back("-DKERNEL_BUILD=1");
  if (s.processor == 2)
    args.push_back("-DCOMPILE_FOR_TRISC=1");
  else
    args.push_back(s.processor == 0 ? "-DCOMPILE_FOR_BRISC=1" : "-DCOMPILE_FOR_NCRISC=1");
  args.push_back("-DNOC_INDEX=" + std::to_string(s.noc));
  // The kernel file in the build's copy of the include tree, named from the
  // directory of the generated source (build()): a quoted name, which
  // kernel_path_problem keeps free of quotes and backslashes.
  if (s.path && !s.path->empty()) args.push_back("-DZYX_EMU_KERNEL_FILE=\"include/" + *s.path + "\"");
  for (auto& [k, v] : *s.defines) args.push_back("-D" + k + "=" + v);
  return args;
}

namespace {
// A fresh private directory cache_dir/prefix-XXXXXX for one compiler run.
std::string new_build_dir(const std::string& cache_dir, const char* prefix) {
  std::string templ = cache_dir + "/" + prefix + "-XXXXXX";
  std::vector<char> tb(templ.begin(), templ.end());
  tb.push_back(0);
  if (!mkdtemp(tb.data()))
    throw Error("compile_error", "cannot create a build directory in " + cache_dir + ": " + errno_text(errno));
  return tb.data();
}

// Writes a program's include files (and a kernel with a path) under inc,
// the build's copy of the include tree.
void write_include_tree(const std::string& inc,
                        const std::vector<std::pair<const std::string*, const std::string*>>& files) {
  if (mkdir(inc.c_str(), 0700) != 0) throw Error("compile_error", "cannot create " + inc + ": " + errno_text(errno));
  for (auto& f : files) {
    const std::string& rel = *f.first;
    if (std::string why = include_path_problem(rel); !why.empty())
      throw Error("invalid_argument", "include file \"" + rel + "\": " + why);
    for (size_t p = rel.find('/'); p != std::string::npos; p = rel.find('/', p + 1)) {
      std::string sub = inc + "/" + rel.substr(0, p);
      if (mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("compile_error", "cannot create " + sub + ": " + errno_text(errno));
    }
    std::string fp = inc + "/" + rel;
    if (access(fp.c_str(), F_OK) == 0) throw Error("invalid_argument", "include file \"" + rel + "\" given twice");
    write_new_file(fp, without_unevaluable_unroll_pragmas(*f.second));
  }
}

// Rewrites a build's diagnostics to name paths as the kernel author knows
// them: the generated source as "kernel", include files by their own paths.
void author_paths(std::string& diag, const std::string& dir) {
  for (const std::string& from : {dir + "/kernel.cpp", dir + "/include/", dir + "/"}) {
    std::string to = from == dir + "/kernel.cpp" ? "kernel" : "";
    for (size_t p; (p = diag.find(from)) != std::string::npos;) diag.replace(p, from.size(), to);
  }
}
}  // namespace

std::string KernelBuilder::check_syntax(const BuildSpec& s, const std::vector<std::string>& extra_flags, bool* ok) {
  CompileInputs in = compile_inputs(s);
  std::string dir = new_build_dir(cache_dir_, ".check");
  struct Cleanup {
    std::string dir;
    ~Cleanup() { remove_tree(dir); }
  } cleanup{dir};
  write_new_file(dir + "/kernel.cpp", in.source);
  // The program's include tree (and a kernel with a path in it) as a real
  // build has it, with its two roots.
  write_include_tree(dir + "/include", in.include_files);
  std::vector<std::string> args = in.flags;
  args.push_back("-fsyntax-only");
  args.push_back("-I" + dir + "/include");
  args.push_back("-I" + dir + "/include/ttnn/cpp");
  for (const std::string& f : extra_flags) args.push_back(f);
  for (const std::string& d : include_dirs_) args.push_back("-I" + d);
  args.push_back(dir + "/kernel.cpp");
  int status = 0;
  std::string diag = run_compiler(args, dir, &status);
  if (status == kKilledStatus)
    diag += "\nzyx-emu: the compiler was cancelled or took longer than ZYX_EMU_COMPILE_TIMEOUT_S\n";
  author_paths(diag, dir);
  *ok = status == 0;
  return diag;
}

int KernelBuilder::build(const std::string& key, const BuildSpec& s, const CompileInputs& in) {
  for (auto& f : in.include_files)
    if (std::string why = include_path_problem(*f.first); !why.empty())
      throw Error("invalid_argument", "include file \"" + *f.first + "\": " + why);
  std::string dir = new_build_dir(cache_dir_, ".build");
  struct Cleanup {
    std::string dir;
    ~Cleanup() { remove_tree(dir); }
  } cleanup{dir};
  std::string src_path = dir + "/kernel.cpp", obj_path = dir + "/kernel.so", inc = dir + "/include";
  write_new_file(src_path, in.source);
  write_include_tree(inc, in.include_files);

  std::vector<std::string> args = in.flags;
  // The build directory's paths are the only arguments outside the key.
  // Debug info names the kernel's files as the watcher looks for them
  // (watcher.cpp): the kernel source (a #line name, relative to the working
  // directory) under /zyx-kernel-cwd, the program's include files under
  // /zyx-kernel/include. The later map wins where both match.
  if (char cwd[4096]; getcwd(cwd, sizeof cwd) && !std::strchr(cwd, '='))
    args.push_back(std::string("-fdebug-prefix-map=") + cwd + "=/zyx-kernel-cwd");
  args.push_back("-fdebug-prefix-map=" + dir + "=/zyx-kernel");
  // The program's include tree has two roots, as tt-metal's JIT build has
  // its checkout's root and ttnn/cpp: "ttnn/cpp/ttnn/x.hpp" and
  // "ttnn/x.hpp" find the same file of a program that ships a ttnn-style
  // tree. Both come before the emulator's headers.
  args.push_back("-I" + inc);
  args.push_back("-I" + inc + "/ttnn/cpp");
  for (const std::string& d : include_dirs_) args.push_back("-I" + d);
  args.push_back("-o");
  args.push_back(obj_path);
  args.push_back(src_path);

  int status = 0;
  std::string diag = run_compiler(args, dir, &status);
  compiles_++;
  if (status == kKilledStatus)
    throw Error("compile_error", s.name + " kernel of " + s.program_name + ": the build was cancelled or took longer "
                                 "than ZYX_EMU_COMPILE_TIMEOUT_S (" + std::to_string(compile_timeout().count()) + " s)");
  if (status != 0) {
    author_paths(diag, dir);
    throw Error("compile_error", s.name + " kernel of " + s.program_name + " did not build:\n" + diag);
  }
  int fd = open(obj_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) throw Error("compile_error", "the compiler left no kernel object: " + errno_text(errno));
  std::string why = object_problem(fd);
  if (!why.empty()) {
    close(fd);
    throw Error("compile_error", "the built kernel object is " + why);
  }
  std::string final_path = cache_dir_ + "/" + key + ".so";
  if (std::rename(obj_path.c_str(), final_path.c_str()) != 0) {
    int e = errno;
    close(fd);
    throw Error("compile_error", "cannot move the kernel object into " + final_path + ": " + errno_text(e));
  }
  return fd;  // the descriptor stays valid for the renamed file
}

bool KernelBuilder::takes_no_gnu_unique() {
  std::lock_guard<std::mutex> lock(probe_mu_);
  if (takes_no_gnu_unique_ < 0) {
    std::vector<std::string> args = split_words(cxx_);
    for (const char* a : {"-fno-gnu-unique", "-fsyntax-only", "-x", "c++", "/dev/null"}) args.push_back(a);
    std::string dir = new_build_dir(cache_dir_, ".probe");
    int status = 0;
    run_compiler(args, dir, &status);
    remove_tree(dir);
    if (status == kKilledStatus) return false;  // cancelled: the build that follows says so
    takes_no_gnu_unique_ = status == 0;
  }
  return takes_no_gnu_unique_ == 1;
}

std::string KernelBuilder::run_compiler(const std::vector<std::string>& args, const std::string& build_dir,
                                        int* status) {
  // Everything the supervisor needs is prepared before fork: after it only
  // async-signal-safe calls are allowed.
  std::string exe = find_executable(args[0]);
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::vector<std::string> env_store;
  for (char** e = environ; e && *e; e++)
    if (std::strncmp(*e, "TMPDIR=", 7) != 0) env_store.emplace_back(*e);
  env_store.push_back("TMPDIR=" + build_dir);  // the compiler's temporaries die with the build directory
  std::vector<const char*> envp;
  for (auto& e : env_store) envp.push_back(e.c_str());
  envp.push_back(nullptr);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) throw Error("compile_error", "cannot start the compiler: " + errno_text(errno));
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    throw Error("compile_error", "cannot open /dev/null: " + errno_text(errno));
  }
  sigset_t orig;
  pthread_sigmask(SIG_SETMASK, nullptr, &orig);
  pid_t runtime = getpid();
  pid_t sup;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) {
      close(pipefd[0]), close(pipefd[1]), close(null_fd);
      *status = kKilledStatus;
      return "";
    }
    sup = fork();
    if (sup == 0)
      supervise(runtime, pipefd[1], null_fd, exe.c_str(), argv.data(), envp.data(), build_dir.c_str(), &orig);
    if (sup > 0) supervisors_.push_back(sup);
  }
  int fork_errno = errno;
  close(pipefd[1]);
  close(null_fd);
  if (sup < 0) {
    close(pipefd[0]);
    throw Error("compile_error", "cannot start the compiler: " + errno_text(fork_errno));
  }
  std::string out;
  auto deadline = std::chrono::steady_clock::now() + compile_timeout();
  bool killed = false;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      kill(sup, SIGTERM);
      killed = true;
    }
    pollfd p{pipefd[0], POLLIN, 0};
    int r = poll(&p, 1, killed ? 1000 : static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(pipefd[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  {
    // Out of the cancel list before it is reaped, so that a cancel never
    // signals a reused pid (an unreaped child keeps its pid).
    std::lock_guard<std::mutex> lock(mu_);
    supervisors_.erase(std::remove(supervisors_.begin(), supervisors_.end(), sup), supervisors_.end());
  }
  int st = 0;
  while (waitpid(sup, &st, 0) < 0 && errno == EINTR) {
  }
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : kKilledStatus;
  return out;
}

}  // namespace zyx::emu
