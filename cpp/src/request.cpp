#include "request.hpp"

#include <array>
#include <set>

namespace zyx {

void bad_request(const std::string& msg) { throw Error("bad_request", msg); }

json parse_request(std::string_view line) {
  json::parser_callback_t limit_depth = [](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) bad_request("request nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return true;
  };
  try {
    return json::parse(line.begin(), line.end(), limit_depth);
  } catch (const json::exception& e) {
    bad_request(std::string("malformed JSON: ") + e.what());
  }
}

namespace {

const char* type_name(const json& v) {
  if (v.is_number_unsigned()) return "unsigned integer";
  if (v.is_number_integer()) return "negative integer";
  if (v.is_number_float()) return "number with a fraction or exponent";
  return v.type_name();
}

}  // namespace

Fields::Fields(const json& obj, std::string where) : obj_(obj), where_(std::move(where)) {
  if (!obj_.is_object()) bad_request(where_ + " must be an object, got " + type_name(obj_));
}

bool Fields::has(const char* key) const {
  auto it = obj_.find(key);
  return it != obj_.end() && !it->is_null();
}

const json& Fields::get(const char* key) const {
  auto it = obj_.find(key);
  if (it == obj_.end() || it->is_null()) bad_request("missing field " + name(key));
  return *it;
}

uint64_t Fields::u64(const char* key) const {
  const json& v = get(key);
  if (!v.is_number_unsigned())
    bad_request(name(key) + " must be an unsigned integer, got " + std::string(type_name(v)));
  return v.get<uint64_t>();
}

uint64_t Fields::u64_or(const char* key, uint64_t def) const { return has(key) ? u64(key) : def; }

uint32_t Fields::u32(const char* key) const {
  uint64_t v = u64(key);
  if (v > UINT32_MAX) bad_request(name(key) + " is " + std::to_string(v) + ", past 32 bits");
  return static_cast<uint32_t>(v);
}

int64_t Fields::i64_or(const char* key, int64_t def) const {
  if (!has(key)) return def;
  const json& v = get(key);
  if (!v.is_number_integer()) bad_request(name(key) + " must be an integer, got " + std::string(type_name(v)));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    bad_request(name(key) + " is out of range");
  return v.get<int64_t>();
}

std::string Fields::str(const char* key) const {
  const json& v = get(key);
  if (!v.is_string()) bad_request(name(key) + " must be a string, got " + std::string(type_name(v)));
  return v.get<std::string>();
}

std::string Fields::str_or(const char* key, std::string def) const { return has(key) ? str(key) : def; }

bool Fields::boolean_or(const char* key, bool def) const {
  if (!has(key)) return def;
  const json& v = get(key);
  if (!v.is_boolean()) bad_request(name(key) + " must be true or false, got " + std::string(type_name(v)));
  return v.get<bool>();
}

const json& Fields::object(const char* key) const {
  const json& v = get(key);
  if (!v.is_object()) bad_request(name(key) + " must be an object, got " + std::string(type_name(v)));
  return v;
}

const json& Fields::array(const char* key) const {
  const json& v = get(key);
  if (!v.is_array()) bad_request(name(key) + " must be an array, got " + std::string(type_name(v)));
  return v;
}

const json* Fields::array_or_null(const char* key) const { return has(key) ? &array(key) : nullptr; }

std::vector<uint8_t> decode_base64(std::string_view in) {
  static const std::array<int8_t, 256> table = [] {
    std::array<int8_t, 256> t{};
    t.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; i++) t[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
    return t;
  }();
  while (!in.empty() && in.back() == '=') in.remove_suffix(1);
  if (in.size() % 4 == 1) bad_request("source_b64 is not valid base64 (its length is wrong)");
  std::vector<uint8_t> out;
  out.reserve(in.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : in) {
    int v = table[c];
    if (v < 0) bad_request("source_b64 is not valid base64 (it holds a character outside the alphabet)");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
    }
  }
  return out;
}

namespace {

const std::set<std::string> kParamKinds = {"global", "global_mut", "variable"};
const std::set<std::string> kFormats = {"Float32", "Float16_b", "Float16", "Int32", "UInt32", "UInt16", "UInt8"};
const std::set<std::string> kFidelities = {"LoFi", "HiFi2", "HiFi3", "HiFi4"};
const std::set<std::string> kBufferKinds = {"buffer_addr", "buffer_size", "buffer_pages", "page_size", "accessor"};
const std::set<std::string> kPlainKinds = {"core_row", "core_col", "core_index", "num_cores"};

std::vector<LayoutEntry> parse_layout(const Fields& section, const char* key, const std::vector<ParamDesc>& params) {
  std::vector<LayoutEntry> out;
  const json* arr = section.array_or_null(key);
  if (!arr) return out;
  out.reserve(arr->size());
  for (size_t i = 0; i < arr->size(); i++) {
    Fields f((*arr)[i], section.name(key) + "[" + std::to_string(i) + "]");
    LayoutEntry e;
    e.kind = f.str("kind");
    if (e.kind == "const") {
      e.value = f.u32("value");
    } else if (e.kind == "param" || kBufferKinds.count(e.kind)) {
      uint64_t p = f.u64("param");
      if (p >= params.size())
        bad_request(f.name("param") + " is " + std::to_string(p) + ", but the program has " +
                    std::to_string(params.size()) + " params");
      e.param = static_cast<uint32_t>(p);
      bool want_buffer = e.kind != "param";
      if (params[p].is_buffer() != want_buffer)
        bad_request(f.name("param") + " names param " + std::to_string(p) + " (" + params[p].name + ", " +
                    params[p].kind + "), but kind " + e.kind + " needs a " +
                    (want_buffer ? "buffer (global or global_mut)" : "variable") + " param");
    } else if (!kPlainKinds.count(e.kind)) {
      bad_request(f.name("kind") + " \"" + e.kind + "\" is not a layout entry kind");
    }
    out.push_back(std::move(e));
  }
  return out;
}

Section parse_section(const Fields& req, const char* key, const std::vector<ParamDesc>& params) {
  Fields f(req.object(key), req.name(key));
  Section s;
  bool text = f.has("source"), b64 = f.has("source_b64");
  if (text == b64) bad_request(f.name("source") + ": give exactly one of source and source_b64");
  if (text) {
    s.source = f.str("source");
  } else {
    auto bytes = decode_base64(f.str("source_b64"));
    s.source.assign(bytes.begin(), bytes.end());
  }
  if (f.has("defines")) {
    const json& defs = f.object("defines");
    for (auto it = defs.begin(); it != defs.end(); ++it) {
      if (!it->is_string()) bad_request(f.name("defines") + "." + it.key() + " must be a string");
      s.defines[it.key()] = it->get<std::string>();
    }
  }
  s.compile_args = parse_layout(f, "compile_args", params);
  s.runtime_args = parse_layout(f, "runtime_args", params);
  s.common_args = parse_layout(f, "common_args", params);
  return s;
}

}  // namespace

ProgramDesc parse_program(const json& req) {
  Fields f(req, "compile");
  ProgramDesc p;
  p.name = f.str_or("name", "program");
  const json& params = f.array("params");
  for (size_t i = 0; i < params.size(); i++) {
    Fields pf(params[i], "compile.params[" + std::to_string(i) + "]");
    ParamDesc d{pf.str("name"), pf.str("kind"), pf.str("dtype")};
    if (!kParamKinds.count(d.kind))
      bad_request(pf.name("kind") + " \"" + d.kind + "\" is not global, global_mut or variable");
    p.params.push_back(std::move(d));
  }
  p.reader = parse_section(f, "reader", p.params);
  p.compute = parse_section(f, "compute", p.params);
  p.writer = parse_section(f, "writer", p.params);

  if (const json* cbs = f.array_or_null("cbs")) {
    if (cbs->size() > 32) bad_request("compile.cbs has " + std::to_string(cbs->size()) + " entries; at most 32");
    uint32_t seen = 0;
    for (size_t i = 0; i < cbs->size(); i++) {
      Fields cf((*cbs)[i], "compile.cbs[" + std::to_string(i) + "]");
      CBConfig cb;
      uint64_t index = cf.u64("index");
      if (index > 31) bad_request(cf.name("index") + " is " + std::to_string(index) + "; indices are 0-31");
      if (seen & (1u << index)) bad_request(cf.name("index") + ": circular buffer " + std::to_string(index) + " is given twice");
      seen |= 1u << index;
      cb.index = static_cast<uint32_t>(index);
      cb.format = cf.str("format");
      if (!kFormats.count(cb.format)) bad_request(cf.name("format") + " \"" + cb.format + "\" is not a known data format");
      cb.page_bytes = cf.u32("page_bytes");
      cb.pages = cf.u32("pages");
      if (cb.page_bytes == 0 || cb.pages == 0) bad_request("compile.cbs[" + std::to_string(i) + "]: page_bytes and pages must be > 0");
      p.cbs.push_back(std::move(cb));
    }
  }
  if (f.has("compute_config")) {
    Fields cc(f.object("compute_config"), "compile.compute_config");
    p.math_fidelity = cc.str_or("math_fidelity", "HiFi4");
    if (!kFidelities.count(p.math_fidelity))
      bad_request(cc.name("math_fidelity") + " \"" + p.math_fidelity + "\" is not LoFi, HiFi2, HiFi3 or HiFi4");
    p.fp32_dest_acc = cc.boolean_or("fp32_dest_acc", false);
    p.math_approx_mode = cc.boolean_or("math_approx_mode", false);
  }
  return p;
}

std::vector<LayoutEntry> buffer_word_entries(const ProgramDesc& p) {
  std::vector<LayoutEntry> out;
  for (const Section* s : {&p.reader, &p.compute, &p.writer})
    for (const auto* layout : {&s->compile_args, &s->runtime_args, &s->common_args})
      for (const auto& e : *layout)
        if (e.kind == "buffer_addr" || e.kind == "buffer_size" || e.kind == "buffer_pages" || e.kind == "page_size")
          out.push_back(e);
  return out;
}

}  // namespace zyx
