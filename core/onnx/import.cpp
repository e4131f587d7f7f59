// ModelProto -> fusor::Model.
#include <climits>
#include <filesystem>
#include <new>
#include <unordered_map>

#include "core/util/error.h"
#include "core/onnx/external_data.h"
#include "core/onnx/import_graph.h"
#include "core/onnx/onnx_io.h"
#include "core/onnx/overrides.h"
#include "core/onnx/proto_file.h"
#include "core/onnx/shape_inference.h"
#include "core/onnx/tensor_proto.h"
#include "core/onnx/type_proto.h"

namespace fusor {

namespace {

std::string qualified_op(const std::string& domain, const std::string& op) {
  std::string_view d = canonical_domain(domain);
  return d.empty() ? op : std::string(d) + "." + op;
}

std::string describe_proto_node(const onnx::NodeProto& np) {
  std::string op = qualified_op(np.domain(), np.op_type());
  if (!np.name().empty()) return "node '" + np.name() + "' (" + op + ")";
  for (const auto& o : np.output())
    if (!o.empty()) return "unnamed node (" + op + ") producing '" + o + "'";
  return "unnamed node (" + op + ")";
}

[[noreturn]] void rethrow_in(const std::string& where, const Error& e) {
  throw Error(e.kind(), where + ": " + e.what());
}

// Tensor sizes are checked before shape inference, which reads constant tensors.
void check_graph_tensors(const onnx::GraphProto& g);

void check_node_tensors(const onnx::NodeProto& np) {
  for (const auto& a : np.attribute()) {
    try {
      if (a.has_t()) check_tensor_proto(a.t());
      for (const auto& t : a.tensors()) check_tensor_proto(t);
      if (a.has_g()) check_graph_tensors(a.g());
      for (const auto& g : a.graphs()) check_graph_tensors(g);
    } catch (const Error& e) {
      rethrow_in(describe_proto_node(np) + ": attribute '" + a.name() + "'", e);
    }
  }
}

void check_graph_tensors(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer()) {
    try {
      check_tensor_proto(t);
    } catch (const Error& e) {
      rethrow_in("initializer '" + t.name() + "'", e);
    }
  }
  for (const auto& n : g.node()) check_node_tensors(n);
}

// A node on a cycle, found by depth-first search over producer edges (explicit and implicit).
NodeId find_cycle_node(const Graph& g) {
  std::vector<uint8_t> color(g.node_capacity(), 0);  // 0 new, 1 on the stack, 2 done
  auto preds = [&](NodeId id) {
    std::vector<NodeId> out;
    const Node& n = g.node(id);
    auto add = [&](ValueId v) {
      if (v != kNoValue && g.value(v).producer != kNoNode) out.push_back(g.value(v).producer);
    };
    for (ValueId v : n.inputs) add(v);
    for (ValueId v : n.implicit_inputs) add(v);
    return out;
  };
  for (NodeId root : g.order()) {
    if (color[root]) continue;
    std::vector<std::pair<NodeId, std::vector<NodeId>>> stack;
    stack.push_back({root, preds(root)});
    color[root] = 1;
    while (!stack.empty()) {
      auto& [id, next] = stack.back();
      if (next.empty()) {
        color[id] = 2;
        stack.pop_back();
        continue;
      }
      NodeId p = next.back();
      next.pop_back();
      if (color[p] == 1) return p;
      if (color[p] == 0) {
        color[p] = 1;
        stack.push_back({p, preds(p)});
      }
    }
  }
  return g.first();
}

onnx::AttributeProto::AttributeType guess_attr_type(const onnx::AttributeProto& ap) {
  using A = onnx::AttributeProto;
  if (ap.has_f()) return A::FLOAT;
  if (ap.has_i()) return A::INT;
  if (ap.has_s()) return A::STRING;
  if (ap.has_t()) return A::TENSOR;
  if (ap.has_g()) return A::GRAPH;
  if (ap.floats_size()) return A::FLOATS;
  if (ap.ints_size()) return A::INTS;
  if (ap.strings_size()) return A::STRINGS;
  if (ap.tensors_size()) return A::TENSORS;
  if (ap.graphs_size()) return A::GRAPHS;
  return A::UNDEFINED;
}

class GraphImporter {
 public:
  explicit GraphImporter(ExternalDataReader& ext) : ext_(ext) {}
  void build(onnx::GraphProto& gp, Graph& g);

 private:
  ValueId lookup(Graph& g, const std::string& name);
  Attribute build_attr(onnx::AttributeProto& ap, Graph& g, const std::string& where);
  std::shared_ptr<Graph> build_subgraph(onnx::GraphProto& gp, Graph& parent, const std::string& where);
  TensorPtr convert(onnx::TensorProto& tp, const std::string& where);

  ExternalDataReader& ext_;
};

// A name not defined in g resolves in the enclosing graphs; every graph between g and the
// definition gets a capture, so each capture refers to its direct parent.
ValueId GraphImporter::lookup(Graph& g, const std::string& name) {
  ValueId v = g.find_value(name);
  if (v != kNoValue || !g.parent()) return v;
  ValueId outer = lookup(*g.parent(), name);
  if (outer == kNoValue) return kNoValue;
  return g.add_capture(name, outer);
}

TensorPtr GraphImporter::convert(onnx::TensorProto& tp, const std::string& where) {
  try {
    return std::make_shared<const Tensor>(tensor_from_proto(tp, &ext_));
  } catch (const Error& e) {
    rethrow_in(where, e);
  }
}

std::shared_ptr<Graph> GraphImporter::build_subgraph(onnx::GraphProto& gp, Graph& parent, const std::string& where) {
  auto sg = std::make_shared<Graph>(&parent);
  try {
    build(gp, *sg);
  } catch (const Error& e) {
    rethrow_in(where, e);
  }
  return sg;
}

Attribute GraphImporter::build_attr(onnx::AttributeProto& ap, Graph& g, const std::string& node_where) {
  using A = onnx::AttributeProto;
  Attribute a;
  a.name = ap.name();
  a.doc_string = ap.doc_string();
  std::string where = node_where + ": attribute '" + ap.name() + "'";
  A::AttributeType type = ap.type() == A::UNDEFINED ? guess_attr_type(ap) : ap.type();
  if (!ap.ref_attr_name().empty()) type = A::UNDEFINED;
  switch (type) {
    case A::FLOAT: a.kind = AttrKind::Float; a.f = ap.f(); break;
    case A::INT: a.kind = AttrKind::Int; a.i = ap.i(); break;
    case A::STRING: a.kind = AttrKind::String; a.s = std::move(*ap.mutable_s()); break;
    case A::TENSOR: a.kind = AttrKind::Tensor; a.t = convert(*ap.mutable_t(), where); break;
    case A::GRAPH: a.kind = AttrKind::Graph; a.g = build_subgraph(*ap.mutable_g(), g, where); break;
    case A::FLOATS: a.kind = AttrKind::Floats; a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case A::INTS: a.kind = AttrKind::Ints; a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case A::STRINGS:
      a.kind = AttrKind::Strings;
      for (auto& s : *ap.mutable_strings()) a.strings.push_back(std::move(s));
      break;
    case A::TENSORS:
      a.kind = AttrKind::Tensors;
      for (auto& t : *ap.mutable_tensors()) a.tensors.push_back(convert(t, where));
      break;
    case A::GRAPHS:
      a.kind = AttrKind::Graphs;
      for (auto& sg : *ap.mutable_graphs()) a.graphs.push_back(build_subgraph(sg, g, where));
      break;
    default:  // sparse tensors, type protos, references to function attributes
      a.kind = AttrKind::Opaque;
      a.opaque = ap.SerializeAsString();
      break;
  }
  return a;
}

void GraphImporter::build(onnx::GraphProto& gp, Graph& g) {
  g.name = gp.name();
  g.doc_string = gp.doc_string();

  // Types after inference: value_info holds intermediates; a declared output type wins when it
  // has a shape.
  std::unordered_map<std::string, const onnx::TypeProto*> types;
  types.reserve(static_cast<size_t>(gp.value_info_size() + gp.output_size()));
  for (const auto& vi : gp.value_info()) types[vi.name()] = &vi.type();
  for (const auto& vi : gp.output()) {
    auto it = types.find(vi.name());
    bool declared_shape = vi.type().has_tensor_type() && vi.type().tensor_type().has_shape();
    if (it == types.end() || declared_shape || !type_proto_is_informative(*it->second)) types[vi.name()] = &vi.type();
  }
  auto type_of = [&](const std::string& n) {
    auto it = types.find(n);
    return it == types.end() ? ValueType{} : value_type_from_proto(*it->second);
  };

  for (const auto& vi : gp.input()) {
    if (vi.name().empty()) throw_bad_input("graph '" + gp.name() + "' has an input without a name");
    ValueId v = g.add_value(vi.name(), value_type_from_proto(vi.type()));
    g.value(v).doc_string = vi.doc_string();
    g.add_input(v);
  }

  for (auto& tp : *gp.mutable_initializer()) {
    if (tp.name().empty()) throw_bad_input("graph '" + gp.name() + "' has an initializer without a name");
    std::string where = "initializer '" + tp.name() + "'";
    TensorPtr t = convert(tp, where);
    ValueId v = g.find_value(tp.name());
    if (v == kNoValue) {
      g.add_initializer(tp.name(), std::move(t));
      continue;
    }
    Value& val = g.value(v);
    if (val.constant) throw_bad_input(where + " is defined twice");
    if (val.type.elem == DataType::Undefined && val.type.is_tensor()) {
      val.type.elem = t->dtype();
      val.type.has_shape = true;
      val.type.dims.clear();
      for (int64_t d : t->shape()) val.type.dims.push_back(Dim::known(d));
    }
    val.constant = std::move(t);
  }

  // Sparse initializers stay in the graph's opaque extras; their names are defined values here.
  for (const auto& sp : gp.sparse_initializer()) {
    const std::string& n = sp.values().name();
    if (n.empty() || g.find_value(n) != kNoValue) continue;
    ValueType vt;
    vt.elem = is_known_dtype(sp.values().data_type()) ? static_cast<DataType>(sp.values().data_type()) : DataType::Undefined;
    vt.has_shape = true;
    for (int64_t d : sp.dims()) vt.dims.push_back(Dim::known(d));
    g.add_value(n, std::move(vt));
  }

  // Every node output exists before any node is added, so inputs may refer forward (unsorted
  // graphs) and subgraphs may refer to any outer value.
  for (const auto& np : gp.node())
    for (const auto& o : np.output()) {
      if (o.empty()) continue;
      if (g.find_value(o) != kNoValue)
        throw_bad_input(describe_proto_node(np) + ": output '" + o +
                        "' is already defined (by another node, a graph input or an initializer)");
      g.add_value(o, type_of(o));
    }

  for (auto& np : *gp.mutable_node()) {
    std::string where = describe_proto_node(np);
    std::vector<ValueId> ins;
    ins.reserve(static_cast<size_t>(np.input_size()));
    for (const auto& in : np.input()) {
      if (in.empty()) {
        ins.push_back(kNoValue);
        continue;
      }
      ValueId v = lookup(g, in);
      if (v == kNoValue)
        throw_bad_input(where + ": input '" + in +
                        "' is not defined by any node, graph input, initializer or enclosing graph");
      ins.push_back(v);
    }
    std::vector<Attribute> attrs;
    attrs.reserve(static_cast<size_t>(np.attribute_size()));
    for (auto& ap : *np.mutable_attribute()) attrs.push_back(build_attr(ap, g, where));
    std::vector<ValueId> outs;
    outs.reserve(static_cast<size_t>(np.output_size()));
    for (const auto& o : np.output()) outs.push_back(o.empty() ? kNoValue : g.find_value(o));
    NodeId id;
    try {
      id = g.add_node(OpType(np.domain(), np.op_type()), std::move(ins), std::move(outs), std::move(attrs), np.name());
    } catch (const Error& e) {
      rethrow_in(where, e);
    }
    Node& n = g.node(id);
    n.domain = np.domain();
    n.doc_string = np.doc_string();
  }

  for (const auto& vi : gp.output()) {
    ValueId v = vi.name().empty() ? kNoValue : lookup(g, vi.name());
    if (v == kNoValue)
      throw_bad_input("graph output '" + vi.name() + "' is not defined by any node, graph input or initializer");
    Value& val = g.value(v);
    if (val.doc_string.empty()) val.doc_string = vi.doc_string();
    // A value typed by nothing else (an untyped outer value, say) takes the declared output type.
    if (val.type.is_tensor() && val.type.elem == DataType::Undefined && type_proto_is_informative(vi.type()))
      val.type = value_type_from_proto(vi.type());
    g.add_output(v);
  }

  try {
    g.topo_sort();
  } catch (const Error&) {
    throw_bad_input(describe_node(g, g.node(find_cycle_node(g))) + " is on a cycle");
  }

  // What is left of the GraphProto is what the IR does not model.
  gp.clear_node();
  gp.clear_initializer();
  gp.clear_input();
  gp.clear_output();
  gp.clear_value_info();
  gp.clear_name();
  gp.clear_doc_string();
  if (gp.ByteSizeLong()) g.opaque_extras = gp.SerializeAsString();
}

}  // namespace

std::string describe_node(const Graph& g, const Node& n) {
  if (!n.name.empty()) return n.describe();
  for (ValueId o : n.outputs)
    if (o != kNoValue) return "unnamed node (" + n.op.qualified() + ") producing '" + g.value(o).name + "'";
  return "unnamed node (" + n.op.qualified() + ")";
}

std::unique_ptr<Model> import_model_proto(onnx::ModelProto& mp, const LoadOptions& opts, const std::string& name,
                                          const std::string& base_dir) {
  try {
    if (!mp.has_ir_version() || !mp.has_graph())
      throw_bad_input("not an ONNX model (no ir_version or no graph; truncated or not a model file?)");
    if (mp.ir_version() >= 3 && mp.opset_import_size() == 0)
      throw_bad_input("not a valid ONNX model: it imports no opset (truncated?)");
    check_graph_tensors(mp.graph());
    apply_overrides(*mp.mutable_graph(), opts.overrides);
    if (opts.infer_shapes) run_onnx_shape_inference(mp);

    auto model = std::make_unique<Model>();
    model->ir_version = mp.ir_version();
    model->opsets.clear();
    for (const auto& o : mp.opset_import()) model->opsets.push_back({o.domain(), o.version()});
    model->producer_name = mp.producer_name();
    model->producer_version = mp.producer_version();
    model->domain = mp.domain();
    model->model_version = mp.model_version();
    model->doc_string = mp.doc_string();
    for (const auto& kv : mp.metadata_props()) model->metadata.emplace_back(kv.key(), kv.value());

    ExternalDataReader ext(base_dir);
    GraphImporter(ext).build(*mp.mutable_graph(), *model->graph);

    mp.clear_graph();
    mp.clear_ir_version();
    mp.clear_opset_import();
    mp.clear_producer_name();
    mp.clear_producer_version();
    mp.clear_domain();
    mp.clear_model_version();
    mp.clear_doc_string();
    mp.clear_metadata_props();
    if (mp.ByteSizeLong()) model->opaque_extras = mp.SerializeAsString();
    return model;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Usage) throw;
    rethrow_in(name, e);
  } catch (const std::bad_alloc&) {
    throw_bad_input(name + ": out of memory while loading the model");
  } catch (const std::exception& e) {
    throw_bad_input(name + ": " + e.what());
  }
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& opts) {
  onnx::ModelProto mp;
  parse_proto_file(path, &mp, "ONNX model");
  std::string dir = std::filesystem::path(path).parent_path().string();
  auto model = import_model_proto(mp, opts, path, dir.empty() ? "." : dir);
  model->path = path;
  return model;
}

std::unique_ptr<Model> load_model_from_bytes(std::string bytes, const LoadOptions& opts, const std::string& name,
                                             const std::string& base_dir) {
  onnx::ModelProto mp;
  if (bytes.empty()) throw_bad_input(name + ": empty (0 bytes), not an ONNX model");
  if (!parse_proto_bytes(bytes, &mp)) throw_bad_input(name + ": not a valid ONNX model (truncated or corrupt protobuf)");
  std::string().swap(bytes);
  return import_model_proto(mp, opts, name, base_dir);
}

std::unique_ptr<Model> load_model_from_view(std::string_view bytes, const LoadOptions& opts, const std::string& name,
                                            const std::string& base_dir) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    throw_bad_input(name + ": " + std::to_string(bytes.size()) +
                    " bytes is over protobuf's 2 GB limit for one ONNX model (large weights belong in external data)");
  onnx::ModelProto mp;
  if (!parse_proto_bytes(bytes, &mp)) throw_bad_input(name + ": not a valid ONNX model (truncated or corrupt protobuf)");
  auto model = import_model_proto(mp, opts, name, base_dir);
  model->path = name;
  return model;
}

}  // namespace fusor
