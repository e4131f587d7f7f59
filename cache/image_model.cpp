#include "cache/image_model.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <functional>

#include "cache/image_generated.h"
#include "core/util/error.h"

namespace fusor::cache {

namespace {

namespace fb = ::fusor::image;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;
using flatbuffers::Vector;

constexpr uint32_t kNone = 0xFFFFFFFFu;

// ---------------------------------------------------------------- encoding

class Encoder {
 public:
  explicit Encoder(ImageDataBuilder& data) : data_(data) {}
  FlatBufferBuilder b{1 << 16};

  Offset<flatbuffers::String> str(const std::string& s) { return b.CreateString(s.data(), s.size()); }
  Offset<Vector<uint8_t>> bytes(const std::string& s) {
    return b.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  Offset<Vector<Offset<flatbuffers::String>>> strs(const std::vector<std::string>& v) {
    std::vector<Offset<flatbuffers::String>> o;
    o.reserve(v.size());
    for (const std::string& s : v) o.push_back(str(s));
    return b.CreateVector(o);
  }
  Offset<Vector<uint32_t>> ids(const std::vector<ValueId>& v, const std::vector<uint32_t>& map) {
    std::vector<uint32_t> o;
    o.reserve(v.size());
    for (ValueId x : v) o.push_back(x == kNoValue ? kNone : map.at(x));
    return b.CreateVector(o);
  }

  Offset<fb::Tensor> tensor(const Tensor& t) {
    auto shape = b.CreateVector(t.shape());
    if (t.dtype() == DataType::String) {
      auto s = strs(t.string_data());
      return fb::CreateTensor(b, static_cast<int32_t>(t.dtype()), shape, 0, 0, s);
    }
    const uint64_t n = t.nbytes();
    const uint64_t off = data_.add(t.raw(), n);
    return fb::CreateTensor(b, static_cast<int32_t>(t.dtype()), shape, off, n);
  }

  Offset<fb::ValueType> type(const ValueType& t) {
    std::vector<Offset<fb::Dim>> dims;
    dims.reserve(t.dims.size());
    for (const Dim& d : t.dims) dims.push_back(fb::CreateDim(b, d.value, d.param.empty() ? 0 : str(d.param)));
    auto dv = b.CreateVector(dims);
    auto op = t.opaque.empty() ? 0 : bytes(t.opaque);
    Offset<fb::ValueType> element = t.element ? type(*t.element) : 0;
    return fb::CreateValueType(b, static_cast<int32_t>(t.elem), t.has_shape, dv, op, static_cast<int32_t>(t.kind),
                               element);
  }

  Offset<fb::Attribute> attribute(const Attribute& a, const std::vector<uint32_t>& map) {
    Offset<fb::Tensor> t = a.t ? tensor(*a.t) : 0;
    Offset<fb::Graph> g = a.g ? graph(*a.g, &map) : 0;
    std::vector<Offset<fb::Tensor>> ts;
    for (const TensorPtr& x : a.tensors) ts.push_back(tensor(*x));
    std::vector<Offset<fb::Graph>> gs;
    for (const auto& x : a.graphs) gs.push_back(graph(*x, &map));
    auto name = str(a.name);
    auto s = a.s.empty() ? 0 : bytes(a.s);
    auto floats = a.floats.empty() ? 0 : b.CreateVector(a.floats);
    auto ints = a.ints.empty() ? 0 : b.CreateVector(a.ints);
    auto strings = a.strings.empty() ? 0 : strs(a.strings);
    auto tv = ts.empty() ? 0 : b.CreateVector(ts);
    auto gv = gs.empty() ? 0 : b.CreateVector(gs);
    auto opaque = a.opaque.empty() ? 0 : bytes(a.opaque);
    auto doc = a.doc_string.empty() ? 0 : str(a.doc_string);
    return fb::CreateAttribute(b, name, static_cast<int32_t>(a.kind), a.f, a.i, s, t, g, floats, ints, strings, tv, gv,
                               opaque, doc);
  }

  // `parent_map`: the enclosing graph's old id -> dense id (captures name parent values).
  Offset<fb::Graph> graph(const Graph& g, const std::vector<uint32_t>* parent_map) {
    std::vector<uint32_t> map(g.value_capacity(), kNone);
    uint32_t next = 0;
    for (ValueId v = 0; v < g.value_capacity(); ++v)
      if (g.value(v).alive) map[v] = next++;
    std::vector<Offset<fb::Value>> values;
    values.reserve(next);
    for (ValueId v = 0; v < g.value_capacity(); ++v) {
      const Value& val = g.value(v);
      if (!val.alive) continue;
      uint32_t cap = kNone;
      if (val.captured_from != kNoValue) {
        if (!parent_map) throw_internal("session image: a capture in the main graph");
        cap = parent_map->at(val.captured_from);
      }
      auto name = str(val.name);
      auto ty = type(val.type);
      Offset<fb::Tensor> c = val.constant ? tensor(*val.constant) : 0;
      auto doc = val.doc_string.empty() ? 0 : str(val.doc_string);
      values.push_back(fb::CreateValue(b, name, ty, c, val.is_graph_input, cap, doc));
    }
    std::vector<Offset<fb::Node>> nodes;
    for (NodeId id : g.order()) {
      const Node& n = g.node(id);
      std::vector<Offset<fb::Attribute>> attrs;
      for (const Attribute& a : n.attrs) attrs.push_back(attribute(a, map));
      auto av = b.CreateVector(attrs);
      auto in = ids(n.inputs, map), out = ids(n.outputs, map);
      auto opd = str(n.op.domain()), opn = str(n.op.name()), name = str(n.name), dom = str(n.domain);
      auto ovl = n.overload.empty() ? 0 : str(n.overload);
      auto doc = n.doc_string.empty() ? 0 : str(n.doc_string);
      nodes.push_back(fb::CreateNode(b, opd, opn, name, dom, ovl, in, out, av, doc));
    }
    auto vv = b.CreateVector(values);
    auto nv = b.CreateVector(nodes);
    auto in = ids(g.inputs(), map), out = ids(g.outputs(), map);
    auto name = str(g.name);
    auto doc = g.doc_string.empty() ? 0 : str(g.doc_string);
    auto extras = g.opaque_extras.empty() ? 0 : bytes(g.opaque_extras);
    return fb::CreateGraph(b, name, doc, extras, vv, nv, in, out);
  }

  Offset<fb::Plan> plan(const ImagePlan& p) {
    std::vector<Offset<fb::Prepacked>> pp;
    for (const ImagePrepacked& x : p.prepacked) {
      const uint64_t off = data_.add(x.data, x.bytes);
      pp.push_back(fb::CreatePrepacked(b, x.kernel_id, str(x.name), off, x.bytes));
    }
    std::vector<Offset<fb::MemoryPlan>> mem;
    for (const ImageMemoryPlan& m : p.memory)
      mem.push_back(fb::CreateMemoryPlan(b, m.ordinal, b.CreateVector(m.offset), b.CreateVector(m.capacity),
                                         b.CreateVector(m.buffer), b.CreateVector(m.inplace), b.CreateVector(m.is_view),
                                         b.CreateVector(m.planned_bytes), m.arena_bytes, m.naive_bytes, m.num_buffers,
                                         m.num_inplace));
    auto variant = str(p.variant);
    auto impl = strs(p.node_impl);
    auto pn = str(p.provider_nodes);
    auto ppv = b.CreateVector(pp);
    auto memv = b.CreateVector(mem);
    return fb::CreatePlan(b, variant, impl, pn, ppv, memv);
  }

 private:
  ImageDataBuilder& data_;
};

// ---------------------------------------------------------------- decoding

// A buffer over memory someone else owns, kept alive by `keep` (the mapped image, or the model a
// miss encoded).
class KeptBuffer : public Buffer {
 public:
  KeptBuffer(std::shared_ptr<const void> keep, const void* p, size_t n) : keep_(std::move(keep)), p_(p), n_(n) {}
  // Constants are read-only by the executor's contract; a mapped image is PROT_READ.
  void* data() override { return const_cast<void*>(p_); }
  size_t size() const override { return n_; }

 private:
  std::shared_ptr<const void> keep_;
  const void* p_;
  size_t n_;
};

struct Resolved {
  std::shared_ptr<Buffer> buffer;
  size_t offset = 0;
};
using Resolver = std::function<Resolved(uint64_t offset, uint64_t bytes)>;

std::string s(const flatbuffers::String* x) { return x ? x->str() : std::string(); }
std::string bytes_of(const Vector<uint8_t>* v) {
  return v ? std::string(reinterpret_cast<const char*>(v->data()), v->size()) : std::string();
}
template <class T>
std::vector<T> vec(const Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

bool known_dtype(int32_t d) { return d >= 1 && d <= 16; }

class Decoder {
 public:
  Decoder(Resolver resolve, std::string where) : resolve_(std::move(resolve)), where_(std::move(where)) {}

  [[noreturn]] void bad(const std::string& what) const { throw_bad_input(where_ + ": session image: " + what); }

  TensorPtr tensor(const fb::Tensor* t) {
    if (!t || !known_dtype(t->dtype())) bad("a tensor of unknown element type");
    const DataType dt = static_cast<DataType>(t->dtype());
    Shape shape = vec(t->shape());
    for (int64_t d : shape)
      if (d < 0) bad("a tensor with a negative dimension");
    if (dt == DataType::String) {
      std::vector<std::string> v;
      if (t->strings())
        for (const auto* x : *t->strings()) v.push_back(s(x));
      if (static_cast<int64_t>(v.size()) != shape_numel(shape)) bad("a string tensor of the wrong size");
      return std::make_shared<const Tensor>(Tensor::strings(std::move(shape), std::move(v)));
    }
    const uint64_t n = static_cast<uint64_t>(shape_numel(shape)) * dtype_size(dt);
    if (n != t->data_bytes()) bad("a tensor whose bytes do not match its shape");
    Resolved r = resolve_(t->data_offset(), n);
    return std::make_shared<const Tensor>(dt, std::move(shape), std::move(r.buffer), r.offset);
  }

  ValueType type(const fb::ValueType* t) {
    ValueType v;
    if (!t) return v;
    v.elem = static_cast<DataType>(t->elem());
    v.has_shape = t->has_shape();
    if (t->dims())
      for (const fb::Dim* d : *t->dims()) {
        Dim x;
        x.value = d->value();
        x.param = s(d->param());
        v.dims.push_back(std::move(x));
      }
    v.opaque = bytes_of(t->opaque());
    if (t->kind() < 0 || t->kind() > static_cast<int32_t>(TypeKind::Opaque)) bad("a value type of unknown kind");
    v.kind = static_cast<TypeKind>(t->kind());
    if (t->element()) {
      // Nesting is bounded by the flatbuffer verifier's max_depth (decode_model below).
      v.element = std::make_shared<const ValueType>(type(t->element()));
    }
    return v;
  }

  Attribute attribute(const fb::Attribute* a, Graph& owner) {
    Attribute x;
    x.name = s(a->name());
    if (a->kind() < 0 || a->kind() > static_cast<int32_t>(AttrKind::Opaque)) bad("an attribute of unknown kind");
    x.kind = static_cast<AttrKind>(a->kind());
    x.f = a->f();
    x.i = a->i();
    x.s = bytes_of(a->s());
    if (a->t()) x.t = tensor(a->t());
    if (a->g()) x.g = graph(a->g(), &owner);
    x.floats = vec(a->floats());
    x.ints = vec(a->ints());
    if (a->strings())
      for (const auto* y : *a->strings()) x.strings.push_back(s(y));
    if (a->tensors())
      for (const fb::Tensor* y : *a->tensors()) x.tensors.push_back(tensor(y));
    if (a->graphs())
      for (const fb::Graph* y : *a->graphs()) x.graphs.push_back(graph(y, &owner));
    x.opaque = bytes_of(a->opaque());
    x.doc_string = s(a->doc_string());
    return x;
  }

  std::shared_ptr<Graph> graph(const fb::Graph* fg, Graph* parent) {
    auto g = std::make_shared<Graph>(parent);
    fill_graph(fg, *g);
    return g;
  }

  void fill_graph(const fb::Graph* fg, Graph& g) {
    if (!fg) bad("a missing graph");
    g.name = s(fg->name());
    g.doc_string = s(fg->doc_string());
    g.opaque_extras = bytes_of(fg->opaque_extras());
    const uint32_t nvalues = fg->values() ? fg->values()->size() : 0;
    if (fg->values())
      for (const fb::Value* v : *fg->values()) {
        ValueId id = g.add_value(s(v->name()), type(v->type()));
        Value& val = g.value(id);
        if (v->constant()) val.constant = tensor(v->constant());
        val.doc_string = s(v->doc_string());
        if (v->captured_from() != kNone) {
          if (!g.parent() || v->captured_from() >= g.parent()->value_capacity()) bad("a capture of an unknown value");
          val.captured_from = v->captured_from();
        }
      }
    auto check_ids = [&](const Vector<uint32_t>* ids, bool allow_none) {
      std::vector<ValueId> out;
      if (!ids) return out;
      for (uint32_t x : *ids) {
        if (x == kNone && allow_none) {
          out.push_back(kNoValue);
          continue;
        }
        if (x >= nvalues) bad("a reference to an unknown value");
        out.push_back(x);
      }
      return out;
    };
    for (ValueId v : check_ids(fg->inputs(), false)) g.add_input(v);
    // Flags recorded per value (an initializer that is also an input keeps is_graph_input).
    if (fg->values())
      for (uint32_t i = 0; i < nvalues; ++i)
        if (fg->values()->Get(i)->is_graph_input()) g.value(i).is_graph_input = true;
    if (fg->nodes())
      for (const fb::Node* n : *fg->nodes()) {
        std::vector<Attribute> attrs;
        if (n->attrs())
          for (const fb::Attribute* a : *n->attrs()) attrs.push_back(attribute(a, g));
        NodeId id = g.add_node(OpType(s(n->op_domain()), s(n->op_name())), check_ids(n->inputs(), true),
                               check_ids(n->outputs(), true), std::move(attrs), s(n->name()));
        Node& node = g.node(id);
        node.domain = s(n->domain());
        node.overload = s(n->overload());
        node.doc_string = s(n->doc_string());
      }
    for (ValueId v : check_ids(fg->outputs(), false)) g.add_output(v);
  }

  Resolver resolve_;
  std::string where_;
};

DecodedImage decode_meta(std::string_view meta, const Resolver& resolve,
                         const std::function<const void*(uint64_t, uint64_t)>& pointer, const std::string& name) {
  flatbuffers::Verifier::Options vo;
  vo.max_depth = 128;
  vo.max_tables = 100000000;
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(meta.data()), meta.size(), vo);
  if (!fb::VerifyModelBuffer(verifier)) throw_bad_input(name + ": session image: META does not verify");
  const fb::Model* m = fb::GetModel(meta.data());
  Decoder d(resolve, name);
  DecodedImage out;
  out.model = std::make_unique<Model>();
  Model& model = *out.model;
  model.ir_version = m->ir_version();
  model.producer_name = s(m->producer_name());
  model.producer_version = s(m->producer_version());
  model.domain = s(m->domain());
  model.doc_string = s(m->doc_string());
  model.model_version = m->model_version();
  if (m->opsets())
    for (const fb::Opset* o : *m->opsets()) model.opsets.push_back({s(o->domain()), o->version()});
  if (m->metadata())
    for (const fb::Metadata* kv : *m->metadata()) model.metadata.emplace_back(s(kv->key()), s(kv->value()));
  model.opaque_extras = bytes_of(m->opaque_extras());
  model.path = name;
  d.fill_graph(m->graph(), *model.graph);
  if (const fb::Plan* p = m->plan()) {
    ImagePlan plan;
    plan.variant = s(p->variant());
    if (p->node_impl())
      for (const auto* x : *p->node_impl()) plan.node_impl.push_back(s(x));
    plan.provider_nodes = s(p->provider_nodes());
    if (p->prepacked())
      for (const fb::Prepacked* x : *p->prepacked())
        plan.prepacked.push_back({x->kernel_id(), s(x->name()), pointer(x->data_offset(), x->data_bytes()), x->data_bytes()});
    if (p->memory())
      for (const fb::MemoryPlan* x : *p->memory()) {
        ImageMemoryPlan mp;
        mp.ordinal = x->ordinal();
        mp.offset = vec(x->offset());
        mp.capacity = vec(x->capacity());
        mp.buffer = vec(x->buffer());
        mp.inplace = vec(x->inplace());
        mp.is_view = vec(x->is_view());
        mp.planned_bytes = vec(x->planned_bytes());
        mp.arena_bytes = x->arena_bytes();
        mp.naive_bytes = x->naive_bytes();
        mp.num_buffers = x->num_buffers();
        mp.num_inplace = x->num_inplace();
        plan.memory.push_back(std::move(mp));
      }
    out.plan = std::move(plan);
  }
  return out;
}

}  // namespace

std::string encode_image_meta(const Model& model, const ImagePlan* plan, ImageDataBuilder& data) {
  Encoder e(data);
  FlatBufferBuilder& b = e.b;
  auto graph = e.graph(*model.graph, nullptr);
  std::vector<Offset<fb::Opset>> opsets;
  for (const OpsetImport& o : model.opsets) opsets.push_back(fb::CreateOpset(b, e.str(o.domain), o.version));
  std::vector<Offset<fb::Metadata>> meta;
  for (const auto& [k, v] : model.metadata) meta.push_back(fb::CreateMetadata(b, e.str(k), e.str(v)));
  auto ov = b.CreateVector(opsets);
  auto mv = b.CreateVector(meta);
  auto pn = e.str(model.producer_name), pv = e.str(model.producer_version), dom = e.str(model.domain),
       doc = e.str(model.doc_string);
  auto extras = model.opaque_extras.empty() ? 0 : e.bytes(model.opaque_extras);
  Offset<fb::Plan> p = plan ? e.plan(*plan) : 0;
  auto root = fb::CreateModel(b, model.ir_version, pn, pv, dom, doc, model.model_version, ov, mv, extras, graph, p);
  fb::FinishModelBuffer(b, root);
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

DecodedImage decode_image(const std::shared_ptr<const MappedImage>& image, const std::string& model_name) {
  auto whole = std::make_shared<KeptBuffer>(std::shared_ptr<const void>(image, image->data()), image->data(),
                                            static_cast<size_t>(image->data_size()));
  auto bad_range = [&]() { throw_bad_input(model_name + ": session image: data outside the DATA section"); };
  Resolver resolve = [&](uint64_t off, uint64_t bytes) -> Resolved {
    if (!image->data_range_ok(off, bytes)) bad_range();
    return {whole, static_cast<size_t>(off)};
  };
  auto pointer = [&](uint64_t off, uint64_t bytes) -> const void* {
    if (!image->data_range_ok(off, bytes) || off % kImageDataAlign != 0) bad_range();
    return image->data() + off;
  };
  return decode_meta(image->meta(), resolve, pointer, model_name);
}

DecodedImage decode_image(std::string_view meta, const ImageDataBuilder& data, std::shared_ptr<const void> keep_alive,
                          const std::string& model_name) {
  auto find = [&](uint64_t off, uint64_t bytes) -> const ImageBlob& {
    const auto& blobs = data.blobs();
    auto it = std::lower_bound(blobs.begin(), blobs.end(), off, [](const auto& x, uint64_t o) { return x.first < o; });
    if (it == blobs.end() || it->first != off || it->second.bytes != bytes)
      throw_internal(model_name + ": session image: data offset " + std::to_string(off) + " was never written");
    return it->second;
  };
  Resolver resolve = [&](uint64_t off, uint64_t bytes) -> Resolved {
    if (bytes == 0) return {make_aligned_buffer(kImageDataAlign), 0};
    const ImageBlob& b = find(off, bytes);
    return {std::make_shared<KeptBuffer>(keep_alive, b.data, b.bytes), 0};
  };
  auto pointer = [&](uint64_t off, uint64_t bytes) -> const void* {
    alignas(64) static const char empty[kImageDataAlign] = {};
    return bytes == 0 ? empty : find(off, bytes).data;
  };
  return decode_meta(meta, resolve, pointer, model_name);
}

}  // namespace fusor::cache
