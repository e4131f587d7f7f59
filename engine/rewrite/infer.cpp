#include "engine/rewrite/infer.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "core/onnx/fusor_schemas.h"
#include "core/onnx/tensor_proto.h"
#include "engine/rewrite/graph_util.h"

namespace fusor {

namespace {

void type_to_proto(const ValueType& t, onnx::TypeProto* tp) {
  auto* tt = tp->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(t.elem));
  if (!t.has_shape) return;
  auto* sh = tt->mutable_shape();
  for (const Dim& d : t.dims) {
    auto* dp = sh->add_dim();
    if (d.is_known()) dp->set_dim_value(d.value);
    else if (!d.param.empty()) dp->set_dim_param(d.param);
  }
}

bool attr_to_proto(const Attribute& a, onnx::AttributeProto* p) {
  using T = onnx::AttributeProto;
  p->set_name(a.name);
  switch (a.kind) {
    case AttrKind::Int: p->set_type(T::INT); p->set_i(a.i); return true;
    case AttrKind::Float: p->set_type(T::FLOAT); p->set_f(a.f); return true;
    case AttrKind::String: p->set_type(T::STRING); p->set_s(a.s); return true;
    case AttrKind::Ints: p->set_type(T::INTS); for (auto v : a.ints) p->add_ints(v); return true;
    case AttrKind::Floats: p->set_type(T::FLOATS); for (auto v : a.floats) p->add_floats(v); return true;
    case AttrKind::Strings: p->set_type(T::STRINGS); for (auto& v : a.strings) p->add_strings(v); return true;
    case AttrKind::Tensor:
      if (!a.t) return false;
      p->set_type(T::TENSOR);
      tensor_to_proto(*a.t, p->mutable_t());
      return true;
    default: return false;
  }
}

ValueType type_from_proto(const onnx::TypeProto& tp) {
  ValueType t;
  if (!tp.has_tensor_type()) return t;
  t.elem = static_cast<DataType>(tp.tensor_type().elem_type());
  if (!tp.tensor_type().has_shape()) return t;
  t.has_shape = true;
  for (const auto& d : tp.tensor_type().shape().dim()) {
    if (d.has_dim_value()) t.dims.push_back(Dim::known(d.dim_value()));
    else if (d.has_dim_param()) t.dims.push_back(Dim::symbol(d.dim_param()));
    else t.dims.push_back(Dim{});
  }
  return t;
}

}  // namespace

bool infer_node_types(Graph& g, NodeId id, int64_t opset) {
  Node& n = g.node(id);
  auto fallback = [&] {
    DataType elem = !n.inputs.empty() && n.inputs[0] != kNoValue ? g.value(n.inputs[0]).type.elem : DataType::Undefined;
    for (ValueId o : n.outputs)
      if (o != kNoValue && g.value(o).type.elem == DataType::Undefined) g.value(o).type = ValueType::tensor(elem);
  };
  // fusor's ops infer through their ONNX schemas, registered on first use (a process that never
  // ran model shape inference, as `rules test` on an instantiated pattern, has not yet).
  if (n.op.domain() == kFusorDomain) register_fusor_schemas();
  const onnx::OpSchema* s = opset > 0 && n.op.domain().empty()
      ? onnx::OpSchemaRegistry::Schema(n.op.name(), static_cast<int>(opset), n.op.domain())
      : onnx::OpSchemaRegistry::Schema(n.op.name(), n.op.domain());
  if (!s || !s->has_type_and_shape_inference_function()) { fallback(); return true; }
  onnx::NodeProto np;
  np.set_op_type(n.op.name());
  np.set_domain(n.op.domain());
  for (const Attribute& a : n.attrs) {
    onnx::AttributeProto ap;
    if (attr_to_proto(a, &ap)) *np.add_attribute() = std::move(ap);
  }
  std::unordered_map<std::string, onnx::TypeProto*> types;
  std::unordered_map<std::string, const onnx::TensorProto*> data;
  std::vector<std::unique_ptr<onnx::TypeProto>> type_store;
  std::vector<std::unique_ptr<onnx::TensorProto>> data_store;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue) { np.add_input(""); continue; }
    std::string key = "in" + std::to_string(i);
    np.add_input(key);
    const Value& v = g.value(n.inputs[i]);
    if (v.type.elem != DataType::Undefined && v.type.is_tensor()) {
      type_store.push_back(std::make_unique<onnx::TypeProto>());
      type_to_proto(v.type, type_store.back().get());
      types[key] = type_store.back().get();
    }
    TensorPtr t = constant_of(g, n.inputs[i]);
    if (t && t->dtype() != DataType::String && t->numel() <= 4096) {
      data_store.push_back(std::make_unique<onnx::TensorProto>());
      tensor_to_proto(*t, data_store.back().get());
      data[key] = data_store.back().get();
    }
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) np.add_output(n.outputs[i] == kNoValue ? "" : "out" + std::to_string(i));
  onnx::shape_inference::InferenceContextImpl ctx(np, types, data, {});
  try {
    s->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception&) {
    fallback();
    return false;
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] == kNoValue) continue;
    ValueType t = type_from_proto(*ctx.getOutputType(i));
    if (t.elem != DataType::Undefined) g.value(n.outputs[i]).type = t;
  }
  fallback();
  return true;
}

}  // namespace fusor
