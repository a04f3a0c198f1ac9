#include "request.hpp"

#include <array>
#include <cstring>
#include <optional>
#include <tuple>
#include <type_traits>

#include "protocol_fields_gen.hpp"

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

// as_value reads a scalar field's value as the C++ type of its handle
// (a string handle reads as std::string, an enum's by its name table).
template <typename T>
auto as_value(const json& v, const Path& p) {
  if constexpr (std::is_same_v<T, uint64_t>) {
    return as_u64(v, p);
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    return as_u32(v, p);
  } else if constexpr (std::is_same_v<T, bool>) {
    return as_bool(v, p);
  } else if constexpr (std::is_same_v<T, std::string_view>) {
    return std::string(as_str(v, p));
  } else {
    static_assert(std::is_enum_v<T>);
    return as_enum(v, p, names_of(T{}));
  }
}

template <typename T>
using ValueOf = decltype(as_value<T>(std::declval<const json&>(), std::declval<const Path&>()));

// Obj reads the fields of one object of a message of the schema
// (protocol_fields_gen.hpp), each through the field's handle, in the
// message's order. Absent and null fields are the same. Reading the
// message's tag selects the variant: a field the variant does not take
// reads as absent, and is refused when given (with the field's own message,
// or by done() as an unknown field). done() refuses every field the
// message does not take and reports a field it takes that nobody read as
// internal (this parser lags the schema).
class Obj {
 public:
  Obj(const json& v, const Path& p, const proto::MessageSpec& m) : p_(p), m_(m) {
    if (!v.is_object()) bad(p, std::string("must be an object, got ") + type_name(v));
    obj_ = &v.get_ref<const json::object_t&>();
  }

  const Path& path() const { return p_; }
  Path at(const proto::RawField& f) const { return p_.field(f.spec->name); }

  // get returns the field, or nullptr when it is absent, null or not taken
  // by the variant; a missing required field is an error.
  const json* get(const proto::FieldSpec& f) {
    const uint64_t bit = uint64_t{1} << index_of(f);
    const bool taken = (f.variants & variant_) != 0;
    if (!taken && f.refused.empty()) return nullptr;  // an unknown field here: done() says so
    auto it = obj_->find(f.name);
    if (!(read_ & bit)) {
      read_ |= bit;
      if (it != obj_->end()) found_++;
    }
    const json* v = it == obj_->end() || it->second.is_null() ? nullptr : &it->second;
    if (!taken) {
      if (v) bad(p_.field(f.name), std::string(f.refused));
      return nullptr;
    }
    if (!v && f.required)
      bad(p_.field(f.name), f.missing.empty() ? std::string("missing field") : "missing field (" + std::string(f.missing) + ")");
    return v;
  }
  const json* get(const proto::RawField& f) { return get(*f.spec); }
  // need is get for a field the reader cannot do without.
  const json& need(const proto::RawField& f) {
    const json* v = get(f);
    if (!v) bad(at(f), "missing field");
    return *v;
  }

  template <typename T>
  ValueOf<T> read(const proto::Field<T>& f) {
    const json* v = get(*f.spec);
    ValueOf<T> out = v ? as_value<T>(*v, p_.field(f.spec->name)) : ValueOf<T>(f.fallback);
    if constexpr (std::is_enum_v<T>)
      if (m_.tag >= 0 && m_.fields[m_.tag] == f.spec) variant_ = proto::variants(out);
    return out;
  }
  template <typename T>
  std::optional<ValueOf<T>> read(const proto::OptField<T>& f) {
    const json* v = get(*f.spec);
    if (!v) return std::nullopt;
    return as_value<T>(*v, p_.field(f.spec->name));
  }

  void done() {
    if (found_ == obj_->size()) return;
    for (const auto& [key, _] : *obj_) {
      int i = index_of_name(key);
      if (i >= 0 && (read_ >> i & 1)) continue;
      if (i >= 0 && takes(*m_.fields[i]))
        throw Error("internal", p_.field(key).str() + ": the runtime does not read this field of " +
                                    std::string(m_.name) + " (cpp/src/request.cpp lags protocol/protocol.json)");
      std::string list;
      for (const proto::FieldSpec* f : m_.fields) {
        if (!takes(*f)) continue;
        if (!list.empty()) list += ", ";
        list.append(f->name);
      }
      bad(p_.field(key), "unknown field (this object takes: " + list + ")");
    }
  }

 private:
  // takes: the variant takes the field, or refuses it with a message of
  // its own (so it is no unknown field).
  bool takes(const proto::FieldSpec& f) const { return (f.variants & variant_) != 0 || !f.refused.empty(); }
  unsigned index_of(const proto::FieldSpec& f) const {
    for (size_t i = 0; i < m_.fields.size(); i++)
      if (m_.fields[i] == &f) return static_cast<unsigned>(i);
    throw Error("internal", p_.str() + ": the parser reads field " + std::string(f.name) + ", which " +
                                std::string(m_.name) + " does not have");
  }
  int index_of_name(std::string_view key) const {
    for (size_t i = 0; i < m_.fields.size(); i++)
      if (m_.fields[i]->name == key) return static_cast<int>(i);
    return -1;
  }

  const json::object_t* obj_ = nullptr;
  const Path& p_;
  const proto::MessageSpec& m_;
  uint64_t variant_ = proto::kAllVariants;
  uint64_t read_ = 0;
  size_t found_ = 0;
};

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

CoreRangeSet core_set(Obj& o, const proto::RawField& f) { return core_set(o.need(f), o.at(f)); }

// source_of reads a pair of fields of which exactly one is given: the text,
// or base64 of any bytes.
std::string source_of(Obj& o, const proto::OptField<std::string_view>& text_f,
                      const proto::OptField<std::string_view>& b64_f) {
  const json* text = o.get(*text_f.spec);
  const json* b64 = o.get(*b64_f.spec);
  Path tp = o.path().field(text_f.spec->name), bp = o.path().field(b64_f.spec->name);
  if (!text == !b64)
    bad(tp, "give exactly one of " + std::string(text_f.spec->name) + " and " + std::string(b64_f.spec->name));
  if (text) return as_str(*text, tp);
  auto bytes = decode_base64(as_str(*b64, bp), bp.str());
  return std::string(bytes.begin(), bytes.end());
}

// objects_of reads the array field f of o (absent: empty), each element an
// object of f's element message that item(Obj&) reads; a field it left
// unread is an error (Obj::done).
template <typename F>
auto objects_of(Obj& o, const proto::RawField& f, F item) {
  std::vector<decltype(item(std::declval<Obj&>()))> out;
  const json* v = o.get(f);
  if (!v) return out;
  Path p = o.at(f);
  const auto& a = as_array(*v, p);
  out.reserve(a.size());
  for (size_t i = 0; i < a.size(); i++) {
    Path ep = p.at(i);
    Obj eo(a[i], ep, *f.element);
    out.push_back(item(eo));
    eo.done();
  }
  return out;
}

ArgEntry arg_entry(Obj& o) {
  namespace a = proto::arg_entry;
  ArgEntry e;
  e.kind = o.read(a::kind);  // the fields below are those the kind takes
  e.value = o.read(a::value);
  e.param = o.read(a::param);
  e.page = o.read(a::page);
  if (const json* c = o.get(a::core)) e.core = core_coord(*c, o.at(a::core));
  if (e.kind == ArgKind::SemaphoreAddr) e.value = o.read(a::semaphore);
  return e;
}

std::vector<ArgEntry> arg_list(Obj& o, const proto::RawField& f) { return objects_of(o, f, arg_entry); }

// The fields of a buffer spec, as alloc and compile.buffers share them.
BufferSpec buffer_spec(Obj& o) {
  namespace b = proto::buffer_spec;
  BufferSpec s;
  s.page_size = o.read(b::page_size);
  s.placement = o.read(b::placement);
  s.layout = o.read(b::layout);
  const json* shard = o.get(b::shard);  // given exactly when the layout is sharded
  if (!shard) return s;
  namespace sf = proto::shard_spec;
  Path sp = o.at(b::shard);
  Obj so(*shard, sp, *b::shard.element);
  ShardSpec sh;
  sh.cores = core_set(so, sf::cores);
  auto shape = u32_pair(so.need(sf::shape), so.at(sf::shape));
  auto tensor = u32_pair(so.need(sf::tensor), so.at(sf::tensor));
  sh.shape[0] = shape.first;
  sh.shape[1] = shape.second;
  sh.tensor[0] = tensor.first;
  sh.tensor[1] = tensor.second;
  sh.orientation = so.read(sf::orientation);
  so.done();
  s.shard = std::move(sh);
  return s;
}

ComputeConfig compute_config(Obj& o) {
  namespace c = proto::compute_config;
  ComputeConfig cc;
  cc.math_fidelity = o.read(c::math_fidelity);
  cc.fp32_dest_acc = o.read(c::fp32_dest_acc);
  cc.math_approx_mode = o.read(c::math_approx_mode);
  cc.bfp8_pack_precise = o.read(c::bfp8_pack_precise);
  cc.dst_full_sync = o.read(c::dst_full_sync);
  if (const json* v = o.get(c::unpack_to_dest_fp32)) {
    Path p = o.at(c::unpack_to_dest_fp32);
    const auto& a = as_array(*v, p);
    for (size_t i = 0; i < a.size(); i++) cc.unpack_to_dest_fp32.push_back(as_u32(a[i], p.at(i)));
  }
  return cc;
}

// The object-of-strings field f of o (absent: empty).
std::map<std::string, std::string> string_map(Obj& o, const proto::RawField& f) {
  std::map<std::string, std::string> out;
  const json* v = o.get(f);
  if (!v) return out;
  Path p = o.at(f);
  if (!v->is_object()) bad(p, std::string("must be an object of strings, got ") + type_name(*v));
  for (const auto& [key, val] : v->get_ref<const json::object_t&>()) out[key] = as_str(val, p.field(key));
  return out;
}

// The list-of-strings field f of o (absent: empty).
std::vector<std::string> string_list(Obj& o, const proto::RawField& f) {
  std::vector<std::string> out;
  const json* v = o.get(f);
  if (!v) return out;
  Path p = o.at(f);
  const auto& a = as_array(*v, p);
  for (size_t i = 0; i < a.size(); i++) out.push_back(as_str(a[i], p.at(i)));
  return out;
}

// A kernel's Metal 2.0 names and bindings (resolved later, lower_bindings).
KernelBindings kernel_bindings(Obj& o) {
  namespace k = proto::kernel;
  KernelBindings b;
  b.metal2 = o.read(k::metal2);
  b.runtime_arg_names = string_list(o, k::named_runtime_args);
  b.common_arg_names = string_list(o, k::named_common_args);
  b.dfbs = string_map(o, k::dfbs);
  b.semaphores = string_map(o, k::semaphore_bindings);
  b.tensors = string_map(o, k::tensors);
  return b;
}

KernelDesc kernel(Obj& o) {
  namespace k = proto::kernel;
  KernelDesc d;
  std::optional<std::string> name = o.read(k::name);
  d.processor = o.read(k::processor);  // selects the fields below (noc, compute_config)
  d.name = name ? *name : std::string(processor_name(d.processor));
  // riscv_0 uses NOC 0, riscv_1 NOC 1 unless the kernel says; compute none
  d.noc = o.read(k::noc).value_or(d.processor == Processor::Riscv1 ? 1 : 0);
  d.cores = core_set(o, k::cores);
  d.source = source_of(o, k::source, k::source_b64);
  d.path = o.read(k::path).value_or("");
  d.defines = string_map(o, k::defines);
  d.compile_args = arg_list(o, k::compile_args);
  if (const json* v = o.get(k::named_compile_args)) {
    Path np = o.at(k::named_compile_args);
    if (!v->is_object()) bad(np, std::string("must be an object of arg entries, got ") + type_name(*v));
    const auto& obj = v->get_ref<const json::object_t&>();
    d.named_compile_args.reserve(obj.size());
    for (const auto& [key, val] : obj) {
      Path ep = np.field(key);
      Obj eo(val, ep, *k::named_compile_args.element);
      d.named_compile_args.emplace_back(key, arg_entry(eo));
      eo.done();
    }
  }
  d.common_args = arg_list(o, k::common_args);
  d.bindings = kernel_bindings(o);
  d.runtime_args = objects_of(o, k::runtime_args, [](Obj& eo) {
    CoreArgs ca;
    ca.cores = core_set(eo, proto::core_args::cores);
    ca.args = arg_list(eo, proto::core_args::args);
    return ca;
  });
  if (const json* v = o.get(k::compute_config)) {
    Path cp = o.at(k::compute_config);
    Obj co(*v, cp, *k::compute_config.element);
    d.compute = compute_config(co);
    co.done();
  }
  return d;
}

CBConfig cb_config(Obj& o) {
  namespace c = proto::cb_config;
  CBConfig cb;
  cb.cores = core_set(o, c::cores);
  cb.total_bytes = o.read(c::total_bytes);
  cb.indices = objects_of(o, c::indices, [](Obj& xo) {
    namespace x = proto::cb_index;
    CBIndexDesc d;
    d.index = xo.read(x::index);
    d.format = xo.read(x::format);
    d.page_bytes = xo.read(x::page_bytes);
    if (const json* t = xo.get(x::tile)) std::tie(d.tile_rows, d.tile_cols) = u32_pair(*t, xo.at(x::tile));
    d.name = xo.read(x::name).value_or("");
    return d;
  });
  if (auto b = o.read(c::buffer)) cb.buffer_param = *b;
  return cb;
}

ProgramDesc program(Obj& o) {
  namespace c = proto::compile_request;
  ProgramDesc prog;
  prog.name = o.read(c::name);
  prog.params = objects_of(o, c::params, [](Obj& po) {
    namespace pd = proto::param_desc;
    ParamDesc d;
    d.name = po.read(pd::name);
    d.kind = po.read(pd::kind);
    d.dtype = name_in(kDTypeNames, po.read(pd::dtype), "");
    return d;
  });
  prog.buffers = objects_of(o, c::buffers, [](Obj& bo) {
    BufferDecl d;
    d.param = bo.read(proto::buffer_decl::param);
    d.spec = buffer_spec(bo);
    return d;
  });
  prog.include_files = objects_of(o, c::include_files, [](Obj& io) {
    namespace i = proto::include_file;
    IncludeFile f;
    f.path = io.read(i::path);
    f.source = source_of(io, i::source, i::source_b64);
    return f;
  });
  prog.kernels = objects_of(o, c::kernels, kernel);
  prog.cbs = objects_of(o, c::cbs, cb_config);
  prog.semaphores = objects_of(o, c::semaphores, [](Obj& so) {
    namespace sm = proto::semaphore;
    SemaphoreDesc s;
    s.cores = core_set(so, sm::cores);
    s.id = so.read(sm::id);
    s.initial = so.read(sm::initial);
    s.name = so.read(sm::name).value_or("");
    return s;
  });
  return prog;
}

RunRequest run_request(Obj& o) {
  namespace r = proto::run_request;
  RunRequest req;
  req.program = o.read(r::program);
  req.args = objects_of(o, r::args, [](Obj& ao) {
    namespace a = proto::run_arg;
    const json* buf = ao.get(*a::buffer.spec);
    const json* val = ao.get(*a::value.spec);
    if (!buf == !val) bad(ao.path(), "give exactly one of {\"buffer\": id} and {\"value\": bits}");
    const auto& given = buf ? a::buffer : a::value;
    return RunArgRequest{buf != nullptr, as_u64(buf ? *buf : *val, ao.path().field(given.spec->name))};
  });
  req.timed = o.read(r::timed);
  return req;
}

}  // namespace

const char* cmd_name(Cmd c) { return name_in(kCmdNames, c, "?"); }

std::string version_mismatch_message(uint64_t asked, uint64_t speaks) {
  std::string msg = "this runtime speaks protocol " + std::to_string(speaks) + "; the driver asked for protocol " +
                    std::to_string(asked) + ": ";
  if (asked < speaks)
    msg += "zyx-tt (the Go driver) is older than this runtime; rebuild zyx-tt from the same tree as the runtime (make build)";
  else
    msg += "the runtime is older than zyx-tt; rebuild the runtime (make runtime)";
  return msg;
}

namespace {

// header reads the request's id and cmd, which every error reply after it
// can name.
void header(const json::object_t& top, Request& req, uint64_t* id) {
  {
    auto it = top.find("id");
    if (it == top.end() || it->second.is_null()) bad_request("request.id: missing field");
    if (!it->second.is_number_unsigned() || it->second.get<uint64_t>() == 0)
      bad_request(std::string("request.id: must be an unsigned integer other than 0, got ") + type_name(it->second));
    req.id = *id = it->second.get<uint64_t>();
  }
  auto it = top.find("cmd");
  if (it == top.end() || it->second.is_null()) bad_request("request.cmd: missing field");
  if (!it->second.is_string()) bad_request(std::string("request.cmd: must be a string, got ") + type_name(it->second));
  const std::string& cmd = it->second.get_ref<const std::string&>();
  for (const auto& [name, c] : kCmdNames)
    if (cmd == name) {
      req.cmd = c;
      return;
    }
  throw Error("unknown_command", "unknown command \"" + cmd + "\"");
}

// body reads the command's own fields.
void body(Obj& o, Request& req) {
  switch (req.cmd) {
    case Cmd::Ping:
    case Cmd::Exit:
      break;
    case Cmd::Init: {
      namespace i = proto::init_request;
      InitRequest r;
      r.protocol = o.read(i::protocol);
      if (r.protocol != static_cast<uint64_t>(kProtocolVersion))
        throw Error("version_mismatch", version_mismatch_message(r.protocol));
      r.layer = name_in(kLayerNames, o.read(i::layer), "auto");
      r.chip = o.read(i::chip);
      r.board = o.read(i::board);
      r.cache_dir = o.read(i::cache_dir).value_or("");
      r.dprint = o.read(i::dprint);
      req.body = std::move(r);
      break;
    }
    case Cmd::Map:
    case Cmd::Unmap:
      req.body = SegmentRequest{o.read(proto::segment_request::segment)};
      break;
    case Cmd::Alloc: {
      AllocRequest r;
      r.size = o.read(proto::alloc_request::size);
      r.spec = buffer_spec(o);
      req.body = std::move(r);
      break;
    }
    case Cmd::Free:
      req.body = IdRequest{o.read(proto::buffer_request::buffer)};
      break;
    case Cmd::Release:
      req.body = IdRequest{o.read(proto::program_request::program)};
      break;
    case Cmd::Write:
    case Cmd::Read: {
      namespace t = proto::transfer_request;
      TransferRequest r;
      r.buffer = o.read(t::buffer);
      r.offset = o.read(t::offset);
      r.segment = o.read(t::segment);
      r.segment_offset = o.read(t::segment_offset);
      r.length = o.read(t::length);
      req.body = std::move(r);
      break;
    }
    case Cmd::Compile:
      req.body = program(o);
      break;
    case Cmd::Run:
      req.body = run_request(o);
      break;
  }
}

}  // namespace

Request parse_request(std::string_view line, uint64_t* id) {
  *id = 0;
  json doc = parse_json_line(line);
  if (!doc.is_object()) bad_request(std::string("request: must be a JSON object, got ") + type_name(doc));
  Request req;
  header(doc.get_ref<const json::object_t&>(), req, id);
  Path root{nullptr, cmd_name(req.cmd)};
  Obj o(doc, root, proto::command_message(req.cmd));
  o.get(*proto::request_header::id.spec);  // read above
  o.get(*proto::request_header::cmd.spec);
  if (const json* v = o.get(proto::request_header::after)) {
    Path ap = o.at(proto::request_header::after);
    const auto& a = as_array(*v, ap);
    if (a.size() > kMaxAfter)
      bad(ap, "names " + std::to_string(a.size()) + " requests; at most " + std::to_string(kMaxAfter));
    req.after.reserve(a.size());
    for (size_t i = 0; i < a.size(); i++) req.after.push_back(as_u64(a[i], ap.at(i)));
  }
  body(o, req);
  o.done();
  return req;
}

}  // namespace zyx
