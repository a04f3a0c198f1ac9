// Parsing a mock SPEC (mock.hpp): `key=value` and bare-key items separated
// by commas.
#include <charconv>
#include <map>
#include <stdexcept>

#include "mock.hpp"

namespace zyx::mock {

namespace {

[[noreturn]] void fail(std::string_view item, const std::string& why) {
  throw std::invalid_argument("mock item \"" + std::string(item) + "\": " + why);
}

uint64_t number(std::string_view item, std::string_view v) {
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || p != v.data() + v.size()) fail(item, "wants a non-negative integer");
  return n;
}

// request is a request number: 1 for the first request line.
uint64_t request(std::string_view item, std::string_view v) {
  uint64_t n = number(item, v);
  if (n == 0) fail(item, "request numbers start at 1 (the init)");
  return n;
}

uint32_t u32(std::string_view item, std::string_view v) {
  uint64_t n = number(item, v);
  if (n > UINT32_MAX) fail(item, "is past 32 bits");
  return static_cast<uint32_t>(n);
}

// duration reads a number with a unit: ns, us, ms, s or m.
std::chrono::nanoseconds duration(std::string_view item, std::string_view v) {
  size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') digits++;
  std::string_view unit = v.substr(digits);
  static const std::map<std::string_view, uint64_t> ns_per = {
      {"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}, {"m", 60000000000}};
  auto it = ns_per.find(unit);
  if (digits == 0 || it == ns_per.end()) fail(item, "wants a duration such as 30ms (units: ns, us, ms, s, m)");
  uint64_t n = number(item, v.substr(0, digits));
  if (n > UINT64_MAX / it->second / 2) fail(item, "is too long");
  return std::chrono::nanoseconds(n * it->second);
}

using Setter = void (*)(Spec&, std::string_view item, std::string_view value);

// The keys and what each sets; a key without a value is a switch.
const std::map<std::string_view, Setter>& setters() {
  static const std::map<std::string_view, Setter> m = {
      {"layer", [](Spec& s, std::string_view i, std::string_view v) {
         if (v != "emu" && v != "init") fail(i, "is emu (the emulator serves every init) or init (the layer init asks for)");
         s.layer = std::string(v);
       }},
      {"board", [](Spec& s, std::string_view i, std::string_view v) {
         if (v.empty()) fail(i, "wants a board name (n150, n300, p100a, p150a, p300c)");
         s.board = std::string(v);
       }},
      {"rows", [](Spec& s, std::string_view i, std::string_view v) { s.rows = u32(i, v); }},
      {"cols", [](Spec& s, std::string_view i, std::string_view v) { s.cols = u32(i, v); }},
      {"banks", [](Spec& s, std::string_view i, std::string_view v) { s.banks = u32(i, v); }},
      {"bank-size", [](Spec& s, std::string_view i, std::string_view v) { s.bank_size = number(i, v); }},
      {"l1", [](Spec& s, std::string_view i, std::string_view v) { s.l1 = number(i, v); }},
      {"l1-base", [](Spec& s, std::string_view i, std::string_view v) { s.l1_base = number(i, v); }},
      {"semaphores", [](Spec& s, std::string_view i, std::string_view v) { s.semaphores = u32(i, v); }},
      {"harvest-rows", [](Spec& s, std::string_view i, std::string_view v) {
         // rows separated by '/', as the items are by ','
         for (size_t at = 0; at <= v.size();) {
           size_t end = v.find('/', at);
           if (end == std::string_view::npos) end = v.size();
           s.harvest_rows.push_back(u32(i, v.substr(at, end - at)));
           at = end + 1;
         }
       }},
      {"dprint", [](Spec& s, std::string_view i, std::string_view v) {
         if (v.empty()) fail(i, "wants the text to print");
         s.dprint = std::string(v);
       }},
      {"hold-at", [](Spec& s, std::string_view i, std::string_view v) { s.hold_at.insert(request(i, v)); }},
      {"crash-at", [](Spec& s, std::string_view i, std::string_view v) { s.crash_at = request(i, v); }},
      {"hang-at", [](Spec& s, std::string_view i, std::string_view v) { s.hang_at = request(i, v); }},
      {"orphan-at", [](Spec& s, std::string_view i, std::string_view v) { s.orphan_at = request(i, v); }},
      {"close-stdout-at", [](Spec& s, std::string_view i, std::string_view v) { s.close_stdout_at = request(i, v); }},
      {"error-at", [](Spec& s, std::string_view i, std::string_view v) { s.error_at = request(i, v); }},
      {"error-code", [](Spec& s, std::string_view i, std::string_view v) {
         if (v.empty()) fail(i, "wants a protocol error code (internal, out_of_memory, run_error, …)");
         s.error_code = std::string(v);
       }},
      {"protocol", [](Spec& s, std::string_view i, std::string_view v) {
         uint64_t p = number(i, v);
         if (p == 0 || p > 1000) fail(i, "wants a protocol version");
         s.protocol = static_cast<int>(p);
       }},
      {"wrong-id-at", [](Spec& s, std::string_view i, std::string_view v) { s.wrong_id_at = request(i, v); }},
      {"garbage-at", [](Spec& s, std::string_view i, std::string_view v) { s.garbage_at = request(i, v); }},
      {"oversize-at", [](Spec& s, std::string_view i, std::string_view v) { s.oversize_at = request(i, v); }},
      {"slow", [](Spec& s, std::string_view i, std::string_view v) { s.slow = duration(i, v); }},
      {"flood", [](Spec& s, std::string_view i, std::string_view v) { s.flood = number(i, v); }},
      {"stderr", [](Spec& s, std::string_view, std::string_view v) { s.stderr_line = std::string(v); }},
  };
  return m;
}

const std::map<std::string_view, bool Spec::*>& switches() {
  static const std::map<std::string_view, bool Spec::*> m = {{"noise", &Spec::noise}, {"ignore-term", &Spec::ignore_term}};
  return m;
}

// distance is the edit distance of a and b (for "did you mean").
size_t distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); j++) row[j] = j;
  for (size_t i = 1; i <= a.size(); i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); j++) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

[[noreturn]] void unknown(std::string_view item, std::string_view key) {
  std::string best;
  size_t best_d = 3;  // suggest only near misses
  auto consider = [&](std::string_view k) {
    if (size_t d = distance(key, k); d < best_d) best_d = d, best = std::string(k);
  };
  for (const auto& [k, _] : setters()) consider(k);
  for (const auto& [k, _] : switches()) consider(k);
  std::string why = "unknown key \"" + std::string(key) + "\"";
  if (!best.empty()) why += "; did you mean \"" + best + "\"?";
  fail(item, why + " (zyx-tt-runtime --help lists the keys)");
}

}  // namespace

void parse_into(std::string_view spec, Spec* out) {
  for (size_t at = 0; at <= spec.size();) {
    size_t end = spec.find(',', at);
    if (end == std::string_view::npos) end = spec.size();
    std::string_view item = spec.substr(at, end - at);
    at = end + 1;
    if (item.empty() || item == "on") continue;
    size_t eq = item.find('=');
    std::string_view key = item.substr(0, eq);
    if (eq == std::string_view::npos) {
      auto sw = switches().find(key);
      if (sw != switches().end()) {
        out->*(sw->second) = true;
        continue;
      }
      if (setters().count(key)) fail(item, "wants a value (" + std::string(key) + "=…)");
      unknown(item, key);
    }
    auto it = setters().find(key);
    if (it == setters().end()) {
      if (switches().count(key)) fail(item, "takes no value");
      unknown(item, key);
    }
    it->second(*out, item, item.substr(eq + 1));
  }
}

std::string help() {
  return "  Mock mode (--mock SPEC, or ZYX_TT_MOCK=SPEC): SPEC is comma-separated items; N is a\n"
         "  request number (the Nth request line read, 1 for init). docs/runtime.md has the details.\n"
         "    device:  layer=emu|init board=NAME rows=N cols=N harvest-rows=R[/R...] banks=N\n"
         "             bank-size=BYTES l1=BYTES l1-base=BYTES semaphores=N dprint=TEXT\n"
         "    faults:  hold-at=N (until SIGUSR1) crash-at=N hang-at=N orphan-at=N close-stdout-at=N\n"
         "             error-at=N error-code=CODE protocol=V wrong-id-at=N garbage-at=N oversize-at=N\n"
         "             noise slow=DURATION flood=BYTES ignore-term stderr=TEXT on\n";
}

}  // namespace zyx::mock
