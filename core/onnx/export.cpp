// fusor::Model -> ModelProto, and saving it.
#include <climits>
#include <filesystem>

#include "core/util/error.h"
#include "core/ir/symbol.h"
#include "core/onnx/export_graph.h"
#include "core/onnx/external_data.h"
#include "core/onnx/onnx_io.h"
#include "core/onnx/proto_file.h"
#include "core/onnx/tensor_proto.h"
#include "core/onnx/type_proto.h"

namespace fusor {

namespace {

using Inits = ProtoExportOptions::MainInitializers;

// Initializers small enough to keep their data in the proto used for shape inference: shape-like
// integer tensors and anything tiny.
bool keep_for_inference(const Tensor& t) {
  if (t.nbytes() <= 1024) return true;
  return (t.dtype() == DataType::Int64 || t.dtype() == DataType::Int32) && t.numel() <= (1 << 16);
}

void graph_to_proto(const Graph& g, onnx::GraphProto* gp, const ProtoExportOptions& o, bool main);

void fill_value_info(const Graph& g, ValueId v, onnx::ValueInfoProto* vi) {
  const Value& val = g.value(v);
  vi->set_name(exported_name(g, v));
  if (!value_type_to_proto(val.type, vi->mutable_type())) vi->clear_type();
  if (!val.doc_string.empty()) vi->set_doc_string(val.doc_string);
}

void attr_to_proto(const Attribute& a, onnx::AttributeProto* ap, const ProtoExportOptions& o) {
  using A = onnx::AttributeProto;
  if (a.kind == AttrKind::Opaque) {
    if (!ap->ParseFromString(a.opaque)) throw_internal("attribute '" + a.name + "' has a corrupt opaque payload");
    ap->set_name(a.name);
    return;
  }
  ap->set_name(a.name);
  if (!a.doc_string.empty()) ap->set_doc_string(a.doc_string);
  switch (a.kind) {
    case AttrKind::Float: ap->set_type(A::FLOAT); ap->set_f(a.f); break;
    case AttrKind::Int: ap->set_type(A::INT); ap->set_i(a.i); break;
    case AttrKind::String: ap->set_type(A::STRING); ap->set_s(a.s); break;
    case AttrKind::Tensor: ap->set_type(A::TENSOR); tensor_to_proto(*a.t, ap->mutable_t()); break;
    case AttrKind::Graph: ap->set_type(A::GRAPH); graph_to_proto(*a.g, ap->mutable_g(), o, false); break;
    case AttrKind::Floats:
      ap->set_type(A::FLOATS);
      ap->mutable_floats()->Add(a.floats.begin(), a.floats.end());
      break;
    case AttrKind::Ints:
      ap->set_type(A::INTS);
      ap->mutable_ints()->Add(a.ints.begin(), a.ints.end());
      break;
    case AttrKind::Strings:
      ap->set_type(A::STRINGS);
      for (const auto& s : a.strings) ap->add_strings(s);
      break;
    case AttrKind::Tensors:
      ap->set_type(A::TENSORS);
      for (const auto& t : a.tensors) tensor_to_proto(*t, ap->add_tensors());
      break;
    case AttrKind::Graphs:
      ap->set_type(A::GRAPHS);
      for (const auto& sg : a.graphs) graph_to_proto(*sg, ap->add_graphs(), o, false);
      break;
    case AttrKind::Undefined:
    case AttrKind::Opaque: break;
  }
}

void node_to_proto(const Graph& g, const Node& n, onnx::NodeProto* np, const ProtoExportOptions& o) {
  static const std::string kAbsent;
  np->mutable_input()->Reserve(static_cast<int>(n.inputs.size()));
  for (ValueId v : n.inputs) np->add_input(v == kNoValue ? kAbsent : exported_name(g, v));
  for (ValueId v : n.outputs) np->add_output(v == kNoValue ? kAbsent : g.value(v).name);
  if (!n.name.empty()) np->set_name(n.name);
  np->set_op_type(n.op.name());
  // The domain as written, unless the op has since been changed to another domain.
  const std::string& domain = canonical_domain(n.domain) == n.op.domain() ? n.domain : n.op.domain();
  if (!domain.empty()) np->set_domain(domain);
  if (!n.doc_string.empty()) np->set_doc_string(n.doc_string);
  for (const Attribute& a : n.attrs) {
    // onnx.checker rejects a list attribute with no elements ("expected to have field
    // 'floats'"). On fusor's own ops an empty list means the schema default (activation_params
    // of a Relu), so it is left out; other domains keep what the model wrote.
    const bool empty_list = (a.kind == AttrKind::Floats && a.floats.empty()) ||
                            (a.kind == AttrKind::Ints && a.ints.empty()) ||
                            (a.kind == AttrKind::Strings && a.strings.empty());
    if (empty_list && n.op.domain() == kFusorDomain) continue;
    attr_to_proto(a, np->add_attribute(), o);
  }
}

void graph_to_proto(const Graph& g, onnx::GraphProto* gp, const ProtoExportOptions& o, bool main) {
  if (!g.opaque_extras.empty() && !gp->ParseFromString(g.opaque_extras))
    throw_internal("graph '" + g.name + "' has corrupt opaque extras");
  if (!g.name.empty()) gp->set_name(g.name);
  if (!g.doc_string.empty()) gp->set_doc_string(g.doc_string);
  for (ValueId v : g.inputs()) fill_value_info(g, v, gp->add_input());
  for (ValueId v : g.outputs()) fill_value_info(g, v, gp->add_output());
  Inits mode = main ? o.main_initializers : Inits::Full;
  if (mode != Inits::Omit) {
    for (ValueId v : g.initializers()) {
      const Value& val = g.value(v);
      if (mode == Inits::ForInference && !keep_for_inference(*val.constant)) {
        if (!val.is_graph_input) fill_value_info(g, v, gp->add_input());
        continue;
      }
      auto* tp = gp->add_initializer();
      tp->set_name(val.name);
      tensor_to_proto(*val.constant, tp);
    }
  }
  gp->mutable_node()->Reserve(static_cast<int>(g.num_nodes()));
  for (NodeId id = g.first(); id != kNoNode; id = g.next(id)) node_to_proto(g, g.node(id), gp->add_node(), o);
  if (o.value_info) {
    for (size_t i = 0; i < g.value_capacity(); ++i) {
      const Value& val = g.value(static_cast<ValueId>(i));
      if (!val.alive || val.is_graph_input || val.is_graph_output || val.constant || val.captured_from != kNoValue ||
          val.producer == kNoNode)
        continue;
      if (val.type.is_tensor() && val.type.elem == DataType::Undefined) continue;
      fill_value_info(g, val.id, gp->add_value_info());
    }
  }
}

uint64_t main_initializer_bytes(const Graph& g) {
  uint64_t n = 0;
  for (ValueId v : g.initializers()) n += g.value(v).constant->nbytes();
  return n;
}

// Writes the model with the main graph's initializers streamed from tensor memory rather than
// copied into the proto: the ModelProto without its graph, then the graph field (tag 7) holding
// the GraphProto without initializers followed by one initializer field (tag 5) per tensor.
// Protobuf merges fields in any order, so this parses as the same message.
void write_model(const Model& m, ByteSink& sink, ExternalDataWriter* ext, bool value_info) {
  ProtoExportOptions o;
  o.main_initializers = Inits::Omit;
  o.value_info = value_info;
  onnx::ModelProto mp;
  model_to_proto(m, &mp, o);
  onnx::GraphProto gp;
  gp.Swap(mp.mutable_graph());
  mp.clear_graph();

  struct Entry {
    std::string header;  // the TensorProto without raw_data
    const Tensor* raw;   // bytes to append as raw_data, or null
    uint64_t body;       // length of the whole TensorProto
  };
  const Graph& g = *m.graph;
  std::vector<Entry> entries;
  uint64_t graph_len = gp.ByteSizeLong();
  for (ValueId v : g.initializers()) {
    const Tensor& t = *g.value(v).constant;
    onnx::TensorProto tp;
    tp.set_name(g.value(v).name);
    const Tensor* raw = nullptr;
    if (t.dtype() == DataType::String) {
      tensor_to_proto(t, &tp);
    } else if (ext && t.nbytes() >= kExternalDataThreshold) {
      tensor_header_to_proto(t, &tp);
      ext->write(t, &tp);
    } else {
      tensor_header_to_proto(t, &tp);
      raw = &t;
    }
    Entry e{tp.SerializeAsString(), raw, 0};
    e.body = e.header.size() + (raw ? 1 + varint_size(t.nbytes()) + t.nbytes() : 0);
    graph_len += 1 + varint_size(e.body) + e.body;
    entries.push_back(std::move(e));
  }
  std::string head = mp.SerializeAsString();
  if (head.size() + graph_len + 16 > static_cast<uint64_t>(INT_MAX))
    throw_bad_input("the model is over protobuf's 2 GB limit; save it with external data");
  sink.write(head);
  sink.write_len_field_header(7, graph_len);
  sink.write(gp.SerializeAsString());
  for (const Entry& e : entries) {
    sink.write_len_field_header(5, e.body);
    sink.write(e.header);
    if (e.raw) {
      sink.write_len_field_header(9, e.raw->nbytes());
      sink.write(e.raw->raw(), e.raw->nbytes());
    }
  }
}

}  // namespace

const std::string& exported_name(const Graph& g, ValueId v) {
  const Graph* gg = &g;
  while (gg->value(v).captured_from != kNoValue && gg->parent()) {
    v = gg->value(v).captured_from;
    gg = gg->parent();
  }
  if (gg->value(v).name.empty()) throw_internal("a value without a name cannot be exported");
  return gg->value(v).name;
}

void model_to_proto(const Model& m, onnx::ModelProto* mp, const ProtoExportOptions& opts) {
  if (!m.opaque_extras.empty() && !mp->ParseFromString(m.opaque_extras))
    throw_internal("model has corrupt opaque extras");
  mp->set_ir_version(m.ir_version);
  for (const auto& op : m.opsets) {
    auto* o = mp->add_opset_import();
    o->set_domain(op.domain);
    o->set_version(op.version);
  }
  if (!m.producer_name.empty()) mp->set_producer_name(m.producer_name);
  if (!m.producer_version.empty()) mp->set_producer_version(m.producer_version);
  if (!m.domain.empty()) mp->set_domain(m.domain);
  if (m.model_version) mp->set_model_version(m.model_version);
  if (!m.doc_string.empty()) mp->set_doc_string(m.doc_string);
  for (const auto& [k, v] : m.metadata) {
    auto* p = mp->add_metadata_props();
    p->set_key(k);
    p->set_value(v);
  }
  graph_to_proto(*m.graph, mp->mutable_graph(), opts, true);
}

void save_model(const Model& model, const std::string& path, const SaveOptions& opts) {
  // Past ~2 GB of weights the proto cannot hold them: external data is mandatory.
  constexpr uint64_t kInlineLimit = (uint64_t{1} << 31) - (uint64_t{256} << 20);
  bool external = opts.external_data || main_initializer_bytes(*model.graph) > kInlineLimit;
  std::unique_ptr<ExternalDataWriter> ext;
  if (external) {
    std::filesystem::path p(path);
    std::string location = p.filename().string() + ".data";
    ext = std::make_unique<ExternalDataWriter>(path + ".data", location);
  }
  FileSink sink(path);
  write_model(model, sink, ext.get(), opts.value_info);
  if (ext) ext->finish();
  sink.commit();
}

std::string serialize_model(const Model& model) {
  std::string out;
  StringSink sink(&out);
  write_model(model, sink, nullptr, false);
  return out;
}

}  // namespace fusor
