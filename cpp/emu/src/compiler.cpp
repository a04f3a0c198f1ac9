// KernelBuilder: turns one kernel into a shared object with the host C++
// compiler, against the emulation headers, and caches the result on disk
// (and loaded, in memory) under a hash of everything that goes into it.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "emu.hpp"
#include "runner.hpp"

#ifndef ZYX_EMU_INCLUDE_DIR
#define ZYX_EMU_INCLUDE_DIR ""
#endif

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

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/zyx/emu";
  if (const char* h = std::getenv("HOME"); h && *h == '/') return std::string(h) + "/.cache/zyx/emu";
  return "/tmp/zyx-emu-cache";
}

// Hash of every file under the include dir, so that a header change
// invalidates cached kernels without anyone bumping a constant.
std::string hash_headers(const std::string& dir) {
  Hasher h;
  h.add_u64(ZYX_EMU_ABI_VERSION);
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  for (auto& p : files) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    h.add(fs::relative(p, dir).string());
    h.add(ss.str());
  }
  return h.hex();
}

std::string run_command(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) {
    *status = -1;
    return "cannot start the compiler: " + cmd;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) {
    if (out.size() < (1u << 20)) out.append(buf, n);
  }
  int st = pclose(p);
  *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

const std::regex& old_style_main() {
  static const std::regex re(R"(void\s+MAIN\b)");
  return re;
}

// Writes a program's include files under `dir`, a directory this process has
// just created (0700): subdirectories 0700, files 0600, each created afresh
// (O_EXCL, O_NOFOLLOW).
void write_include_files(const std::string& dir, const ProgramDesc& program) {
  for (const auto& f : program.include_files) {
    if (std::string why = include_path_problem(f.path); !why.empty())
      throw Error("invalid_argument", "include file \"" + f.path + "\": " + why);
    std::string path = dir;
    for (size_t at = 0;;) {
      size_t slash = f.path.find('/', at);
      if (slash == std::string::npos) break;
      path = dir + "/" + f.path.substr(0, slash);
      if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
        throw Error("compile_error", "cannot create the include directory for " + f.path + ": " + std::strerror(errno));
      at = slash + 1;
    }
    path = dir + "/" + f.path;
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) throw Error("compile_error", "cannot create include file " + f.path + ": " + std::strerror(errno));
    const char* p = f.source.data();
    size_t left = f.source.size();
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fd);
        throw Error("compile_error", "cannot write include file " + f.path + ": " + std::strerror(errno));
      }
      p += n, left -= static_cast<size_t>(n);
    }
    close(fd);
  }
}

}  // namespace

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

KernelBuilder::KernelBuilder(std::string cache_dir, const Board& board) : board_(board) {
  cache_dir_ = cache_dir.empty() ? default_cache_dir() : cache_dir;
  include_dir_ = env_or("ZYX_EMU_INCLUDE", ZYX_EMU_INCLUDE_DIR);
  cxx_ = env_or("ZYX_EMU_CXX", "c++");
  cxxflags_ = env_or("ZYX_EMU_CXXFLAGS", "-O2 -std=c++20 -fPIC -shared");
  header_hash_ = hash_headers(include_dir_);
}

std::shared_ptr<KernelObject> KernelBuilder::get(const KernelDesc& kernel, const std::vector<uint32_t>& compile_args,
                                                 const std::vector<std::pair<std::string, uint32_t>>& named_args,
                                                 const ProgramDesc& program) {
  Hasher h;
  h.add(header_hash_);
  h.add(cxx_);
  h.add(cxxflags_);
  h.add(board_.arch);
  h.add_u64(board_.dram_banks);
  h.add_u64(board_.dram_alignment);
  h.add_u64(board_.rows), h.add_u64(board_.cols), h.add_u64(board_.l1_alignment);
  h.add_u64(static_cast<uint64_t>(kernel.processor));
  h.add_u64(kernel.noc);
  h.add(kernel.source);
  h.add_u64(kernel.defines.size());
  for (auto& [k, v] : kernel.defines) h.add(k), h.add(v);
  h.add_u64(compile_args.size());
  for (auto v : compile_args) h.add_u64(v);
  h.add_u64(named_args.size());
  for (auto& [k, v] : named_args) h.add(k), h.add_u64(v);
  h.add_u64(kernel.compute.fp32_dest_acc), h.add_u64(kernel.compute.math_approx_mode);
  h.add_u64(static_cast<uint64_t>(kernel.compute.math_fidelity));
  h.add_u64(program.include_files.size());
  for (auto& f : program.include_files) h.add(f.path), h.add(f.source);
  std::string key = h.hex();

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
  if (access(path.c_str(), R_OK) == 0)
    disk_hits_++;
  else
    path = build(key, kernel, compile_args, named_args, program);

  auto obj = std::make_shared<KernelObject>();
  obj->path = path;
  obj->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!obj->handle) throw Error("compile_error", std::string("cannot load kernel object: ") + dlerror());
  auto abi = reinterpret_cast<int (*)()>(dlsym(obj->handle, "zyx_emu_kernel_abi"));
  auto bind = reinterpret_cast<void (*)(const zyx_emu_api*)>(dlsym(obj->handle, "zyx_emu_kernel_bind"));
  obj->run = reinterpret_cast<void (*)()>(dlsym(obj->handle, "zyx_emu_kernel_run"));
  if (!abi || !bind || !obj->run || abi() != ZYX_EMU_ABI_VERSION)
    throw Error("compile_error", "kernel object " + path + " does not speak emulator ABI " +
                                     std::to_string(ZYX_EMU_ABI_VERSION));
  bind(kernel_api());
  std::lock_guard<std::mutex> lock(mu_);
  loaded_[key] = obj;
  return obj;
}

std::string KernelBuilder::build(const std::string& key, const KernelDesc& kernel,
                                 const std::vector<uint32_t>& compile_args,
                                 const std::vector<std::pair<std::string, uint32_t>>& /*named_args*/,
                                 const ProgramDesc& program) {
  std::error_code ec;
  fs::create_directories(cache_dir_, ec);
  if (ec) throw Error("compile_error", "cannot create the kernel cache " + cache_dir_ + ": " + ec.message());
  std::ostringstream tag;
  tag << cache_dir_ << "/.tmp-" << key << "-" << getpid() << "-" << std::this_thread::get_id();
  std::string src_path = tag.str() + ".cpp", tmp_so = tag.str() + ".so", inc_dir = tag.str() + ".inc";
  bool is_compute = kernel.processor == Processor::Compute;
  const char* pname = processor_name(kernel.processor);
  // The program's include files, in a private directory on the include path.
  bool has_includes = !program.include_files.empty();
  if (has_includes) {
    if (mkdir(inc_dir.c_str(), 0700) != 0)
      throw Error("compile_error", "cannot create " + inc_dir + ": " + std::strerror(errno));
    try {
      write_include_files(inc_dir, program);
    } catch (...) {
      fs::remove_all(inc_dir, ec);
      throw;
    }
  }
  {
    std::ofstream out(src_path, std::ios::binary);
    // The program's name stays out of the source: it is free text (a newline
    // or trailing backslash would change the code) and not part of the key.
    out << "// Generated by zyx-tt's emulator: " << pname << " kernel\n";
    out << "#define ZYX_EMU_SECTION_" << (is_compute ? "COMPUTE" : "DATAFLOW") << " 1\n";
    out << "#define ZYX_EMU_SECTION_KIND " << static_cast<int>(kernel.processor) << "\n";
    out << "#define ZYX_EMU_NUM_COMPILE_ARGS " << compile_args.size() << "\n";
    out << "#define ZYX_EMU_COMPILE_ARGS ";
    for (auto v : compile_args) out << v << "u, ";
    out << "0u\n";
    out << "#define ZYX_EMU_FP32_DEST_ACC " << (kernel.compute.fp32_dest_acc ? 1 : 0) << "\n";
    out << "#define ZYX_EMU_MATH_APPROX " << (kernel.compute.math_approx_mode ? 1 : 0) << "\n";
    out << "#define ZYX_EMU_NUM_DRAM_BANKS " << board_.dram_banks << "\n";
    out << "#include \"zyx_emu/kernel_prelude.h\"\n";
    out << "#line 1 \"" << pname << ".cpp\"\n";
    out << kernel.source << "\n";
    out << "#line 1 \"zyx_emu_entry\"\n";
    bool old_style = is_compute && std::regex_search(kernel.source, old_style_main());
    out << "extern \"C\" __attribute__((visibility(\"default\"))) void zyx_emu_kernel_run() { "
        << (old_style ? "::NAMESPACE::MAIN;" : "kernel_main();") << " }\n";
    if (!out) throw Error("compile_error", "cannot write " + src_path);
  }
  std::ostringstream cmd;
  cmd << cxx_ << " " << cxxflags_ << " -I" << shell_quote(include_dir_);
  cmd << (board_.arch == "blackhole" ? " -DARCH_BLACKHOLE" : " -DARCH_WORMHOLE");
  cmd << " -DNUM_DRAM_BANKS=" << board_.dram_banks << " -DZYX_EMU_DRAM_ALIGNMENT=" << board_.dram_alignment;
  cmd << " -DNUM_L1_BANKS=" << board_.rows * board_.cols << " -DZYX_EMU_L1_ALIGNMENT=" << board_.l1_alignment
      << " -DZYX_EMU_GRID_ROWS=" << board_.rows << " -DZYX_EMU_GRID_COLS=" << board_.cols;
  if (has_includes) cmd << " -I" << shell_quote(inc_dir);
  if (is_compute) cmd << " -DCOMPILE_FOR_TRISC=1";
  for (auto& [k, v] : kernel.defines) cmd << " " << shell_quote("-D" + k + "=" + v);
  cmd << " -o " << shell_quote(tmp_so) << " " << shell_quote(src_path);
  int status = 0;
  std::string diag = run_command(cmd.str(), &status);
  compiles_++;
  fs::remove(src_path, ec);
  if (has_includes) fs::remove_all(inc_dir, ec);
  if (status != 0) {
    fs::remove(tmp_so, ec);
    // Report paths as the kernel author knows them.
    std::string where = src_path;
    for (size_t p; (p = diag.find(where)) != std::string::npos;) diag.replace(p, where.size(), "kernel");
    if (has_includes)
      for (size_t p; (p = diag.find(inc_dir + "/")) != std::string::npos;) diag.replace(p, inc_dir.size() + 1, "");
    throw Error("compile_error", "kernel " + kernel.name + " (" + pname + ") of " + program.name +
                                     " did not build:\n" + diag);
  }
  std::string final_path = cache_dir_ + "/" + key + ".so";
  if (std::rename(tmp_so.c_str(), final_path.c_str()) != 0) {
    fs::remove(tmp_so, ec);
    throw Error("compile_error", "cannot move the kernel object into " + final_path);
  }
  return final_path;
}

}  // namespace zyx::emu
