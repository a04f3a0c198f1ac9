// Runs the Tenstorrent variants of the example bundles (examples/<name>/
// manifest.json + tt.json + tt/*.cpp) on the emulator and checks every output
// against a float64 reference with per-format tolerances. The bundle files
// are read as they are committed, so these tests cover what `zyx-tt run`
// feeds the emulator.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <map>
#include <random>

#include "harness.hpp"

#ifndef ZYX_EMU_EXAMPLES_DIR
#define ZYX_EMU_EXAMPLES_DIR "examples"
#endif

using namespace zyx;
using namespace zyx_test;
using json = nlohmann::json;

namespace {

struct Bundle {
  std::string dir;
  json manifest, tt;
  GroupProgram prog;
  std::vector<uint32_t> grid;
};

uint32_t param_index(const json& manifest, const json& ref) {
  const auto& params = manifest["params"];
  if (ref.is_number()) return ref.get<uint32_t>();
  for (size_t i = 0; i < params.size(); i++)
    if (params[i]["name"] == ref) return static_cast<uint32_t>(i);
  throw Failure("no param named " + ref.dump());
}

std::vector<Arg> layout(const json& manifest, const json& section, const char* key) {
  std::vector<Arg> out;
  if (!section.contains(key)) return out;
  for (const auto& e : section[key]) {
    uint32_t param = e.contains("param") ? param_index(manifest, e["param"]) : 0, value = 0;
    if (e.contains("value")) {
      if (!e["value"].is_number()) throw Failure("tt.json const values must be numbers for this test");
      value = e["value"].get<uint32_t>();
    }
    out.push_back(L(e["kind"].get<std::string>(), param, value));
  }
  return out;
}

Section section(const Bundle& b, const char* name) {
  const json& s = b.tt[name];
  Section out;
  out.source = bundle_source(b.dir, s["source"].get<std::string>());
  if (s.contains("defines"))
    for (auto& [k, v] : s["defines"].items()) out.defines[k] = v.get<std::string>();
  out.compile_args = layout(b.manifest, s, "compile_args");
  out.runtime_args = layout(b.manifest, s, "runtime_args");
  out.common_args = layout(b.manifest, s, "common_args");
  return out;
}

Bundle load(const std::string& name) {
  Bundle b;
  b.dir = std::string(ZYX_EMU_EXAMPLES_DIR) + "/" + name;
  b.manifest = json::parse(read_text(b.dir + "/manifest.json"));
  b.tt = json::parse(read_text(b.dir + "/tt.json"));
  b.prog.name = b.manifest["name"];
  for (const auto& p : b.manifest["params"]) b.prog.params.push_back(P(p["name"], p["kind"], p["dtype"]));
  b.prog.reader = section(b, "reader");
  b.prog.compute = section(b, "compute");
  b.prog.writer = section(b, "writer");
  // A kernel from the library brings the library's headers, as in the loader.
  for (const char* name : {"reader", "compute", "writer"})
    if (b.tt[name]["source"].get<std::string>().rfind("zyx:", 0) == 0) b.prog.include_files = library_includes();
  for (const auto& c : b.tt["cbs"]) b.prog.cbs.push_back(CB(c["index"], c["format"], c["page_bytes"], c["pages"]));
  if (b.tt.contains("compute_config")) {
    const auto& cc = b.tt["compute_config"];
    b.prog.math_fidelity = cc.value("math_fidelity", "HiFi4");
    b.prog.fp32_dest_acc = cc.value("fp32_dest_acc", false);
    b.prog.math_approx_mode = cc.value("math_approx_mode", false);
  }
  for (const auto& g : b.tt["grid"]) b.grid.push_back(g.get<uint32_t>());
  return b;
}

// Host data of one param as float64, with its element bytes for upload.
struct HostBuf {
  std::string dtype;
  std::vector<double> values;
  std::vector<uint8_t> bytes;
};

HostBuf make_input(const std::string& dtype, size_t count, double lo, double hi, uint32_t seed) {
  HostBuf h;
  h.dtype = dtype;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (size_t i = 0; i < count; i++) {
    double v = dist(rng);
    if (dtype == "f32") {
      float f = static_cast<float>(v);
      h.values.push_back(f);
      const uint8_t* p = reinterpret_cast<const uint8_t*>(&f);
      h.bytes.insert(h.bytes.end(), p, p + 4);
    } else if (dtype == "bf16") {
      uint16_t b = to_bf16(static_cast<float>(v));
      h.values.push_back(from_bf16(b));
      h.bytes.push_back(static_cast<uint8_t>(b));
      h.bytes.push_back(static_cast<uint8_t>(b >> 8));
    } else {
      throw Failure("unsupported dtype " + dtype);
    }
  }
  return h;
}

std::vector<double> as_doubles(const std::string& dtype, const std::vector<uint8_t>& bytes) {
  std::vector<double> out;
  if (dtype == "f32") {
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      float f;
      std::memcpy(&f, &bytes[i], 4);
      out.push_back(f);
    }
  } else {
    for (size_t i = 0; i + 2 <= bytes.size(); i += 2) out.push_back(from_bf16(uint16_t(bytes[i] | bytes[i + 1] << 8)));
  }
  return out;
}

size_t dtype_bytes(const std::string& d) { return d == "f32" ? 4 : 2; }

// Runs a bundle with the given var values and page size; returns the outputs.
void run_bundle(DeviceLayer& layer, const std::string& name, std::map<std::string, uint32_t> vars,
                uint64_t page_size, std::vector<uint32_t> grid = {}) {
  Bundle b = load(name);
  if (grid.empty()) grid = b.grid;
  for (const auto& v : b.manifest["vars"])
    if (!vars.count(v["name"])) vars[v["name"]] = v["default"].get<uint32_t>();
  auto extent = [&](const json& shape) {
    size_t n = 1;
    for (const auto& s : shape) n *= s.is_number() ? s.get<size_t>() : vars.at(s.get<std::string>());
    return n;
  };
  const json& ref = b.manifest["reference"];
  std::vector<RunArg> args;
  std::map<std::string, HostBuf> host;
  std::map<std::string, uint64_t> ids;
  uint32_t seed = 1;
  for (const auto& p : b.manifest["params"]) {
    std::string pname = p["name"], kind = p["kind"];
    if (kind == "variable") {
      args.push_back(Val(vars.at(pname)));
      continue;
    }
    std::string dtype = p["dtype"];
    size_t count = extent(p["shape"]);
    double lo = -1, hi = 1;
    if (b.manifest.contains("inputs") && b.manifest["inputs"].contains(pname)) {
      std::string spec = b.manifest["inputs"][pname];
      if (spec.rfind("random:", 0) == 0) {
        auto c = spec.find(':', 7);
        lo = std::stod(spec.substr(7, c - 7));
        hi = std::stod(spec.substr(c + 1));
      }
    }
    HostBuf h = kind == "global" ? make_input(dtype, count, lo, hi, seed++) : make_input(dtype, count, 0, 0, 0);
    if (kind != "global") {
      // Outputs start as a recognisable pattern so an unwritten element shows.
      std::fill(h.bytes.begin(), h.bytes.end(), 0x7f);
    }
    uint64_t id = layer.alloc(h.bytes.size(), dram_spec(page_size), nullptr);
    layer.write(id, 0, h.bytes.data(), h.bytes.size());
    ids[pname] = id;
    host[pname] = std::move(h);
    args.push_back(Buf(id));
  }
  uint64_t prog = layer.compile(one_group_program(b.prog, grid[0], grid[1]));
  layer.run(prog, args, false);
  layer.release(prog);

  std::string out = ref["out"];
  std::string op = ref["op"];
  const HostBuf& ob = host[out];
  std::vector<uint8_t> bytes(ob.bytes.size());
  layer.read(ids[out], 0, bytes.data(), bytes.size());
  std::vector<double> got = as_doubles(ob.dtype, bytes), want(got.size());
  const auto& a = host[ref["args"][0].get<std::string>()].values;
  if (op == "identity") {
    // Exact, byte for byte, as docs/programs.md defines the reference.
    const HostBuf& ib = host[ref["args"][0].get<std::string>()];
    if (bytes != ib.bytes)
      throw Failure(name + ": identity reference: the output differs from " + ref["args"][0].get<std::string>() +
                    " (page size " + std::to_string(page_size) + ")");
    for (auto& [n, id] : ids) layer.free(id);
    return;
  }
  if (op == "add") {
    const auto& y = host[ref["args"][1].get<std::string>()].values;
    for (size_t i = 0; i < want.size(); i++) want[i] = a[i] + y[i];
  } else if (op == "unary:exp") {
    for (size_t i = 0; i < want.size(); i++) want[i] = std::exp(a[i]);
  } else if (op == "unary:abs") {
    for (size_t i = 0; i < want.size(); i++) want[i] = std::fabs(a[i]);
  } else if (op == "matmul") {
    const auto& bm = host[ref["args"][1].get<std::string>()].values;
    uint32_t m = vars.at("m"), n = vars.at("n"), k = vars.at("k");
    for (uint32_t i = 0; i < m; i++)
      for (uint32_t j = 0; j < n; j++) {
        double s = 0;
        for (uint32_t l = 0; l < k; l++) s += a[i * k + l] * bm[l * n + j];
        want[i * n + j] = s;
      }
  } else {
    throw Failure("reference op " + op + " not handled by the test");
  }
  // Tolerances of docs/programs.md (f32 1e-5, bf16 1e-2/2e-2; matmul f32
  // scaled by sqrt(k)), or the reference's own.
  double atol = ob.dtype == "f32" ? 1e-5 : 1e-2, rtol = ob.dtype == "f32" ? 1e-5 : 2e-2;
  if (op == "matmul" && ob.dtype == "f32") {
    double s = std::sqrt(static_cast<double>(vars.at("k")));
    atol *= s, rtol *= s;
  }
  if (ref.contains("atol")) atol = ref["atol"];
  if (ref.contains("rtol")) rtol = ref["rtol"];
  check_close(got, want, atol, rtol,
              name + " (page size " + std::to_string(page_size) + ", grid " + std::to_string(grid[0]) + "x" +
                  std::to_string(grid[1]) + ")");
  for (auto& [n, id] : ids) layer.free(id);
}

}  // namespace

static void test_examples(const std::string& cache) {
  auto layer = make_emu_layer("n150", 0, cache);
  // Page sizes: a whole tile, the protocol default, and an odd size that
  // makes the kernels split reads and writes at page boundaries.
  for (uint64_t page : {4096u, 2048u, 1000u}) {
    // Pieces of 1000-byte pages land in L1 at offsets that break the NOC's
    // alignment rule (a card would shift them): the watcher's NOC check is
    // off for that size.
    if (page == 1000) setenv("ZYX_EMU_WATCHER", "no-noc", 1);
    run_bundle(*layer, "loopback", {{"n", 100000}}, page);
    run_bundle(*layer, "vadd", {{"n", 100000}}, page);
    run_bundle(*layer, "add_bf16", {{"n", 100000}}, page);
    run_bundle(*layer, "unary", {{"n", 50000}}, page);
    unsetenv("ZYX_EMU_WATCHER");
  }
  run_bundle(*layer, "vadd", {{"n", 1 << 20}}, 4096);
  run_bundle(*layer, "add_bf16", {{"n", 1 << 20}}, 2048);
  run_bundle(*layer, "matmul", {{"m", 128}, {"n", 96}, {"k", 160}}, 2048);
  setenv("ZYX_EMU_WATCHER", "no-noc", 1);
  run_bundle(*layer, "matmul", {{"m", 64}, {"n", 64}, {"k", 64}}, 1000, {1, 1});
  unsetenv("ZYX_EMU_WATCHER");
  run_bundle(*layer, "matmul_single", {}, 2048);
  run_bundle(*layer, "matmul_single", {{"m", 64}, {"n", 32}, {"k", 256}}, 2048, {2, 3});
  // Blackhole: 8 banks, 64-byte alignment, a 10x13 grid.
  auto bh = make_emu_layer("p150a", 0, cache);
  setenv("ZYX_EMU_WATCHER", "no-noc", 1);
  run_bundle(*bh, "vadd", {{"n", 300000}}, 1000, {10, 13});
  unsetenv("ZYX_EMU_WATCHER");
  run_bundle(*bh, "matmul", {{"m", 96}, {"n", 64}, {"k", 64}}, 2048);
}
ZYX_TEST(examples, test_examples);
