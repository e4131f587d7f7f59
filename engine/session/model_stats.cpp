#include "engine/session/model_stats.h"
#include "core/ops/op_names.h"
#include "core/onnx/type_proto.h"

#include <onnx/onnx_pb.h>

namespace fusor {

namespace {

struct Counter {
  ModelStats& s;
  const OpType constant = op::Constant;

  void graph(const Graph& g, int depth) {
    for (ValueId v : g.initializers()) {
      const Value& val = g.value(v);
      ++s.initializers;
      const Tensor& t = *val.constant;
      if (t.dtype() == DataType::String) {
        for (const std::string& str : t.string_data()) s.initializer_bytes += static_cast<int64_t>(str.size());
      } else {
        s.initializer_bytes += static_cast<int64_t>(t.nbytes());
      }
    }
    for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
      const Node& node = g.node(n);
      (depth == 0 ? s.nodes : s.subgraph_nodes) += 1;
      if (node.op == constant) ++s.constant_nodes;
      ++s.ops[node.op.qualified()];
      for (const Graph* sub : g.subgraphs(n)) graph(*sub, depth + 1);
    }
  }
};

void ops_of(const Graph& g, std::map<std::string, int64_t>& ops) {
  for (NodeId n = g.first(); n != kNoNode; n = g.next(n)) {
    ++ops[g.node(n).op.qualified()];
    for (const Graph* sub : g.subgraphs(n)) ops_of(*sub, ops);
  }
}

std::string type_proto_name(const onnx::TypeProto& t) {
  switch (t.value_case()) {
    case onnx::TypeProto::kTensorType:
      return tensor_type_name(static_cast<DataType>(t.tensor_type().elem_type()));
    case onnx::TypeProto::kSparseTensorType:
      return std::string("sparse_tensor(") + dtype_name(static_cast<DataType>(t.sparse_tensor_type().elem_type())) + ")";
    case onnx::TypeProto::kSequenceType:
      return "seq(" + type_proto_name(t.sequence_type().elem_type()) + ")";
    case onnx::TypeProto::kMapType:
      return std::string("map(") + dtype_name(static_cast<DataType>(t.map_type().key_type())) + "," +
             type_proto_name(t.map_type().value_type()) + ")";
    case onnx::TypeProto::kOptionalType:
      return "optional(" + type_proto_name(t.optional_type().elem_type()) + ")";
    default:
      return "unknown";
  }
}

IoStats io_stats(const Value& v) {
  IoStats io;
  io.name = v.name;
  io.type = onnx_type_name(v.type);
  io.has_shape = v.type.is_tensor() && v.type.has_shape;
  if (io.has_shape) io.dims = v.type.dims;
  return io;
}

}  // namespace

std::string onnx_type_name(const ValueType& type) {
  if (type.is_tensor()) return tensor_type_name(type.elem);
  onnx::TypeProto proto;
  if (!value_type_to_proto(type, &proto)) return "unknown";
  return type_proto_name(proto);
}

ModelStats model_stats(const Model& model) {
  ModelStats s;
  const Graph& g = *model.graph;
  Counter{s}.graph(g, 0);
  for (ValueId v : g.inputs())
    if (!g.value(v).is_initializer()) s.inputs.push_back(io_stats(g.value(v)));
  for (ValueId v : g.outputs()) s.outputs.push_back(io_stats(g.value(v)));
  s.opsets = model.opsets;
  return s;
}

std::map<std::string, int64_t> op_histogram(const Model& model) {
  std::map<std::string, int64_t> ops;
  ops_of(*model.graph, ops);
  return ops;
}

}  // namespace fusor
