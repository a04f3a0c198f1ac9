// The FPU model (src/numerics.hpp) against words an independent model of the
// card's datapath computed: data/ttsim_fpu_vectors.txt holds ELWMUL (one
// fidelity phase), ELWADD/ELWSUB (with and without DST accumulation), MVMUL
// (one phase, 16 products) and the packer's L1 accumulation, with 16-bit and
// 32-bit DST, on Wormhole and Blackhole, for random operands with ties,
// zeros, denormals, exponent 255 and cancellation mixed in. The words came
// from ttsim's own datapath functions, run outside this repository (the file
// says which); each line is replayed here through the model, which must give
// the same word. data/ttsim_int_vectors.txt holds the integer conversions:
// the packer's Int32-to-Int8/UInt8, SFPCAST and tt-llk's typecast programs
// between floats and Int32/UInt32/UInt16/bf16 both ways, as ttsim's lanes run them,
// and SFPLOAD/SFPSTORE's INT32_2S_COMP mode.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "numerics.hpp"

using namespace zyx::emu::hw;

namespace {

uint32_t word(std::istringstream& in) {
  std::string s;
  in >> s;
  return static_cast<uint32_t>(std::stoul(s, nullptr, 16));
}

// The model's word for one line of the integer vectors (kind and input).
bool replay_int(const std::string& kind, uint32_t x, uint32_t& got) {
  if (kind == "pack_int8") got = pack_int8(x, false);
  else if (kind == "pack_uint8") got = pack_int8(x, true);
  else if (kind == "sfpcast") got = sfpcast_int_to_f32(x);
  else if (kind == "f32_to_int32") got = sfpu_f32_to_int32(x);
  else if (kind == "f32_to_uint32") got = sfpu_f32_to_uint32(x);
  else if (kind == "f32_to_uint16") got = sfpu_f32_to_uint16(x);
  else if (kind == "int32_to_f32") got = sfpu_int32_to_f32(x);
  else if (kind == "int32_to_bf16") got = sfpu_f32_to_bf16(sfpu_int32_to_f32(x));
  else if (kind == "f32_to_bf16") got = sfpu_f32_to_bf16(x);
  else if (kind == "sfpload12") got = sfpload_int32_2s_comp(x);
  else if (kind == "sfpstore12") got = sfpstore_int32_2s_comp(x);
  else if (kind == "uint32_to_f32") got = sfpu_uint32_to_f32(x);
  else if (kind == "uint32_to_bf16") got = sfpu_f32_to_bf16(sfpu_uint32_to_f32(x));
  else if (kind == "uint16_to_bf16") got = sfpu_f32_to_bf16(sfpu_uint16_to_f32(x));
  else return false;
  return true;
}

// The model's word for one vector line (its kind already read), and the
// expected word.
bool replay(const std::string& kind, std::istringstream& in, uint32_t& got, uint32_t& want) {
  int arch = 0, fp32 = 0;
  if (kind == "elwmul" || kind == "elwadd" || kind == "mvmul") in >> arch >> fp32;
  const Config c{fp32 != 0, arch == 0};
  if (kind == "elwmul") {
    int phase;
    in >> phase;
    uint32_t a = word(in), b = word(in), d = word(in);
    got = elwmul_phase(a, b, d, phase, c);
  } else if (kind == "elwadd") {
    int acc, sub;
    in >> acc >> sub;
    uint32_t a = word(in), b = word(in), d = word(in);
    got = elwadd(a, b, sub != 0, d, acc != 0, c);
  } else if (kind == "mvmul") {
    int phase;
    in >> phase;
    uint32_t d = word(in), a[16], b[16];
    for (uint32_t& x : a) x = word(in);
    for (uint32_t& x : b) x = word(in);
    got = mvmul_phase(a, 1, b, 1, d, phase, c);
  } else if (kind == "l1f32") {
    uint32_t x = word(in), y = word(in);
    got = l1_acc_f32(x, y);
  } else if (kind == "l1bf16") {
    uint32_t x = word(in), y = word(in);
    got = l1_acc_bf16(static_cast<uint16_t>(x), static_cast<uint16_t>(y));
  } else if (!replay_int(kind, word(in), got)) {
    return false;
  }
  want = word(in);
  return true;
}

// Replays every line of one vector file into counts; returns the number
// of mismatched words, or -1 where the file cannot be read or parsed.
int replay_file(const std::string& path, std::map<std::string, std::pair<int, int>>& counts) {
  std::ifstream file(path);
  if (!file) {
    std::fprintf(stderr, "numerics_ttsim: cannot read %s\n", path.c_str());
    return -1;
  }
  std::string line;
  int lineno = 0, failures = 0;
  while (std::getline(file, line)) {
    lineno++;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    uint32_t got = 0, want = 0;
    if (!replay(kind, in, got, want) || in.fail()) {
      std::fprintf(stderr, "%s:%d: cannot parse: %s\n", path.c_str(), lineno, line.c_str());
      return -1;
    }
    counts[kind].first++;
    if (got != want) {
      counts[kind].second++;
      if (++failures <= 20) std::fprintf(stderr, "%s:%d: %s: got %08x, want %08x\n", path.c_str(), lineno, kind.c_str(), got, want);
    }
  }
  return failures;
}

}  // namespace

// Arguments: the FPU vector file and the integer vector file (default: the
// repository's data files).
int main(int argc, char** argv) {
  const std::string fpu = argc > 1 ? argv[1] : ZYX_TTSIM_VECTORS;
  const std::string ints = argc > 2 ? argv[2] : ZYX_TTSIM_INT_VECTORS;
  std::map<std::string, std::pair<int, int>> counts;  // kind: checked, mismatched
  const int a = replay_file(fpu, counts), b = replay_file(ints, counts);
  if (a < 0 || b < 0) return 1;
  for (const auto& [kind, n] : counts) std::printf("%-13s %5d words, %d mismatched\n", kind.c_str(), n.first, n.second);
  if (counts.size() < 19) {
    std::fprintf(stderr, "numerics_ttsim: the vector files lack some kinds of vector\n");
    return 1;
  }
  return a + b ? 1 : 0;
}
