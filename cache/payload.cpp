#include "cache/payload.h"

#include "cache/image_file.h"
#include "core/util/error.h"
#include "core/util/json.h"

namespace fusor::cache {

namespace {

constexpr std::string_view kRefTag = "fusor-image-ref 1\n";

std::map<std::string, int64_t> counts_from(const json::Value* v) {
  std::map<std::string, int64_t> m;
  if (!v || !v->is_object()) throw_bad_input("cache entry: malformed info");
  for (const auto& [k, x] : v->as_object()) m[k] = x.as_int();
  return m;
}

}  // namespace

std::string encode_facts(const SessionFacts& facts) {
  json::Value info = json::Value::object();
  info.set("rules_fired", json::Value(facts.rules_fired));
  info.set("nodes_before", facts.nodes_before);
  info.set("ops_before", json::Value(facts.ops_before));
  json::Value deps = json::Value::array();
  for (const auto& [path, hex] : facts.deps) {
    json::Value d = json::Value::array();
    d.push_back(path);
    d.push_back(hex);
    deps.push_back(std::move(d));
  }
  info.set("deps", std::move(deps));
  return info.dump();
}

SessionFacts decode_facts(const std::string& info) {
  SessionFacts f;
  json::Value v = json::parse(info);
  f.rules_fired = counts_from(v.find("rules_fired"));
  f.ops_before = counts_from(v.find("ops_before"));
  const json::Value* n = v.find("nodes_before");
  if (!n || !n->is_int()) throw_bad_input("cache entry: malformed info");
  f.nodes_before = n->as_int();
  if (const json::Value* deps = v.find("deps")) {
    if (!deps->is_array()) throw_bad_input("cache entry: malformed info");
    for (const json::Value& x : deps->as_array()) f.deps.emplace_back(x[0].as_string(), x[1].as_string());
  }
  return f;
}

std::string encode_image_ref(const ImageRef& ref) {
  return std::string(kRefTag) + ref.name + "\n" + std::to_string(ref.bytes) + "\n";
}

std::optional<ImageRef> decode_image_ref(std::string_view p) {
  if (p.substr(0, kRefTag.size()) != kRefTag) return std::nullopt;
  p.remove_prefix(kRefTag.size());
  size_t nl = p.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  ImageRef r;
  r.name = std::string(p.substr(0, nl));
  if (!is_image_name(r.name)) return std::nullopt;  // never a path: only a content name in the folder
  p.remove_prefix(nl + 1);
  size_t nl2 = p.find('\n');
  if (nl2 == std::string_view::npos || nl2 == 0 || nl2 + 1 != p.size()) return std::nullopt;
  uint64_t v = 0;
  for (char c : p.substr(0, nl2)) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  r.bytes = v;
  return r;
}

}  // namespace fusor::cache
