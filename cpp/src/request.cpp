#include "request.hpp"

#include <array>
#include <cstring>

#include "enum_names.hpp"

namespace zyx {

void bad_request(const std::string& msg) { throw Error("bad_request", msg); }
void invalid_argument(const std::string& msg) { throw Error("invalid_argument", msg); }

// ---- the line ------------------------------------------------------------------

namespace {

// DomBuilder is a SAX handler that builds the document in one pass. It
// replaces nlohmann's callback parser, which rescans the enclosing container
// at the end of every object (quadratic in the length of an array of
// objects), and adds the depth and duplicate-key checks.
class DomBuilder {
 public:
  json root;
  std::string error;

  bool null() { return add(nullptr); }
  bool boolean(bool v) { return add(v); }
  bool number_integer(json::number_integer_t v) { return add(v); }
  bool number_unsigned(json::number_unsigned_t v) { return add(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return add(v); }
  bool string(json::string_t& v) { return add(std::move(v)); }
  bool binary(json::binary_t&) {
    error = "binary values are not JSON";
    return false;
  }
  bool start_object(std::size_t) { return open(json::value_t::object); }
  bool start_array(std::size_t) { return open(json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    auto& obj = stack_.back()->get_ref<json::object_t&>();
    auto [it, inserted] = obj.emplace(std::move(k), nullptr);
    if (!inserted) {
      error = "the key \"" + it->first + "\" appears twice in one object";
      return false;
    }
    slot_ = &it->second;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = std::string("malformed JSON: ") + e.what();
    return false;
  }

 private:
  // place stores v where the parser is: the root, the next element of the
  // open array, or the value of the last key. A pointer to an element stays
  // valid while it is open, since its container grows only after it closes.
  template <typename V>
  json* place(V&& v) {
    if (stack_.empty()) {
      root = json(std::forward<V>(v));
      return &root;
    }
    json* top = stack_.back();
    if (top->is_array()) {
      auto& arr = top->get_ref<json::array_t&>();
      arr.emplace_back(std::forward<V>(v));
      return &arr.back();
    }
    *slot_ = json(std::forward<V>(v));
    return slot_;
  }
  template <typename V>
  bool add(V&& v) {
    place(std::forward<V>(v));
    return true;
  }
  bool open(json::value_t t) {
    if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
      error = "the request nests arrays and objects deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    stack_.push_back(place(json(t)));
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  std::vector<json*> stack_;
  json* slot_ = nullptr;
};

}  // namespace

json parse_json_line(std::string_view line) {
  // nlohmann's lexer takes a NUL byte for the end of input; JSON text never
  // holds a raw one (strings escape it as \u0000).
  if (const void* nul = std::memchr(line.data(), '\0', line.size()))
    bad_request("request: the line holds a NUL byte at offset " +
                std::to_string(static_cast<const char*>(nul) - line.data()));
  DomBuilder b;
  bool ok = false;
  try {
    ok = json::sax_parse(line.begin(), line.end(), &b, json::input_format_t::json, /*strict=*/true);
  } catch (const json::exception& e) {
    bad_request(std::string("request: malformed JSON: ") + e.what());
  }
  if (!ok) bad_request("request: " + (b.error.empty() ? std::string("malformed JSON") : b.error));
  return std::move(b.root);
}

std::vector<uint8_t> decode_base64(std::string_view in, const std::string& field) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; i++) t[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
    return t;
  }();
  size_t pad = 0;
  while (!in.empty() && in.back() == '=' && pad < 2) {
    in.remove_suffix(1);
    pad++;
  }
  if (in.size() % 4 == 1 || (pad && (in.size() + pad) % 4 != 0))
    bad_request(field + ": not valid base64 (its length is wrong)");
  std::vector<uint8_t> out;
  out.reserve(in.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    int v = table[c];
    if (v < 0) bad_request(field + ": not valid base64 (it holds a character outside the alphabet)");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return out;
}

// ---- typed access --------------------------------------------------------------

namespace {

// Path names a value inside the request. Paths live on the stack and are
// rendered only when an error needs them.
struct Path {
  const Path* parent = nullptr;
  std::string_view key;
  size_t index = 0;
  bool is_index = false;

  Path field(std::string_view k) const { return Path{this, k, 0, false}; }
  Path at(size_t i) const { return Path{this, {}, i, true}; }
  std::string str() const {
    std::vector<const Path*> chain;
    for (const Path* p = this; p; p = p->parent) chain.push_back(p);
    std::string out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const Path* p = *it;
      if (p->is_index) {
        out += '[';
        out += std::to_string(p->index);
        out += ']';
      } else {
        if (!out.empty()) out += ".";
        out.append(p->key);
      }
    }
    return out;
  }
};

[[noreturn]] void bad(const Path& p, const std::string& msg) { bad_request(p.str() + ": " + msg); }

const char* type_name(const json& v) {
  if (v.is_number_unsigned()) return "an unsigned integer";
  if (v.is_number_integer()) return "a negative integer";
  if (v.is_number_float()) return "a number with a fraction or exponent, or past 64 bits";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  return "null";
}

uint64_t as_u64(const json& v, const Path& p) {
  if (!v.is_number_unsigned()) bad(p, std::string("must be an unsigned integer, got ") + type_name(v));
  return v.get<uint64_t>();
}

uint32_t as_u32(const json& v, const Path& p) {
  if (!v.is_number_unsigned()) bad(p, std::string("must be an unsigned 32-bit integer, got ") + type_name(v));
  uint64_t x = v.get<uint64_t>();
  if (x > UINT32_MAX) bad(p, "is " + std::to_string(x) + ", past 32 bits");
  return static_cast<uint32_t>(x);
}

const std::string& as_str(const json& v, const Path& p) {
  if (!v.is_string()) bad(p, std::string("must be a string, got ") + type_name(v));
  return v.get_ref<const std::string&>();
}

bool as_bool(const json& v, const Path& p) {
  if (!v.is_boolean()) bad(p, std::string("must be true or false, got ") + type_name(v));
  return v.get<bool>();
}

const json::array_t& as_array(const json& v, const Path& p) {
  if (!v.is_array()) bad(p, std::string("must be an array, got ") + type_name(v));
  return v.get_ref<const json::array_t&>();
}

template <typename E, size_t N>
E as_enum(const json& v, const Path& p, const std::array<std::pair<std::string_view, E>, N>& names) {
  const std::string& s = as_str(v, p);
  for (const auto& [name, e] : names)
    if (s == name) return e;
  std::string list;
  for (const auto& [name, e] : names) {
    if (!list.empty()) list += ", ";
    list.append(name);
  }
  bad(p, "\"" + s + "\" is not one of " + list);
}

// Obj reads the fields of one object. Absent and null fields are the same.
// done() refuses the fields nobody asked for.
class Obj {
 public:
  Obj(const json& v, const Path& p) : p_(p) {
    if (!v.is_object()) bad(p, std::string("must be an object, got ") + type_name(v));
    obj_ = &v.get_ref<const json::object_t&>();
  }

  const Path& path() const { return p_; }

  // get returns the field, or nullptr when it is absent or null.
  const json* get(std::string_view key) {
    if (n_taken_ < taken_.size()) taken_[n_taken_++] = key;
    auto it = obj_->find(key);
    if (it == obj_->end()) return nullptr;
    found_++;
    return it->second.is_null() ? nullptr : &it->second;
  }
  const json& need(std::string_view key) {
    const json* v = get(key);
    if (!v) bad(p_.field(key), "missing field");
    return *v;
  }

  uint64_t u64(std::string_view k) { return as_u64(need(k), p_.field(k)); }
  uint64_t u64_or(std::string_view k, uint64_t def) {
    const json* v = get(k);
    return v ? as_u64(*v, p_.field(k)) : def;
  }
  uint32_t u32(std::string_view k) { return as_u32(need(k), p_.field(k)); }
  uint32_t u32_or(std::string_view k, uint32_t def) {
    const json* v = get(k);
    return v ? as_u32(*v, p_.field(k)) : def;
  }
  std::string str(std::string_view k) { return as_str(need(k), p_.field(k)); }
  std::string str_or(std::string_view k, std::string def) {
    const json* v = get(k);
    return v ? as_str(*v, p_.field(k)) : def;
  }
  bool boolean_or(std::string_view k, bool def) {
    const json* v = get(k);
    return v ? as_bool(*v, p_.field(k)) : def;
  }

  void done() {
    if (found_ == obj_->size()) return;
    for (const auto& [key, _] : *obj_) {
      bool known = false;
      for (size_t i = 0; i < n_taken_ && !known; i++) known = taken_[i] == key;
      if (known) continue;
      std::string list;
      for (size_t i = 0; i < n_taken_; i++) {
        if (i) list += ", ";
        list.append(taken_[i]);
      }
      bad(p_.field(key), "unknown field (this object takes: " + list + ")");
    }
  }

 private:
  const json::object_t* obj_ = nullptr;
  const Path& p_;
  std::array<std::string_view, 24> taken_{};
  size_t n_taken_ = 0, found_ = 0;
};

// ---- enums -------------------------------------------------------------------

constexpr std::array<std::pair<std::string_view, Cmd>, 12> kCmds = {{
    {"ping", Cmd::Ping},
    {"exit", Cmd::Exit},
    {"init", Cmd::Init},
    {"map", Cmd::Map},
    {"unmap", Cmd::Unmap},
    {"alloc", Cmd::Alloc},
    {"free", Cmd::Free},
    {"write", Cmd::Write},
    {"read", Cmd::Read},
    {"compile", Cmd::Compile},
    {"run", Cmd::Run},
    {"release", Cmd::Release},
}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kLayers = {{
    {"emu", "emu"},
    {"metal", "metal"},
    {"auto", "auto"},
}};
// The element types of params: the names of Go's backends.DType, as the
// driver writes them.
constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kDTypes = {{
    {"bf16", "bf16"}, {"f16", "f16"}, {"f32", "f32"}, {"f64", "f64"}, {"f8e4m3", "f8e4m3"},
    {"f8e5m2", "f8e5m2"}, {"i8", "i8"}, {"i16", "i16"}, {"i32", "i32"}, {"i64", "i64"},
    {"u8", "u8"}, {"u16", "u16"}, {"u32", "u32"}, {"u64", "u64"}, {"bool", "bool"},
}};
constexpr std::array<std::pair<std::string_view, MathFidelity>, 4> kFidelities = {{
    {"LoFi", MathFidelity::LoFi},
    {"HiFi2", MathFidelity::HiFi2},
    {"HiFi3", MathFidelity::HiFi3},
    {"HiFi4", MathFidelity::HiFi4},
}};
constexpr std::array<std::pair<std::string_view, Placement>, 2> kPlacements = {{
    {"dram", Placement::Dram},
    {"l1", Placement::L1},
}};
constexpr std::array<std::pair<std::string_view, BufferLayout>, 4> kLayouts = {{
    {"interleaved", BufferLayout::Interleaved},
    {"height_sharded", BufferLayout::HeightSharded},
    {"width_sharded", BufferLayout::WidthSharded},
    {"block_sharded", BufferLayout::BlockSharded},
}};
constexpr std::array<std::pair<std::string_view, ShardOrientation>, 2> kOrientations = {{
    {"row_major", ShardOrientation::RowMajor},
    {"col_major", ShardOrientation::ColMajor},
}};

// ---- pieces of programs ------------------------------------------------------

// A pair of unsigned 32-bit integers: [row, col], [h, w], [rows, cols].
std::pair<uint32_t, uint32_t> u32_pair(const json& v, const Path& p) {
  const auto& a = as_array(v, p);
  if (a.size() != 2) bad(p, "must be an array of 2 unsigned integers, got " + std::to_string(a.size()) + " elements");
  return {as_u32(a[0], p.at(0)), as_u32(a[1], p.at(1))};
}

CoreCoord core_coord(const json& v, const Path& p) {
  auto [r, c] = u32_pair(v, p);
  return CoreCoord{r, c};
}

CoreRangeSet core_set(const json& v, const Path& p) {
  const auto& a = as_array(v, p);
  CoreRangeSet s;
  s.ranges.reserve(a.size());
  for (size_t i = 0; i < a.size(); i++) {
    Path rp = p.at(i);
    const auto& r = as_array(a[i], rp);
    if (r.size() != 4)
      bad(rp, "a core range is [r0, c0, r1, c1] (4 unsigned integers), got " + std::to_string(r.size()) + " elements");
    s.ranges.push_back(CoreRange{CoreCoord{as_u32(r[0], rp.at(0)), as_u32(r[1], rp.at(1))},
                                 CoreCoord{as_u32(r[2], rp.at(2)), as_u32(r[3], rp.at(3))}});
  }
  return s;
}

std::string source_of(Obj& o) {
  const json* text = o.get("source");
  const json* b64 = o.get("source_b64");
  if (!text == !b64) bad(o.path().field("source"), "give exactly one of source and source_b64");
  if (text) return as_str(*text, o.path().field("source"));
  Path bp = o.path().field("source_b64");
  auto bytes = decode_base64(as_str(*b64, bp), bp.str());
  return std::string(bytes.begin(), bytes.end());
}

ArgEntry arg_entry(const json& v, const Path& p) {
  Obj o(v, p);
  ArgEntry e;
  e.kind = as_enum(o.need("kind"), p.field("kind"), kArgKindNames);
  switch (e.kind) {
    case ArgKind::Const:
      e.value = o.u32("value");
      break;
    case ArgKind::Param:
    case ArgKind::BufferAddr:
    case ArgKind::BufferSize:
    case ArgKind::BufferPages:
    case ArgKind::PageSize:
    case ArgKind::Accessor:
      e.param = o.u32("param");
      break;
    case ArgKind::BankId:
    case ArgKind::BankNocX:
    case ArgKind::BankNocY:
      e.param = o.u32("param");
      e.page = o.u32("page");
      break;
    case ArgKind::CoreNocX:
    case ArgKind::CoreNocY:
      e.core = core_coord(o.need("core"), p.field("core"));
      break;
    case ArgKind::SemaphoreAddr:
      e.value = o.u32("semaphore");
      break;
  }
  o.done();
  return e;
}

// list_of reads the array v (nullptr: absent, an empty list), each element
// by item(element, its path). p must outlive the call: the elements' paths
// point at it.
template <typename F>
auto list_of(const json* v, const Path& p, F item) {
  std::vector<decltype(item(std::declval<const json&>(), p))> out;
  if (!v) return out;
  const auto& a = as_array(*v, p);
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); i++) out.push_back(item(a[i], p.at(i)));
  return out;
}

// objects_of reads the array v of objects: item(Obj&) reads the fields of
// each element, and a field it left unread is an error (Obj::done).
template <typename F>
auto objects_of(const json* v, const Path& p, F item) {
  return list_of(v, p, [&item](const json& e, const Path& ep) {
    Obj eo(e, ep);
    auto out = item(eo);
    eo.done();
    return out;
  });
}

std::vector<ArgEntry> arg_list(const json* v, const Path& p) { return list_of(v, p, arg_entry); }

// The fields of a buffer spec, as alloc and compile.buffers share them.
BufferSpec buffer_spec(Obj& o) {
  const Path& p = o.path();
  BufferSpec s;
  s.page_size = o.u64_or("page_size", 2048);
  if (const json* v = o.get("placement")) s.placement = as_enum(*v, p.field("placement"), kPlacements);
  if (const json* v = o.get("layout")) s.layout = as_enum(*v, p.field("layout"), kLayouts);
  Path sp = p.field("shard");
  const json* shard = o.get("shard");
  if (s.layout == BufferLayout::Interleaved) {
    if (shard) bad(sp, "an interleaved buffer takes no shard spec");
    return s;
  }
  if (!shard) bad(sp, "missing field (a sharded layout needs a shard spec)");
  Obj so(*shard, sp);
  ShardSpec sh;
  sh.cores = core_set(so.need("cores"), sp.field("cores"));
  auto shape = u32_pair(so.need("shape"), sp.field("shape"));
  auto tensor = u32_pair(so.need("tensor"), sp.field("tensor"));
  sh.shape[0] = shape.first;
  sh.shape[1] = shape.second;
  sh.tensor[0] = tensor.first;
  sh.tensor[1] = tensor.second;
  if (const json* v = so.get("orientation")) sh.orientation = as_enum(*v, sp.field("orientation"), kOrientations);
  so.done();
  s.shard = std::move(sh);
  return s;
}

KernelDesc kernel(const json& v, const Path& p) {
  Obj o(v, p);
  KernelDesc k;
  const json* name = o.get("name");
  k.processor = as_enum(o.need("processor"), p.field("processor"), kProcessorNames);
  k.name = name ? as_str(*name, p.field("name")) : std::string(processor_name(k.processor));
  bool dm = k.processor != Processor::Compute;
  if (const json* n = o.get("noc")) {
    if (!dm) bad(p.field("noc"), "only data-movement kernels (riscv_0, riscv_1) take a NOC");
    k.noc = as_u32(*n, p.field("noc"));
  } else {
    k.noc = k.processor == Processor::Riscv1 ? 1 : 0;  // riscv_0 uses NOC 0, riscv_1 NOC 1; compute none
  }
  k.cores = core_set(o.need("cores"), p.field("cores"));
  k.source = source_of(o);
  if (const json* d = o.get("defines")) {
    Path dp = p.field("defines");
    if (!d->is_object()) bad(dp, std::string("must be an object of strings, got ") + type_name(*d));
    for (const auto& [key, val] : d->get_ref<const json::object_t&>()) k.defines[key] = as_str(val, dp.field(key));
  }
  k.compile_args = arg_list(o.get("compile_args"), p.field("compile_args"));
  if (const json* n = o.get("named_compile_args")) {
    Path np = p.field("named_compile_args");
    if (!n->is_object()) bad(np, std::string("must be an object of arg entries, got ") + type_name(*n));
    const auto& obj = n->get_ref<const json::object_t&>();
    k.named_compile_args.reserve(obj.size());
    for (const auto& [key, val] : obj) k.named_compile_args.emplace_back(key, arg_entry(val, np.field(key)));
  }
  k.common_args = arg_list(o.get("common_args"), p.field("common_args"));
  k.runtime_args = objects_of(o.get("runtime_args"), p.field("runtime_args"), [](Obj& eo) {
    CoreArgs ca;
    ca.cores = core_set(eo.need("cores"), eo.path().field("cores"));
    ca.args = arg_list(eo.get("args"), eo.path().field("args"));
    return ca;
  });
  Path cp = p.field("compute_config");
  if (const json* cc = o.get("compute_config")) {
    if (dm) bad(cp, "only compute kernels take a compute_config");
    {
      Obj co(*cc, cp);
      if (const json* f = co.get("math_fidelity"))
        k.compute.math_fidelity = as_enum(*f, cp.field("math_fidelity"), kFidelities);
      k.compute.fp32_dest_acc = co.boolean_or("fp32_dest_acc", false);
      k.compute.math_approx_mode = co.boolean_or("math_approx_mode", false);
      co.done();
    }
  }
  o.done();
  return k;
}

CBConfig cb_config(const json& v, const Path& p) {
  Obj o(v, p);
  CBConfig cb;
  cb.cores = core_set(o.need("cores"), p.field("cores"));
  cb.total_bytes = o.u32("total_bytes");
  cb.indices = objects_of(&o.need("indices"), p.field("indices"), [](Obj& xo) {
    const Path& xp = xo.path();
    CBIndexDesc d;
    d.index = xo.u32("index");
    d.format = as_enum(xo.need("format"), xp.field("format"), kDataFormatNames);
    d.page_bytes = xo.u32("page_bytes");
    if (const json* t = xo.get("tile")) {
      auto [r, c] = u32_pair(*t, xp.field("tile"));
      d.tile_rows = r;
      d.tile_cols = c;
    }
    return d;
  });
  if (const json* b = o.get("buffer")) cb.buffer_param = as_u32(*b, p.field("buffer"));
  o.done();
  return cb;
}

ProgramDesc program(Obj& o) {
  const Path& p = o.path();
  ProgramDesc prog;
  prog.name = o.str_or("name", "program");
  prog.params = objects_of(o.get("params"), p.field("params"), [](Obj& po) {
    ParamDesc d;
    d.name = po.str("name");
    d.kind = as_enum(po.need("kind"), po.path().field("kind"), kParamKindNames);
    d.dtype = std::string(as_enum(po.need("dtype"), po.path().field("dtype"), kDTypes));
    return d;
  });
  prog.buffers = objects_of(o.get("buffers"), p.field("buffers"), [](Obj& bo) {
    BufferDecl d;
    d.param = bo.u32("param");
    d.spec = buffer_spec(bo);
    return d;
  });
  prog.include_files = objects_of(o.get("include_files"), p.field("include_files"), [](Obj& io) {
    IncludeFile f;
    f.path = io.str("path");
    f.source = source_of(io);
    return f;
  });
  prog.kernels = list_of(&o.need("kernels"), p.field("kernels"), kernel);
  prog.cbs = list_of(o.get("cbs"), p.field("cbs"), cb_config);
  prog.semaphores = objects_of(o.get("semaphores"), p.field("semaphores"), [](Obj& so) {
    SemaphoreDesc s;
    s.cores = core_set(so.need("cores"), so.path().field("cores"));
    s.id = so.u32("id");
    s.initial = so.u32_or("initial", 0);
    return s;
  });
  return prog;
}

}  // namespace

const char* cmd_name(Cmd c) {
  for (const auto& [name, k] : kCmds)
    if (k == c) return name.data();
  return "?";
}

std::string version_mismatch_message(uint64_t asked, uint64_t speaks) {
  std::string msg = "this runtime speaks protocol " + std::to_string(speaks) + "; the driver asked for protocol " +
                    std::to_string(asked) + ": ";
  if (asked < speaks)
    msg += "zyx-tt (the Go driver) is older than this runtime; rebuild zyx-tt from the same tree as the runtime (make build)";
  else
    msg += "the runtime is older than zyx-tt; rebuild the runtime (make runtime)";
  return msg;
}

Request parse_request(std::string_view line, uint64_t* id) {
  *id = 0;
  json doc = parse_json_line(line);
  if (!doc.is_object()) bad_request(std::string("request: must be a JSON object, got ") + type_name(doc));
  const auto& top = doc.get_ref<const json::object_t&>();
  Request req;
  {
    auto it = top.find("id");
    if (it == top.end() || it->second.is_null()) bad_request("request.id: missing field");
    if (!it->second.is_number_unsigned() || it->second.get<uint64_t>() == 0)
      bad_request(std::string("request.id: must be an unsigned integer other than 0, got ") + type_name(it->second));
    req.id = *id = it->second.get<uint64_t>();
  }
  {
    auto it = top.find("cmd");
    if (it == top.end() || it->second.is_null()) bad_request("request.cmd: missing field");
    if (!it->second.is_string()) bad_request(std::string("request.cmd: must be a string, got ") + type_name(it->second));
    const std::string& cmd = it->second.get_ref<const std::string&>();
    bool known = false;
    for (const auto& [name, c] : kCmds)
      if (cmd == name) {
        req.cmd = c;
        known = true;
      }
    if (!known) throw Error("unknown_command", "unknown command \"" + cmd + "\"");
  }
  Path root{nullptr, cmd_name(req.cmd)};
  Obj o(doc, root);
  o.get("id");
  o.get("cmd");
  if (const json* v = o.get("after")) {
    Path ap = root.field("after");
    const auto& a = as_array(*v, ap);
    if (a.size() > kMaxAfter)
      bad(ap, "names " + std::to_string(a.size()) + " requests; at most " + std::to_string(kMaxAfter));
    req.after.reserve(a.size());
    for (size_t i = 0; i < a.size(); i++) req.after.push_back(as_u64(a[i], ap.at(i)));
  }
  switch (req.cmd) {
    case Cmd::Ping:
    case Cmd::Exit:
      break;
    case Cmd::Init: {
      InitRequest r;
      r.protocol = o.u64("protocol");
      if (r.protocol != static_cast<uint64_t>(kProtocolVersion))
        throw Error("version_mismatch", version_mismatch_message(r.protocol));
      if (const json* v = o.get("layer")) r.layer = std::string(as_enum(*v, root.field("layer"), kLayers));
      r.chip = o.u64_or("chip", 0);
      r.board = o.str_or("board", "n150");
      r.cache_dir = o.str_or("cache_dir", "");
      r.dprint = o.boolean_or("dprint", false);
      req.body = std::move(r);
      break;
    }
    case Cmd::Map:
    case Cmd::Unmap:
      req.body = SegmentRequest{o.str("segment")};
      break;
    case Cmd::Alloc: {
      AllocRequest r;
      r.size = o.u64("size");
      r.spec = buffer_spec(o);
      req.body = std::move(r);
      break;
    }
    case Cmd::Free:
      req.body = IdRequest{o.u64("buffer")};
      break;
    case Cmd::Release:
      req.body = IdRequest{o.u64("program")};
      break;
    case Cmd::Write:
    case Cmd::Read: {
      TransferRequest r;
      r.buffer = o.u64("buffer");
      r.offset = o.u64_or("offset", 0);
      r.segment = o.str("segment");
      r.segment_offset = o.u64_or("segment_offset", 0);
      r.length = o.u64("length");
      req.body = std::move(r);
      break;
    }
    case Cmd::Compile:
      req.body = program(o);
      break;
    case Cmd::Run: {
      RunRequest r;
      r.program = o.u64("program");
      r.args = objects_of(o.get("args"), root.field("args"), [](Obj& ao) {
        const Path& ep = ao.path();
        const json* buf = ao.get("buffer");
        const json* val = ao.get("value");
        if (!buf == !val) bad(ep, "give exactly one of {\"buffer\": id} and {\"value\": bits}");
        RunArgRequest ra;
        ra.is_buffer = buf != nullptr;
        ra.value = buf ? as_u64(*buf, ep.field("buffer")) : as_u64(*val, ep.field("value"));
        return ra;
      });
      r.timed = o.boolean_or("timed", false);
      req.body = std::move(r);
      break;
    }
  }
  o.done();
  return req;
}

}  // namespace zyx
