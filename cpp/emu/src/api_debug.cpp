// Debug (api/debug/*): DPRINT lines on stderr tagged with the core and
// processor, WAYPOINT, ASSERT, the DST dump of dprint_tensix, and the
// failures a kernel's headers report (a bad argument).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernel_api.hpp"

namespace zyx::emu {

namespace {

// The processor a section runs on, as DPRINT names it.
const char* processor_of(const Fiber* f, uint32_t tag) {
  static const char* trisc[] = {"trisc0", "trisc1", "trisc2"};
  if (tag >= 1 && tag <= 3) return trisc[tag - 1];
  if (f->trisc != Trisc::Single) return trisc[static_cast<int>(f->trisc) - 1];  // a TRISC build's own
  return processor_name(f->processor);
}

// DPRINT output is on when the runtime runs with ZYX_EMU_DPRINT set (not "0").
bool dprint_on() {
  const char* v = std::getenv("ZYX_EMU_DPRINT");
  return v && *v && std::strcmp(v, "0") != 0;
}

// Writes one finished DPRINT line, tagged with the core and processor
// (docs/protocol.md, "Run output"), in one write so lines do not interleave.
void emit_dprint_line(Fiber* f, uint32_t tag, const std::string& text) {
  f->api.last_dprint = text.size() > 200 ? text.substr(0, 200) + "…" : text;
  std::string line = "dprint: core (" + std::to_string(f->core->row) + "," + std::to_string(f->core->col) + ") " +
                     processor_of(f, tag) + ": " + text + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void api_fail(const char* msg) { kernel_fail(msg ? msg : "kernel failure"); }

int api_dprint_enabled() { return dprint_on() ? 1 : 0; }

void flush_dprint(Fiber* f) {
  KernelState& k = f->api;
  if (!k.dprint_line.empty()) emit_dprint_line(f, k.dprint_line_tag, k.dprint_line);
  k.dprint_line.clear();
}

void api_dprint(const char* text) {
  if (!text || !dprint_on()) return;
  Fiber* f = t_fiber;
  KernelState& k = f->api;
  std::string in = text;  // read the kernel's text before anything else
  if (!k.dprint_line.empty() && k.dprint_line_tag != k.dprint_tag) flush_dprint(f);
  k.dprint_line_tag = k.dprint_tag;
  size_t start = 0;
  for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
    k.dprint_line.append(in, start, nl - start);
    emit_dprint_line(f, k.dprint_line_tag, k.dprint_line);
    k.dprint_line.clear();
  }
  k.dprint_line.append(in, start, std::string::npos);
}

uint32_t api_dprint_tag(uint32_t tag) {
  KernelState& k = t_fiber->api;
  uint32_t old = k.dprint_tag;
  k.dprint_tag = tag <= 3 ? tag : 0;
  return old;
}

void api_waypoint(const char* name) {
  KernelState& k = t_fiber->api;
  size_t i = 0;
  for (; name && i + 1 < sizeof k.waypoint && name[i]; i++) k.waypoint[i] = name[i];
  k.waypoint[i] = 0;
}

void api_assert_fail(const char* cond, const char* file, uint32_t line) {
  kernel_fail(std::string("ASSERT(") + (cond ? cond : "?") + ") failed at " + (file ? file : "?") + ":" +
              std::to_string(line));
}

const uint32_t* api_dst_tile(uint32_t tile, uint32_t* is_int) {
  CoreState* c = t_fiber->core;
  if (tile >= c->dst.size())
    kernel_fail("dprint_tensix_dest_reg(" + std::to_string(tile) + "): DST holds " + std::to_string(c->dst.size()) +
                " tiles");
  if (is_int) *is_int = c->dst_kind[tile] == DstKind::Int ? 1 : 0;
  return c->dst[tile].data();
}

}  // namespace zyx::emu
