#include "cache/payload.h"

#include <onnx/onnx_pb.h>

#include "core/util/error.h"
#include "core/onnx/export_graph.h"
#include "core/onnx/onnx_io.h"
#include "core/util/json.h"

namespace fusor::cache {

namespace {

std::map<std::string, int64_t> counts_from(const json::Value* v) {
  std::map<std::string, int64_t> m;
  if (!v || !v->is_object()) throw_bad_input("cache entry: malformed info");
  for (const auto& [k, x] : v->as_object()) m[k] = x.as_int();
  return m;
}

}  // namespace

Encoded encode_entry(const Model& model, const SessionFacts& facts) {
  Encoded e;
  onnx::ModelProto mp;
  ProtoExportOptions opts;
  opts.value_info = true;
  model_to_proto(model, &mp, opts);
  if (!mp.SerializeToString(&e.payload)) throw_bad_input("cache: the optimized model cannot be serialized");
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
  e.info = info.dump();
  return e;
}

Decoded decode_entry(const std::string& info, std::string payload, const std::string& name) {
  Decoded d;
  json::Value v = json::parse(info);
  d.facts.rules_fired = counts_from(v.find("rules_fired"));
  d.facts.ops_before = counts_from(v.find("ops_before"));
  const json::Value* n = v.find("nodes_before");
  if (!n || !n->is_int()) throw_bad_input("cache entry: malformed info");
  d.facts.nodes_before = n->as_int();
  if (const json::Value* deps = v.find("deps")) {
    if (!deps->is_array()) throw_bad_input("cache entry: malformed info");
    for (const json::Value& x : deps->as_array()) d.facts.deps.emplace_back(x[0].as_string(), x[1].as_string());
  }
  LoadOptions load;
  load.infer_shapes = false;  // value_info carries every type the miss inferred
  d.model = load_model_from_bytes(std::move(payload), load, name);
  d.model->path = name;
  return d;
}

}  // namespace fusor::cache
