// Small graph and rule builders for the rewrite tests.
#pragma once
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "engine/rewrite/infer.h"
#include "core/pattern/rule.h"

namespace fusor::test {

inline OpType op(const char* n) { return OpType::onnx(n); }

struct GB {
  Graph g;
  int64_t opset = 17;
  GB() { g.name = "main"; }
  ValueId input(const std::string& name, Shape shape, DataType dt = DataType::Float) {
    ValueId v = g.add_value(name, ValueType::tensor(dt, shape));
    g.add_input(v);
    return v;
  }
  ValueId init(const std::string& name, Tensor t) { return g.add_initializer(name, std::move(t)); }
  ValueId scalar(const std::string& name, float v) { return init(name, Tensor::scalar<float>(v)); }
  ValueId vec(const std::string& name, std::vector<float> v) {
    return init(name, Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v));
  }
  ValueId ivec(const std::string& name, std::vector<int64_t> v) {
    return init(name, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  // One node; its outputs are named after the node ("name", "name:1", ...); types inferred.
  std::vector<ValueId> nodes(const char* o, std::vector<ValueId> in, const std::string& name, int outs,
                             std::vector<Attribute> attrs = {}) {
    std::vector<ValueId> out;
    for (int i = 0; i < outs; ++i) out.push_back(g.add_value(i ? name + ":" + std::to_string(i) : name));
    NodeId id = g.add_node(op(o), in, out, std::move(attrs), name);
    infer_node_types(g, id, opset);
    return out;
  }
  ValueId node(const char* o, std::vector<ValueId> in, const std::string& name, std::vector<Attribute> attrs = {}) {
    return nodes(o, std::move(in), name, 1, std::move(attrs))[0];
  }
  void output(ValueId v) { g.add_output(v); }

  int count(const char* o) const {
    int n = 0;
    for (NodeId id : g.order()) n += g.node(id).op == op(o);
    return n;
  }
  NodeId find(const std::string& name) const {
    for (NodeId id : g.order())
      if (g.node(id).name == name) return id;
    return kNoNode;
  }
  const Node& producer(ValueId v) const { return g.node(g.value(v).producer); }
  const Node& producer_of(const std::string& value_name) const {
    return g.node(g.value(g.find_value(value_name)).producer);
  }
  // "Op(in, in) -> out; ..." in order: compares graphs in tests.
  std::string dump() const {
    std::string s;
    for (NodeId id : g.order()) {
      const Node& n = g.node(id);
      s += n.name + "=" + n.op.qualified() + "(";
      for (ValueId v : n.inputs) s += (v == kNoValue ? std::string("-") : g.value(v).name) + ",";
      s += ")->";
      for (ValueId v : n.outputs) s += (v == kNoValue ? std::string("-") : g.value(v).name) + ",";
      for (const Attribute& a : n.attrs) s += " " + a.name;
      s += ";";
    }
    for (ValueId v : g.initializers()) s += " init:" + g.value(v).name;
    return s;
  }
};

// A rule with one pattern and rewrite, built by the test.
inline Rule make_rule(const std::string& name, int line = 1) {
  Rule r;
  r.name = name;
  r.file = "test.rules";
  r.line = line;
  return r;
}

}  // namespace fusor::test
