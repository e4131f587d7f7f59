#include "engine/rewrite/graph_util.h"

#include <cmath>
#include <sstream>

#include <onnx/defs/schema.h>

#include "core/util/error.h"
#include "core/onnx/fusor_schemas.h"
#include "core/onnx/later_attributes.h"
#include "kernels/common/half.h"
#include "core/ops/op_names.h"
#include "core/ops/op_traits.h"

namespace fusor {

bool touches_non_tensor(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (op_traits(n.op).non_tensor_values) return true;
  for (ValueId v : n.inputs)
    if (v != kNoValue && !g.value(v).type.is_tensor()) return true;
  for (ValueId v : n.outputs)
    if (v != kNoValue && !g.value(v).type.is_tensor()) return true;
  return false;
}

TensorPtr constant_of(const Graph& g, ValueId v) {
  if (v == kNoValue) return nullptr;
  const Value& val = g.value(v);
  if (val.is_constant_initializer()) return val.constant;
  if (val.captured_from != kNoValue) return g.parent() ? constant_of(*g.parent(), val.captured_from) : nullptr;
  if (val.producer == kNoNode) return nullptr;
  const Node& n = g.node(val.producer);
  if (n.op != op::Constant) return nullptr;
  for (const Attribute& a : n.attrs) {
    if (a.name == "value" && a.kind == AttrKind::Tensor) return a.t;
    if (a.name == "value_float") return std::make_shared<const Tensor>(Tensor::scalar<float>(a.f));
    if (a.name == "value_int") return std::make_shared<const Tensor>(Tensor::scalar<int64_t>(a.i));
    if (a.name == "value_floats")
      return std::make_shared<const Tensor>(Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats));
    if (a.name == "value_ints")
      return std::make_shared<const Tensor>(Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints));
  }
  return nullptr;
}

bool prune_unused_captures(Graph& parent, NodeId holder, Graph& g) {
  std::vector<ValueId> outer;
  for (ValueId c : g.captures()) {
    const Value& v = g.value(c);
    if (!v.uses.empty() || v.is_graph_output) continue;
    outer.push_back(v.captured_from);
    g.remove_value(c);
  }
  if (outer.empty()) return false;
  parent.refresh_implicit_inputs(holder);
  for (ValueId pv : outer) {
    const Value& v = parent.value(pv);
    if (v.alive && v.is_constant_initializer() && v.uses.empty() && !v.is_graph_output) parent.remove_value(pv);
  }
  return true;
}

static std::optional<Attribute> from_proto(const onnx::AttributeProto& p, const std::string& name) {
  using T = onnx::AttributeProto;
  switch (p.type()) {
    case T::FLOAT: return Attribute::make_float(name, p.f());
    case T::INT: return Attribute::make_int(name, p.i());
    case T::STRING: return Attribute::make_string(name, p.s());
    case T::FLOATS: return Attribute::make_floats(name, {p.floats().begin(), p.floats().end()});
    case T::INTS: return Attribute::make_ints(name, {p.ints().begin(), p.ints().end()});
    case T::STRINGS: return Attribute::make_strings(name, {p.strings().begin(), p.strings().end()});
    default: return std::nullopt;
  }
}

std::optional<Attribute> onnx_attr_default(OpType op, const std::string& name, int64_t opset) {
  // fusor's ops have ONNX schemas (with their attributes' defaults) once registered.
  if (op.domain() == kFusorDomain) register_fusor_schemas();
  const onnx::OpSchema* s = opset > 0 && op.domain().empty()
      ? onnx::OpSchemaRegistry::Schema(op.name(), static_cast<int>(opset), op.domain())
      : onnx::OpSchemaRegistry::Schema(op.name(), op.domain());
  if (!s) return std::nullopt;
  auto it = s->attributes().find(name);
  if (it == s->attributes().end() && opset > 0 && op.domain().empty()) {
    // Added by a later version: its default there (the first version that has it).
    for (const LaterAttribute& l : attributes_added_after(*s))
      if (l.name == name && l.decl->default_value.has_type()) return from_proto(l.decl->default_value, name);
    return std::nullopt;
  }
  if (it == s->attributes().end() || !it->second.default_value.has_type()) return std::nullopt;
  return from_proto(it->second.default_value, name);
}

static const onnx::OpSchema* schema_of(OpType op, int64_t opset) {
  if (op.domain() == kFusorDomain) register_fusor_schemas();
  return opset > 0 && op.domain().empty() ? onnx::OpSchemaRegistry::Schema(op.name(), static_cast<int>(opset), op.domain())
                                          : onnx::OpSchemaRegistry::Schema(op.name(), op.domain());
}

AttrKind onnx_attr_kind(OpType op, const std::string& name, int64_t opset) {
  const onnx::OpSchema* s = schema_of(op, opset);
  if (!s) return AttrKind::Undefined;
  auto it = s->attributes().find(name);
  if (it == s->attributes().end()) return AttrKind::Undefined;
  using T = onnx::AttributeProto;
  switch (it->second.type) {
    case T::FLOAT: return AttrKind::Float;
    case T::INT: return AttrKind::Int;
    case T::STRING: return AttrKind::String;
    case T::FLOATS: return AttrKind::Floats;
    case T::INTS: return AttrKind::Ints;
    case T::STRINGS: return AttrKind::Strings;
    case T::TENSOR: return AttrKind::Tensor;
    default: return AttrKind::Undefined;
  }
}

DataType literal_dtype(OpType op, int64_t opset, size_t slot, const std::vector<DataType>& known, DataType fallback) {
  const onnx::OpSchema* s = schema_of(op, opset);
  if (!s || s->inputs().empty()) {
    for (DataType d : known)
      if (d != DataType::Undefined) return d;
    return fallback;
  }
  const auto& formals = s->inputs();
  auto formal = [&](size_t i) -> const onnx::OpSchema::FormalParameter& { return formals[std::min(i, formals.size() - 1)]; };
  const auto& f = formal(slot);
  const auto& allowed = f.GetTypes();
  if (allowed.size() == 1 && **allowed.begin() == "tensor(int64)") return DataType::Int64;
  for (size_t i = 0; i < known.size(); ++i)
    if (i != slot && known[i] != DataType::Undefined && formal(i).GetTypeStr() == f.GetTypeStr()) return known[i];
  if (allowed.size() == 1) {
    std::string t = **allowed.begin();
    if (t.rfind("tensor(", 0) == 0) {
      DataType d = dtype_from_name(t.substr(7, t.size() - 8));
      if (d != DataType::Undefined) return d;
    }
  }
  return fallback;
}

Tensor literal_tensor(const Literal& lit, DataType dtype) {
  Shape shape;
  if (lit.is_list) shape.push_back(static_cast<int64_t>(lit.values.size()));
  Tensor t(dtype, shape);
  for (size_t i = 0; i < lit.values.size() && i < static_cast<size_t>(t.numel()); ++i) {
    double v = lit.values[i];
    switch (dtype) {
      case DataType::Float: t.data<float>()[i] = static_cast<float>(v); break;
      case DataType::Double: t.data<double>()[i] = v; break;
      case DataType::Float16: t.data<uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
      case DataType::Int64: t.data<int64_t>()[i] = static_cast<int64_t>(v); break;
      case DataType::Int32: t.data<int32_t>()[i] = static_cast<int32_t>(v); break;
      case DataType::Int16: t.data<int16_t>()[i] = static_cast<int16_t>(v); break;
      case DataType::Int8: t.data<int8_t>()[i] = static_cast<int8_t>(v); break;
      case DataType::UInt8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
      case DataType::UInt16: t.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
      case DataType::UInt32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v); break;
      case DataType::UInt64: t.data<uint64_t>()[i] = static_cast<uint64_t>(v); break;
      case DataType::Bool: t.data<bool>()[i] = v != 0; break;
      default: throw_bad_input(std::string("a literal cannot have element type ") + dtype_name(dtype));
    }
  }
  return t;
}

// A constant element against a literal value: an integer literal (`Add(x, 0)`) is exact even
// against float constants, so `Add(v, 0)` does not match an epsilon such as 1e-6; a float literal
// is within the literal tolerance.
static bool literal_close(double a, double b, bool integer_literal) { return integer_literal ? a == b : within_literal_tolerance(a, b); }

bool literal_matches(const Literal& lit, const Tensor& t, int out_rank) {
  if (t.dtype() == DataType::String || !t.defined()) return false;
  bool is_float = dtype_is_float(t.dtype());
  if (!is_float && !lit.is_integer) {
    // A float literal matches an integer constant only when it is integral.
    for (double v : lit.values)
      if (std::floor(v) != v) return false;
  }
  if (lit.is_list) {
    if (t.rank() != 1 || t.numel() != static_cast<int64_t>(lit.values.size())) return false;
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (is_float ? !literal_close(t.as_double(i), lit.values[i], lit.is_integer) : t.as_int64(i) != static_cast<int64_t>(lit.values[i]))
        return false;
    }
    return true;
  }
  for (int64_t d : t.shape())
    if (d != 1) return false;
  if (t.rank() > (out_rank < 0 ? 1 : out_rank)) return false;
  double want = lit.values.empty() ? 0 : lit.values[0];
  if (t.numel() != 1) return false;
  return is_float ? literal_close(t.as_double(0), want, lit.is_integer) : t.as_int64(0) == static_cast<int64_t>(want);
}

bool attr_equal(const Attribute& a, const Attribute& b) {
  auto num_list = [](const Attribute& x, std::vector<double>& out) {
    switch (x.kind) {
      case AttrKind::Int: out = {static_cast<double>(x.i)}; return true;
      case AttrKind::Float: out = {x.f}; return true;
      case AttrKind::Ints: out.assign(x.ints.begin(), x.ints.end()); return true;
      case AttrKind::Floats: out.assign(x.floats.begin(), x.floats.end()); return true;
      default: return false;
    }
  };
  std::vector<double> va, vb;
  if (num_list(a, va) && num_list(b, vb)) {
    bool la = a.kind == AttrKind::Ints || a.kind == AttrKind::Floats;
    bool lb = b.kind == AttrKind::Ints || b.kind == AttrKind::Floats;
    if (la != lb || va.size() != vb.size()) return false;
    for (size_t i = 0; i < va.size(); ++i)
      if (!within_literal_tolerance(va[i], vb[i])) return false;
    return true;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case AttrKind::String: return a.s == b.s;
    case AttrKind::Strings: return a.strings == b.strings;
    case AttrKind::Tensor: return a.t && b.t && a.t->bit_equal(*b.t);
    case AttrKind::Graph: return a.g == b.g;
    case AttrKind::Graphs: return a.graphs == b.graphs;
    case AttrKind::Tensors: return false;
    case AttrKind::Opaque: return a.opaque == b.opaque;
    default: return false;
  }
}

std::string attr_str(const Attribute& a) {
  std::ostringstream os;
  os << a.name << " = ";
  auto list = [&](const auto& v) {
    os << '[';
    for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
    os << ']';
  };
  switch (a.kind) {
    case AttrKind::Int: os << a.i; break;
    case AttrKind::Float: os << a.f; break;
    case AttrKind::String: os << '"' << a.s << '"'; break;
    case AttrKind::Ints: list(a.ints); break;
    case AttrKind::Floats: list(a.floats); break;
    case AttrKind::Strings: list(a.strings); break;
    default: os << '<' << attr_kind_name(a.kind) << '>';
  }
  return os.str();
}

}  // namespace fusor
