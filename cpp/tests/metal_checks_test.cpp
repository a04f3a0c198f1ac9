// The metal layer's refusals (cpp/src/metal_checks.hpp), tested without a
// card: each compile request of the table is parsed and checked by the
// server as a real one is (so the refusal is the layer's, not the
// server's), then handed to the checks metal_layer.cpp's compile runs.
// docs/runtime.md, "The two layers", lists these refusals.
#include <functional>
#include <string>
#include <vector>

#include "fake_layer.hpp"
#include "metal_checks.hpp"
#include "request.hpp"
#include "test_util.hpp"
#include "validate.hpp"

using zyx::test::failures;
using json = nlohmann::json;

namespace {

// A one-kernel compile request on core [0, 0] with params (a: global,
// n: variable), param 0 declared interleaved DRAM, one semaphore (id 0)
// and one CB; `edit` changes it.
json compile_request(const std::function<void(json&)>& edit) {
  json k = {{"name", "reader"},
            {"processor", "riscv_0"},
            {"cores", {{0, 0, 0, 0}}},
            {"source", "void kernel_main() {}"}};
  json r = {{"id", 1},
            {"cmd", "compile"},
            {"name", "p"},
            {"params", {{{"name", "a"}, {"kind", "global"}, {"dtype", "bf16"}},
                        {{"name", "n"}, {"kind", "variable"}, {"dtype", "u32"}}}},
            {"buffers", {{{"param", 0}}}},
            {"kernels", {k}},
            {"cbs", {{{"cores", {{0, 0, 0, 0}}},
                      {"total_bytes", 4096},
                      {"indices", {{{"index", 0}, {"format", "Float16_b"}, {"page_bytes", 2048}}}}}}},
            {"semaphores", {{{"cores", {{0, 0, 0, 0}}}, {"id", 0}}}}};
  edit(r);
  return r;
}

const json kSemAddr = {{"kind", "semaphore_addr"}, {"semaphore", 0}};
const json kAccessor = {{"kind", "accessor"}, {"param", 0}};

struct Row {
  std::string name;
  std::function<void(json&)> edit;
  std::string code;  // "" when the metal layer takes the program
  std::string path;  // the start of the message
};

std::vector<Row> rows() {
  auto kernel = [](json& r) -> json& { return r["kernels"][0]; };
  return {
      {"plain program", [](json&) {}, "", ""},
      {"semaphore id as a const", [&](json& r) { kernel(r)["runtime_args"] = {{{"cores", {{0, 0, 0, 0}}}, {"args", {{{"kind", "const"}, {"value", 0}}}}}}; }, "", ""},
      {"accessor in compile_args", [&](json& r) { kernel(r)["compile_args"] = {kAccessor}; }, "", ""},
      {"one-word named compile arg", [&](json& r) { kernel(r)["named_compile_args"] = {{"pages", {{"kind", "buffer_pages"}, {"param", 0}}}}; }, "", ""},
      {"semaphore_addr in compile_args",
       [&](json& r) { kernel(r)["compile_args"] = {{{"kind", "const"}, {"value", 1}}, kSemAddr}; }, "unsupported",
       "compile.kernels[0].compile_args[1]: kernel reader: semaphore_addr"},
      {"semaphore_addr in named_compile_args", [&](json& r) { kernel(r)["named_compile_args"] = {{"sem", kSemAddr}}; },
       "unsupported", "compile.kernels[0].named_compile_args.sem: kernel reader: semaphore_addr"},
      {"semaphore_addr in common_args", [&](json& r) { kernel(r)["common_args"] = {kSemAddr}; }, "unsupported",
       "compile.kernels[0].common_args[0]: kernel reader: semaphore_addr"},
      {"semaphore_addr in runtime_args",
       [&](json& r) { kernel(r)["runtime_args"] = {{{"cores", {{0, 0, 0, 0}}}, {"args", {{{"kind", "const"}, {"value", 7}}, kSemAddr}}}}; },
       "unsupported", "compile.kernels[0].runtime_args[0].args[1]: kernel reader: semaphore_addr"},
      {"Metal 2.0 named runtime args", [&](json& r) { kernel(r)["named_runtime_args"] = {"n"}; kernel(r)["runtime_args"] = {{{"cores", {{0, 0, 0, 0}}}, {"args", {{{"kind", "const"}, {"value", 7}}}}}}; },
       "unsupported", "compile.kernels[0]: kernel reader: Metal 2.0 bindings"},
      {"semaphore_addr in the second kernel",
       [&](json& r) {
         json k2 = {{"name", "writer"}, {"processor", "riscv_1"}, {"cores", {{0, 0, 0, 0}}}, {"source", "x"}, {"common_args", {kSemAddr}}};
         r["kernels"].push_back(k2);
       },
       "unsupported", "compile.kernels[1].common_args[0]: kernel writer: semaphore_addr"},
  };
}

void test_table() {
  zyx::test::FakeState st;
  for (const Row& row : rows()) {
    std::string line = compile_request(row.edit).dump();
    uint64_t id = 0;
    zyx::Request req;
    try {
      req = zyx::parse_request(line, &id);
      zyx::check_program(std::get<zyx::ProgramDesc>(req.body), st.desc);
    } catch (const zyx::Error& e) {
      CHECK(false, row.name + ": the server refused the request (" + e.code + ": " + e.what() + ")");
      continue;
    }
    std::string code = "", msg;
    try {
      zyx::metal::check_program(std::get<zyx::ProgramDesc>(req.body));
    } catch (const zyx::Error& e) {
      code = e.code;
      msg = e.what();
    }
    CHECK(code == row.code, row.name + ": code \"" + code + "\", want \"" + row.code + "\" (" + msg + ")");
    CHECK(msg.rfind(row.path, 0) == 0, row.name + ": message \"" + msg + "\" does not start with \"" + row.path + "\"");
  }
}

// A format the protocol cannot name (the parser knows only tt-metal's) is
// refused all the same, naming the index.
void test_format_without_tt_metal_equivalent() {
  zyx::ProgramDesc p;
  p.cbs.resize(2);
  p.cbs[1].indices.resize(2);
  p.cbs[1].indices[1].format = zyx::DataFormat::Invalid;
  std::string code, msg;
  try {
    zyx::metal::check_program(p);
  } catch (const zyx::Error& e) {
    code = e.code;
    msg = e.what();
  }
  CHECK(code == "invalid_argument", "code \"" + code + "\" (" + msg + ")");
  CHECK(msg.rfind("compile.cbs[1].indices[1].format: ", 0) == 0, msg);
  for (const char* name : {"Float32", "Float16_b", "Float16", "Bfp8_b", "Bfp4_b", "Int32", "UInt32", "UInt16", "UInt8", "Int8"}) {
    auto f = zyx::parse_data_format(name);
    CHECK(f && zyx::metal::has_tt_metal_format(*f), std::string("protocol format ") + name + " has no tt-metal equivalent");
  }
  CHECK(!zyx::metal::has_tt_metal_format(zyx::DataFormat::Invalid), "Invalid maps to a tt-metal format");
}

}  // namespace

int main() {
  test_table();
  test_format_without_tt_metal_equivalent();
  if (failures) {
    std::cerr << failures << " failure(s)\n";
    return 1;
  }
  std::cout << "metal checks: ok\n";
  return 0;
}
