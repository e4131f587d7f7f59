#include "proto_compare.h"

#include <google/protobuf/util/message_differencer.h>

#include <cstring>
#include <map>
#include <vector>

namespace fusor::test {

namespace {

std::string canon_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

size_t elem_bytes(int t) {
  switch (t) {
    case 1: case 6: case 12: return 4;
    case 2: case 3: case 9: return 1;
    case 4: case 5: case 10: case 16: return 2;
    case 7: case 11: case 13: case 14: return 8;
    case 15: return 16;
    default: return 0;
  }
}

// The little-endian bytes a numeric tensor holds, decoded from raw_data or the typed fields.
std::string tensor_bytes(const onnx::TensorProto& t) {
  if (t.has_raw_data()) return t.raw_data();
  std::string out;
  auto put = [&](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  switch (t.data_type()) {
    case 1: case 14: for (float v : t.float_data()) put(&v, 4); break;
    case 11: case 15: for (double v : t.double_data()) put(&v, 8); break;
    case 7: for (int64_t v : t.int64_data()) put(&v, 8); break;
    case 12: for (uint64_t v : t.uint64_data()) { uint32_t x = static_cast<uint32_t>(v); put(&x, 4); } break;
    case 13: for (uint64_t v : t.uint64_data()) put(&v, 8); break;
    case 6: for (int32_t v : t.int32_data()) put(&v, 4); break;
    case 5: case 4: case 10: case 16: for (int32_t v : t.int32_data()) { uint16_t x = static_cast<uint16_t>(v); put(&x, 2); } break;
    case 3: case 2: case 9: for (int32_t v : t.int32_data()) { uint8_t x = static_cast<uint8_t>(v); put(&x, 1); } break;
    default: break;
  }
  return out;
}

std::string compare_tensors(const onnx::TensorProto& a, const onnx::TensorProto& b) {
  if (a.data_type() != b.data_type()) return "data type " + std::to_string(a.data_type()) + " vs " + std::to_string(b.data_type());
  if (std::vector<int64_t>(a.dims().begin(), a.dims().end()) != std::vector<int64_t>(b.dims().begin(), b.dims().end()))
    return "dims differ";
  if (a.data_type() == onnx::TensorProto::STRING) {
    if (a.string_data_size() != b.string_data_size()) return "string count differs";
    for (int i = 0; i < a.string_data_size(); ++i)
      if (a.string_data(i) != b.string_data(i)) return "string " + std::to_string(i) + " differs";
    return {};
  }
  std::string x = tensor_bytes(a), y = tensor_bytes(b);
  if (x.size() != y.size()) return "data sizes " + std::to_string(x.size()) + " vs " + std::to_string(y.size());
  if (x != y) return "data bytes differ";
  (void)elem_bytes;
  return {};
}

std::string compare_types(const onnx::TypeProto& a, const onnx::TypeProto& b, bool exact_shape) {
  if (a.value_case() == onnx::TypeProto::VALUE_NOT_SET) return {};
  if (a.value_case() != b.value_case()) return "type kind differs";
  // Inference may refine the element types of sequences, optionals and maps: compare recursively.
  switch (a.value_case()) {
    case onnx::TypeProto::kSequenceType:
      return compare_types(a.sequence_type().elem_type(), b.sequence_type().elem_type(), exact_shape);
    case onnx::TypeProto::kOptionalType:
      return compare_types(a.optional_type().elem_type(), b.optional_type().elem_type(), exact_shape);
    case onnx::TypeProto::kMapType:
      if (a.map_type().key_type() != b.map_type().key_type()) return "map key type differs";
      return compare_types(a.map_type().value_type(), b.map_type().value_type(), exact_shape);
    case onnx::TypeProto::kTensorType: break;
    default:
      if (!google::protobuf::util::MessageDifferencer::Equals(a, b)) return "non-tensor type differs";
      return {};
  }
  const auto& x = a.tensor_type();
  const auto& y = b.tensor_type();
  if (x.elem_type() != y.elem_type()) return "element type differs";
  if (!x.has_shape()) return {};
  if (!y.has_shape() || x.shape().dim_size() != y.shape().dim_size()) return "rank differs";
  for (int i = 0; i < x.shape().dim_size(); ++i) {
    const auto& d = x.shape().dim(i);
    const auto& e = y.shape().dim(i);
    if (d.has_dim_value() && (!e.has_dim_value() || d.dim_value() != e.dim_value())) return "dim " + std::to_string(i) + " differs";
    if (exact_shape && d.has_dim_param() && (!e.has_dim_param() || d.dim_param() != e.dim_param()))
      return "dim " + std::to_string(i) + " symbol differs";
  }
  return {};
}

int attr_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.has_g()) return onnx::AttributeProto::GRAPH;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  if (a.tensors_size()) return onnx::AttributeProto::TENSORS;
  if (a.graphs_size()) return onnx::AttributeProto::GRAPHS;
  return 0;
}

std::string compare_graphs(const onnx::GraphProto& a, const onnx::GraphProto& b);

std::string compare_attrs(const onnx::AttributeProto& a, const onnx::AttributeProto& b) {
  using A = onnx::AttributeProto;
  if (a.name() != b.name()) return "name '" + a.name() + "' vs '" + b.name() + "'";
  int t = attr_type(a);
  if (t != attr_type(b)) return "type differs";
  if (a.doc_string() != b.doc_string()) return "doc_string differs";
  if (!a.ref_attr_name().empty() || t == A::SPARSE_TENSOR || t == A::SPARSE_TENSORS || t == A::TYPE_PROTO ||
      t == A::TYPE_PROTOS) {
    A x = a, y = b;
    x.clear_type();
    y.clear_type();
    return google::protobuf::util::MessageDifferencer::Equals(x, y) ? "" : "opaque attribute differs";
  }
  switch (t) {
    case A::FLOAT: {
      float x = a.f(), y = b.f();
      return std::memcmp(&x, &y, 4) == 0 ? "" : "float differs";
    }
    case A::INT: return a.i() == b.i() ? "" : "int differs";
    case A::STRING: return a.s() == b.s() ? "" : "string differs";
    case A::TENSOR: {
      std::string r = compare_tensors(a.t(), b.t());
      return r.empty() ? "" : "tensor: " + r;
    }
    case A::GRAPH: {
      std::string r = compare_graphs(a.g(), b.g());
      return r.empty() ? "" : "graph: " + r;
    }
    case A::FLOATS:
      if (a.floats_size() != b.floats_size()) return "floats count differs";
      for (int i = 0; i < a.floats_size(); ++i)
        if (std::memcmp(&a.floats().Get(i), &b.floats().Get(i), 4) != 0) return "floats differ";
      return {};
    case A::INTS:
      if (a.ints_size() != b.ints_size()) return "ints count differs";
      for (int i = 0; i < a.ints_size(); ++i)
        if (a.ints(i) != b.ints(i)) return "ints differ";
      return {};
    case A::STRINGS:
      if (a.strings_size() != b.strings_size()) return "strings count differs";
      for (int i = 0; i < a.strings_size(); ++i)
        if (a.strings(i) != b.strings(i)) return "strings differ";
      return {};
    case A::TENSORS:
      if (a.tensors_size() != b.tensors_size()) return "tensors count differs";
      for (int i = 0; i < a.tensors_size(); ++i) {
        std::string r = compare_tensors(a.tensors(i), b.tensors(i));
        if (!r.empty()) return "tensors[" + std::to_string(i) + "]: " + r;
      }
      return {};
    case A::GRAPHS:
      if (a.graphs_size() != b.graphs_size()) return "graphs count differs";
      for (int i = 0; i < a.graphs_size(); ++i) {
        std::string r = compare_graphs(a.graphs(i), b.graphs(i));
        if (!r.empty()) return "graphs[" + std::to_string(i) + "]: " + r;
      }
      return {};
    default: return {};
  }
}

std::string compare_value_infos(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& a,
                                const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& b, const char* what,
                                bool exact_shape) {
  if (a.size() != b.size()) return std::string(what) + " count " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (int i = 0; i < a.size(); ++i) {
    if (a[i].name() != b[i].name()) return std::string(what) + " '" + a[i].name() + "' vs '" + b[i].name() + "'";
    std::string r = compare_types(a[i].type(), b[i].type(), exact_shape);
    if (!r.empty()) return std::string(what) + " '" + a[i].name() + "': " + r;
    if (a[i].doc_string() != b[i].doc_string()) return std::string(what) + " '" + a[i].name() + "': doc_string differs";
  }
  return {};
}

// What is left of a graph once the fields fusor models are removed.
onnx::GraphProto extras_of(const onnx::GraphProto& g) {
  onnx::GraphProto e;
  e.mutable_sparse_initializer()->CopyFrom(g.sparse_initializer());
  e.mutable_quantization_annotation()->CopyFrom(g.quantization_annotation());
  return e;
}

std::string compare_graphs(const onnx::GraphProto& a, const onnx::GraphProto& b) {
  if (a.name() != b.name()) return "graph name '" + a.name() + "' vs '" + b.name() + "'";
  if (a.doc_string() != b.doc_string()) return "graph doc_string differs";
  std::string r = compare_value_infos(a.input(), b.input(), "input", true);
  if (!r.empty()) return r;
  r = compare_value_infos(a.output(), b.output(), "output", false);
  if (!r.empty()) return r;
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : b.initializer()) inits[t.name()] = &t;
  if (a.initializer_size() != b.initializer_size())
    return "initializer count " + std::to_string(a.initializer_size()) + " vs " + std::to_string(b.initializer_size());
  for (const auto& t : a.initializer()) {
    auto it = inits.find(t.name());
    if (it == inits.end()) return "initializer '" + t.name() + "' missing";
    r = compare_tensors(t, *it->second);
    if (!r.empty()) return "initializer '" + t.name() + "': " + r;
  }
  if (a.node_size() != b.node_size()) return "node count " + std::to_string(a.node_size()) + " vs " + std::to_string(b.node_size());
  for (int i = 0; i < a.node_size(); ++i) {
    const auto& x = a.node(i);
    const auto& y = b.node(i);
    std::string where = "node " + std::to_string(i) + " '" + x.name() + "' (" + x.op_type() + "): ";
    if (x.name() != y.name() || x.op_type() != y.op_type()) return where + "name or op differs";
    if (canon_domain(x.domain()) != canon_domain(y.domain())) return where + "domain differs";
    if (x.doc_string() != y.doc_string()) return where + "doc_string differs";
    if (std::vector<std::string>(x.input().begin(), x.input().end()) != std::vector<std::string>(y.input().begin(), y.input().end()))
      return where + "inputs differ";
    if (std::vector<std::string>(x.output().begin(), x.output().end()) != std::vector<std::string>(y.output().begin(), y.output().end()))
      return where + "outputs differ";
    if (x.attribute_size() != y.attribute_size()) return where + "attribute count differs";
    for (int k = 0; k < x.attribute_size(); ++k) {
      r = compare_attrs(x.attribute(k), y.attribute(k));
      if (!r.empty()) return where + "attribute '" + x.attribute(k).name() + "': " + r;
    }
  }
  if (!google::protobuf::util::MessageDifferencer::Equals(extras_of(a), extras_of(b)))
    return "sparse initializers or quantization annotations differ";
  return {};
}

}  // namespace

std::string compare_models(const onnx::ModelProto& a, const onnx::ModelProto& b) {
  if (a.ir_version() != b.ir_version()) return "ir_version differs";
  if (a.opset_import_size() != b.opset_import_size()) return "opset_import count differs";
  for (int i = 0; i < a.opset_import_size(); ++i)
    if (a.opset_import(i).domain() != b.opset_import(i).domain() || a.opset_import(i).version() != b.opset_import(i).version())
      return "opset_import " + std::to_string(i) + " differs";
  if (a.producer_name() != b.producer_name() || a.producer_version() != b.producer_version() || a.domain() != b.domain() ||
      a.model_version() != b.model_version() || a.doc_string() != b.doc_string())
    return "model header (producer, domain, version, doc_string) differs";
  if (a.metadata_props_size() != b.metadata_props_size()) return "metadata count differs";
  for (int i = 0; i < a.metadata_props_size(); ++i)
    if (a.metadata_props(i).key() != b.metadata_props(i).key() || a.metadata_props(i).value() != b.metadata_props(i).value())
      return "metadata differs";
  if (a.functions_size() != b.functions_size()) return "function count differs";
  for (int i = 0; i < a.functions_size(); ++i)
    if (!google::protobuf::util::MessageDifferencer::Equals(a.functions(i), b.functions(i))) return "function differs";
  if (a.training_info_size() != b.training_info_size()) return "training_info count differs";
  for (int i = 0; i < a.training_info_size(); ++i)
    if (!google::protobuf::util::MessageDifferencer::Equals(a.training_info(i), b.training_info(i))) return "training_info differs";
  return compare_graphs(a.graph(), b.graph());
}

}  // namespace fusor::test
