// infer_shapes(Model&): shape inference after rewrites, read back into the IR.
#include "core/onnx/shape_inference.h"

#include <unordered_map>

#include "core/onnx/export_graph.h"
#include "core/onnx/onnx_io.h"
#include "core/onnx/overrides.h"
#include "core/onnx/type_proto.h"

namespace fusor {

namespace {

// The inferred type, except that what inference leaves unknown keeps the current knowledge.
ValueType merge_types(const ValueType& cur, ValueType inferred) {
  if (!inferred.is_tensor() || !cur.is_tensor()) return inferred;
  if (cur.elem != inferred.elem && inferred.elem != DataType::Undefined) return inferred;
  if (inferred.elem == DataType::Undefined) inferred.elem = cur.elem;
  if (!inferred.has_shape) return cur.elem == inferred.elem ? cur : inferred;
  if (cur.has_shape && cur.dims.size() == inferred.dims.size())
    for (size_t i = 0; i < cur.dims.size(); ++i)
      if (!inferred.dims[i].is_known() && inferred.dims[i].param.empty()) inferred.dims[i] = cur.dims[i];
  return inferred;
}

void read_back(Graph& g, const onnx::GraphProto& gp) {
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  for (const auto& vi : gp.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : gp.output()) types.emplace(vi.name(), &vi.type());
  for (size_t i = 0; i < g.value_capacity(); ++i) {
    Value& v = g.value(static_cast<ValueId>(i));
    if (!v.alive || v.producer == kNoNode) continue;
    auto it = types.find(v.name);
    if (it == types.end() || !type_proto_is_informative(*it->second)) continue;
    v.type = merge_types(v.type, value_type_from_proto(*it->second));
  }
  int i = 0;
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id), ++i) {
    if (i >= gp.node_size()) return;
    Node& n = g.node(id);
    const auto& np = gp.node(i);
    if (np.attribute_size() != static_cast<int>(n.attrs.size())) continue;
    for (size_t k = 0; k < n.attrs.size(); ++k) {
      const auto& ap = np.attribute(static_cast<int>(k));
      std::vector<std::pair<Graph*, const onnx::GraphProto*>> subs;
      if (n.attrs[k].kind == AttrKind::Graph && n.attrs[k].g) subs.push_back({n.attrs[k].g.get(), &ap.g()});
      if (n.attrs[k].kind == AttrKind::Graphs)
        for (size_t j = 0; j < n.attrs[k].graphs.size() && static_cast<int>(j) < ap.graphs_size(); ++j)
          subs.push_back({n.attrs[k].graphs[j].get(), &ap.graphs(static_cast<int>(j))});
      for (auto [sg, sgp] : subs) {
        for (ValueId c : sg->captures()) sg->value(c).type = g.value(sg->value(c).captured_from).type;
        read_back(*sg, *sgp);
      }
    }
  }
}

}  // namespace

void infer_shapes(Model& model, const ShapeOverrides& overrides) {
  apply_overrides(*model.graph, overrides);
  ProtoExportOptions o;
  o.main_initializers = ProtoExportOptions::MainInitializers::ForInference;
  onnx::ModelProto mp;
  model_to_proto(model, &mp, o);
  run_onnx_shape_inference(mp);
  read_back(*model.graph, mp.graph());
}

}  // namespace fusor
