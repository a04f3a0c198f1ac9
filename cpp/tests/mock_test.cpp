// Mock mode (src/mock.hpp) against FakeLayer: SPEC parsing and its errors,
// the device reshaping and its limits, the DRAM budget, a metal init served
// by the wrapped layer, the DPRINT lines, and the faults of the request and
// output paths that need no process of their own (error replies, a wrong id,
// garbage, an oversized line, noise, a version mismatch). The faults that
// end or stop the process (crash, hang, hold, orphan, closed stdout, flood,
// ignore-term) are checked against the binary by the Go tests
// (ttruntime/client_test.go, TestFaults and others).
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "fake_layer.hpp"
#include "line_reader.hpp"
#include "mock.hpp"
#include "server.hpp"
#include "test_util.hpp"

using namespace zyx;
using zyx::test::code_of;
using zyx::test::failures;
using zyx::test::message_of;
using json = nlohmann::json;

namespace {

// parse_error is the message parse_into throws for spec ("" when it
// accepts it).
std::string parse_error(const std::string& spec) {
  mock::Spec s;
  try {
    mock::parse_into(spec, &s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

void test_parse() {
  mock::Spec s;
  mock::parse_into("crash-at=3,hold-at=2,hold-at=5,noise,slow=30ms,error-code=run_error,stderr=a b", &s);
  mock::parse_into("on,harvest-rows=2/4,banks=2,bank-size=65536,layer=init,board=n300,ignore-term,protocol=3", &s);
  CHECK(s.crash_at == 3, s.crash_at);
  CHECK((s.hold_at == std::set<uint64_t>{2, 5}), "hold-at is given twice");
  CHECK(s.noise && s.ignore_term, "the switches");
  CHECK(s.slow == std::chrono::milliseconds(30), s.slow.count());
  CHECK(s.error_code == "run_error" && s.stderr_line == "a b", s.error_code << " " << s.stderr_line);
  CHECK((s.harvest_rows == std::vector<uint32_t>{2, 4}), "harvest rows");
  CHECK(s.banks == 2u && s.bank_size == uint64_t{65536}, "banks");
  CHECK(s.layer == "init" && s.board == "n300" && s.protocol == 3, s.layer << " " << s.board << " " << s.protocol);
  CHECK(parse_error("") == "", "an empty spec is no fault");

  struct Bad {
    std::string spec, says;
  } bad[] = {
      {"crsh-at=2", "mock item \"crsh-at=2\": unknown key \"crsh-at\"; did you mean \"crash-at\"?"},
      {"frobnicate=1", "unknown key \"frobnicate\" (zyx-tt-runtime --help"},
      {"crash-at=0", "request numbers start at 1"},
      {"crash-at=x", "wants a non-negative integer"},
      {"crash-at=", "wants a non-negative integer"},
      {"crash-at", "wants a value (crash-at=…)"},
      {"noise=1", "takes no value"},
      {"slow=30", "wants a duration such as 30ms"},
      {"slow=ms", "wants a duration"},
      {"layer=metal", "is emu (the emulator serves every init) or init"},
      {"rows=4294967296", "is past 32 bits"},
      {"harvest-rows=2/", "wants a non-negative integer"},
      {"dprint=", "wants the text to print"},
      {"noise,hang-at=2,,banks=two", "mock item \"banks=two\""},
  };
  for (const auto& b : bad) {
    std::string got = parse_error(b.spec);
    CHECK(got.find(b.says) != std::string::npos, b.spec << ": " << got);
  }
}

void test_reshape() {
  test::FakeState st;
  DeviceDesc d = st.desc;
  mock::Spec s;
  mock::parse_into("rows=6,cols=5,harvest-rows=3,banks=2,bank-size=65536,l1=1048576,l1-base=204800,semaphores=8", &s);
  mock::reshape(s, &d);
  CHECK(d.grid.rows == 5 && d.grid.cols == 5, d.grid.rows << "x" << d.grid.cols);
  CHECK(d.noc.worker_y.size() == 5 && d.noc.worker_x.size() == 5, "the NOC tables follow the grid");
  CHECK(d.noc.worker_y == std::vector<uint32_t>(st.desc.noc.worker_y.begin(), st.desc.noc.worker_y.begin() + 5),
        "the rows kept are the wrapped device's first rows");
  CHECK((d.grid.harvested_rows == std::vector<uint32_t>{3, 9}), "harvested rows");
  CHECK(d.grid.harvest_mask == ((1u << 9) | (1u << 3)), d.grid.harvest_mask);
  CHECK(d.dram_banks == 2 && d.noc.dram_banks.size() == 2 && d.dram_bank_size == 65536, "DRAM");
  CHECK(d.l1_bank_cores.size() == 25, d.l1_bank_cores.size());
  CHECK(d.l1_size == 1048576 && d.l1_unreserved_base == 204800 && d.semaphores == 8,
        d.l1_size << " " << d.l1_unreserved_base << " " << d.semaphores);

  struct Bad {
    std::string spec, says;
  } bad[] = {
      {"rows=9", "rows=9: the emu fake has 8 rows"},
      {"rows=0", "rows=0"},
      {"cols=9", "cols=9: the emu fake has 8 columns"},
      {"banks=13", "banks=13: the emu fake has 12 DRAM banks"},
      {"bank-size=2147483648", "has banks of 1073741824 bytes"},
      {"harvest-rows=9", "harvest-rows 9: already harvested"},
      {"harvest-rows=64", "physical rows are below 64"},
      {"rows=1,harvest-rows=2", "no row would be left"},
      {"l1=2000000", "l1=2000000: the emu fake has 1499136 bytes of L1 per core, reserved below 102400"},
      {"l1=102400", "l1=102400"},
      {"l1-base=4096", "l1-base=4096: the emu fake's L1 is free from 102400 to 1499136"},
      {"semaphores=17", "semaphores=17: the emu fake has 16 per core"},
      {"semaphores=0", "semaphores=0"},
  };
  for (const auto& b : bad) {
    mock::Spec sb;
    mock::parse_into(b.spec, &sb);
    DeviceDesc db = st.desc;
    std::string got;
    try {
      mock::reshape(sb, &db);
    } catch (const Error& e) {
      CHECK(e.code == "invalid_argument", e.code);
      got = e.what();
    }
    CHECK(got.find(b.says) != std::string::npos, b.spec << ": " << got);
  }
}

// MockHarness is a server in mock mode over a FakeLayer; replies and the
// lines the faults write are captured in order.
struct MockHarness {
  std::shared_ptr<test::FakeState> state = std::make_shared<test::FakeState>();
  std::vector<std::string> out;
  std::vector<LayerRequest> opened;
  std::unique_ptr<mock::Faults> faults;
  std::unique_ptr<Server> server;

  explicit MockHarness(const std::string& spec) {
    mock::Spec s;
    mock::parse_into(spec, &s);
    Server::Sink sink = [this](std::string_view l) { out.emplace_back(l); };
    faults = std::make_unique<mock::Faults>(s, -1, sink);
    LayerFactory fake = [this](const LayerRequest& r) -> std::unique_ptr<DeviceLayer> {
      opened.push_back(r);
      if (r.layer == "metal") throw Error("unsupported", "built without tt-metal");
      return std::make_unique<test::FakeLayer>(state);
    };
    server = std::make_unique<Server>(sink, mock::layer_factory(s, fake), "/tmp");
    server->set_mock(faults.get());
  }

  // send answers one line; returns what was written for it.
  std::vector<std::string> send(const json& req) {
    size_t before = out.size();
    server->handle(req.dump());
    return std::vector<std::string>(out.begin() + before, out.end());
  }
  json reply(const json& req) {
    auto lines = send(req);
    CHECK(lines.size() == 1, "one line for " << req.dump() << ", got " << lines.size());
    return lines.empty() ? json::object() : json::parse(lines.back(), nullptr, false);
  }
  json init(const std::string& layer = "emu") {
    return reply({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", layer}, {"board", "n150"}, {"cache_dir", "/tmp/x"}});
  }
};

void test_request_faults() {
  MockHarness h("error-at=2,error-code=out_of_memory,wrong-id-at=3,garbage-at=4");
  CHECK(h.init().value("ok", false), "init");
  json r = h.reply({{"id", 2}, {"cmd", "ping"}});
  CHECK(code_of(r) == "out_of_memory" && r.value("id", 0) == 2, r.dump());
  CHECK(message_of(r) == "injected error on request 2", message_of(r));
  r = h.reply({{"id", 3}, {"cmd", "ping"}});
  CHECK(r.value("id", 0) == 1003 && r.value("ok", false), "a wrong id: " << r.dump());
  auto lines = h.send({{"id", 4}, {"cmd", "ping"}});
  CHECK(lines.size() == 1 && lines[0] == "{\"id\": 4, \"ok\": tru", "garbage: " << (lines.empty() ? "" : lines[0]));
  r = h.reply({{"id", 5}, {"cmd", "ping"}});
  CHECK(r.value("id", 0) == 5 && r.value("ok", false), "request 5 is answered as always: " << r.dump());
  // A bad line is a request too: it counts, and its reply takes the faults.
  MockHarness bad("wrong-id-at=2");
  bad.init();
  bad.server->handle("not json");
  CHECK(bad.out.size() == 2 && bad.out[1].find("\"id\":1000") != std::string::npos, bad.out.back());
}

void test_stream_faults() {
  MockHarness h("noise,oversize-at=2");
  auto lines = h.send({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "emu"}, {"cache_dir", "/tmp/x"}});
  CHECK(lines.size() == 2 && lines[0] == "UMD | info | noise before the reply to request 1", lines.size());
  lines = h.send({{"id", 2}, {"cmd", "ping"}});
  CHECK(lines.size() == 2 && lines[1].size() > kMaxLineBytes && lines[1].rfind("{\"id\":2,\"ok\":true,\"pad\":\"xxx", 0) == 0,
        "an oversized line: " << (lines.size() == 2 ? lines[1].size() : 0) << " bytes");

  MockHarness v("protocol=3");
  json r = v.init();
  CHECK(code_of(r) == "version_mismatch", r.dump());
  CHECK(message_of(r) ==
            "this runtime speaks protocol 3; the driver asked for protocol 2: zyx-tt (the Go driver) is older than this "
            "runtime; rebuild zyx-tt from the same tree as the runtime (make build)",
        message_of(r));
  CHECK(v.opened.empty(), "no layer was opened");
  MockHarness old("protocol=1");
  CHECK(message_of(old.init()).find("the runtime is older than zyx-tt; rebuild the runtime (make runtime)") != std::string::npos,
        "a runtime of protocol 1");
}

// A run answered after the runs before it carries its own request's
// faults.
void test_fault_of_a_run_in_flight() {
  MockHarness h("wrong-id-at=5");
  h.state->async_runs = true;
  h.state->on_finish = [](uint64_t) {};
  h.init();
  json prog = {{"id", 2},
               {"cmd", "compile"},
               {"name", "p"},
               {"params", json::array()},
               {"kernels", {{{"processor", "riscv_0"}, {"cores", {{0, 0, 0, 0}}}, {"source", "void kernel_main() {}"}}}}};
  CHECK(h.reply(prog).value("ok", false), "compile");
  CHECK(h.send({{"id", 3}, {"cmd", "run"}, {"program", 1}, {"args", json::array()}}).empty(), "the run is in flight");
  CHECK(h.send({{"id", 4}, {"cmd", "run"}, {"program", 1}, {"args", json::array()}}).empty(), "and the next");
  // Request 5 (a ping) answers the runs first, then itself with a wrong id.
  auto lines = h.send({{"id", 5}, {"cmd", "ping"}});
  CHECK(lines.size() == 3, lines.size());
  if (lines.size() == 3) {
    CHECK(json::parse(lines[0]).value("id", 0) == 3 && json::parse(lines[1]).value("id", 0) == 4, lines[0] << lines[1]);
    CHECK(json::parse(lines[2]).value("id", 0) == 1005, lines[2]);
  }
}

// capture_stderr runs fn with fd 2 going to a pipe and returns what fn
// wrote there (at most 64 KiB).
std::string capture_stderr(const std::function<void()>& fn) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return "";
  int saved = ::dup(STDERR_FILENO);
  ::dup2(p[1], STDERR_FILENO);
  ::close(p[1]);
  fn();
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::string out(65536, '\0');
  ssize_t n = ::read(p[0], out.data(), out.size());
  ::close(p[0]);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

void test_mock_layer() {
  // A metal init is served by the wrapped emu layer and says metal.
  MockHarness h("banks=2,bank-size=65536,dprint=hi there");
  json r = h.reply({{"id", 1}, {"cmd", "init"}, {"protocol", 2}, {"layer", "metal"}, {"board", "n300"}, {"chip", 1},
                    {"cache_dir", "/tmp/x"}, {"dprint", true}});
  CHECK(r.value("ok", false) && r.value("runtime", "") == "metal", r.dump().substr(0, 300));
  CHECK(h.opened.size() == 1 && h.opened[0].layer == "emu" && h.opened[0].board == "n300" && h.opened[0].chip == 1,
        "the emulator is opened for the board and chip asked");
  CHECK(r["dram"].value("banks", 0) == 2 && r["dram"].value("bank_size", 0) == 65536, r["dram"].dump());

  // DRAM allocations stay within the DRAM reported; L1 ones are not counted.
  CHECK(h.reply({{"id", 2}, {"cmd", "alloc"}, {"size", 100000}}).value("ok", false), "100000 of 131072 bytes");
  r = h.reply({{"id", 3}, {"cmd", "alloc"}, {"size", 40000}});
  CHECK(code_of(r) == "out_of_memory" && message_of(r) == "alloc: 40000 bytes asked, 31072 free in the DRAM the mock reports",
        r.dump());
  CHECK(h.reply({{"id", 4}, {"cmd", "alloc"}, {"size", 4096}, {"placement", "l1"}, {"page_size", 64}}).value("ok", false),
        "an L1 buffer");
  CHECK(h.reply({{"id", 5}, {"cmd", "free"}, {"buffer", 1}}).value("ok", false), "free");
  CHECK(h.reply({{"id", 6}, {"cmd", "alloc"}, {"size", 131072}}).value("ok", false), "the freed bytes are free again");

  // Every core of every kernel prints the line at every run.
  json prog = {{"id", 7},
               {"cmd", "compile"},
               {"name", "p"},
               {"params", json::array()},
               {"kernels",
                {{{"processor", "riscv_0"}, {"cores", {{0, 0, 0, 1}}}, {"source", "void kernel_main() {}"}},
                 {{"processor", "compute"}, {"cores", {{1, 1, 1, 1}}}, {"source", "void kernel_main() {}"}}}}};
  CHECK(h.reply(prog).value("ok", false), "compile");
  std::string printed = capture_stderr([&] {
    CHECK(h.reply({{"id", 8}, {"cmd", "run"}, {"program", 1}, {"args", json::array()}}).value("ok", false), "run");
  });
  CHECK(printed == "dprint: core (0,0) riscv_0: hi there\ndprint: core (0,1) riscv_0: hi there\n"
                   "dprint: core (1,1) compute: hi there\n",
        printed);

  // Without DPRINT on, nothing is printed; layer=init opens what init asks.
  MockHarness quiet("dprint=hi,layer=init");
  CHECK(code_of(quiet.init("metal")) == "unsupported", "layer=init opens the metal layer init asks for");
  CHECK(quiet.init().value("ok", false), "and the emu layer");
  quiet.reply(prog);
  printed = capture_stderr([&] { quiet.reply({{"id", 9}, {"cmd", "run"}, {"program", 1}, {"args", json::array()}}); });
  CHECK(printed.empty(), printed);
}

}  // namespace

int main() {
  test_parse();
  test_reshape();
  test_request_faults();
  test_stream_faults();
  test_fault_of_a_run_in_flight();
  test_mock_layer();
  if (failures) {
    std::cerr << failures << " checks FAILED\n";
    return 1;
  }
  std::cerr << "all checks passed\n";
  return 0;
}
