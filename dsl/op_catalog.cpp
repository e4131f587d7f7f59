#include "dsl/op_catalog.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <climits>

#include "core/onnx/later_attributes.h"
#include "dsl/fusor_ops.h"
#include "dsl/suggest.h"

namespace fusor::dsl {
namespace {

const DataType kAllTypes[] = {DataType::Float,  DataType::UInt8,   DataType::Int8,    DataType::UInt16,
                              DataType::Int16,  DataType::Int32,   DataType::Int64,   DataType::String,
                              DataType::Bool,   DataType::Float16, DataType::Double,  DataType::UInt32,
                              DataType::UInt64, DataType::Complex64, DataType::Complex128, DataType::BFloat16};

// "tensor(float)" -> Float; Undefined for non-tensor types (sequences, optionals, maps).
DataType tensor_elem(const std::string& s) {
  const std::string prefix = "tensor(";
  if (s.compare(0, prefix.size(), prefix) != 0 || s.back() != ')') return DataType::Undefined;
  return dtype_from_rule_name(s.substr(prefix.size(), s.size() - prefix.size() - 1));
}

AttrType from_onnx(onnx::AttributeProto::AttributeType t) {
  switch (t) {
    case onnx::AttributeProto::FLOAT: return AttrType::Float;
    case onnx::AttributeProto::INT: return AttrType::Int;
    case onnx::AttributeProto::STRING: return AttrType::String;
    case onnx::AttributeProto::TENSOR: return AttrType::Tensor;
    case onnx::AttributeProto::GRAPH: return AttrType::Graph;
    case onnx::AttributeProto::FLOATS: return AttrType::Floats;
    case onnx::AttributeProto::INTS: return AttrType::Ints;
    case onnx::AttributeProto::STRINGS: return AttrType::Strings;
    case onnx::AttributeProto::TENSORS: return AttrType::Tensors;
    case onnx::AttributeProto::GRAPHS: return AttrType::Graphs;
    default: return AttrType::Other;
  }
}

std::string default_text(const onnx::AttributeProto& a) {
  auto num = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: return num(a.f());
    case onnx::AttributeProto::INT: return std::to_string(a.i());
    case onnx::AttributeProto::STRING: return a.s();
    case onnx::AttributeProto::INTS: {
      std::string s = "[";
      for (int i = 0; i < a.ints_size(); ++i) s += (i ? ", " : "") + std::to_string(a.ints(i));
      return s + "]";
    }
    case onnx::AttributeProto::FLOATS: {
      std::string s = "[";
      for (int i = 0; i < a.floats_size(); ++i) s += (i ? ", " : "") + num(a.floats(i));
      return s + "]";
    }
    default: return "";
  }
}

const char* const kCommutative[] = {"Add", "Mul", "Max", "Min", "Sum", "Mean", "Equal", "And", "Or", "Xor",
                                    "BitwiseAnd", "BitwiseOr", "BitwiseXor"};

// The attributes later versions of s's op added with a default (AttrInfo::since), kept sorted.
void add_later_attrs(OpInfo& op, const onnx::OpSchema& s) {
  for (const LaterAttribute& l : attributes_added_after(s)) {
    if (op.attr(l.name) || l.decl->required || !l.decl->default_value.has_type()) continue;
    AttrInfo info;
    info.name = l.name;
    info.type = from_onnx(l.decl->type);
    info.default_text = default_text(l.decl->default_value);
    info.since = l.since;
    op.attrs.push_back(std::move(info));
  }
  std::sort(op.attrs.begin(), op.attrs.end(), [](const AttrInfo& x, const AttrInfo& y) { return x.name < y.name; });
}

std::unique_ptr<OpInfo> from_schema(const onnx::OpSchema& s) {
  auto op = std::make_unique<OpInfo>();
  op->domain = s.domain() == "ai.onnx" ? "" : s.domain();
  op->name = s.Name();
  op->since_version = s.SinceVersion();
  op->doc = s.doc() ? s.doc() : "";
  auto formals = [](const std::vector<onnx::OpSchema::FormalParameter>& ps) {
    std::vector<FormalParam> out;
    for (const auto& p : ps) {
      FormalParam f;
      f.name = p.GetName();
      f.type_str = p.GetTypeStr();
      f.option = p.GetOption() == onnx::OpSchema::Optional   ? ParamOption::Optional
                 : p.GetOption() == onnx::OpSchema::Variadic ? ParamOption::Variadic
                                                              : ParamOption::Single;
      out.push_back(std::move(f));
    }
    return out;
  };
  op->inputs = formals(s.inputs());
  op->outputs = formals(s.outputs());
  op->min_inputs = s.min_input();
  op->max_inputs = s.max_input();
  op->min_outputs = s.min_output();
  op->max_outputs = s.max_output();
  for (const auto& [name, a] : s.attributes()) {
    AttrInfo info;
    info.name = name;
    info.type = from_onnx(a.type);
    info.required = a.required;
    if (a.default_value.has_name() || a.default_value.type() != onnx::AttributeProto::UNDEFINED)
      info.default_text = default_text(a.default_value);
    op->attrs.push_back(std::move(info));
  }
  // Normalization lifts Clip's min/max inputs (opset >= 11) to attributes the rules can read.
  if (op->domain.empty() && op->name == "Clip" && !op->attr("min")) {
    op->attrs.push_back({"min", AttrType::Float, false, true, "-inf"});
    op->attrs.push_back({"max", AttrType::Float, false, true, "inf"});
  }
  std::sort(op->attrs.begin(), op->attrs.end(), [](const AttrInfo& x, const AttrInfo& y) { return x.name < y.name; });
  for (const auto& tc : s.typeConstraintParams()) {
    TypeSet set = 0;
    for (const auto& t : tc.allowed_type_strs) {
      DataType dt = tensor_elem(t);
      if (dt != DataType::Undefined) set |= type_bit(dt);
    }
    op->constraints[tc.type_param_str] = set == 0 ? kAnyType : set;
  }
  if (op->domain.empty())
    for (const char* c : kCommutative)
      if (op->name == c) op->commutative = true;
  return op;
}

}  // namespace

TypeSet float_types() {
  return type_bit(DataType::Float) | type_bit(DataType::Double) | type_bit(DataType::Float16) |
         type_bit(DataType::BFloat16);
}

TypeSet numeric_types() {
  TypeSet s = float_types();
  for (DataType t : {DataType::UInt8, DataType::Int8, DataType::UInt16, DataType::Int16, DataType::Int32,
                     DataType::Int64, DataType::UInt32, DataType::UInt64})
    s |= type_bit(t);
  return s;
}

std::string typeset_str(TypeSet s) {
  if ((s & kAnyType) == kAnyType) return "any type";
  if (s == numeric_types()) return "any numeric type";
  if (s == (numeric_types() | type_bit(DataType::Bool))) return "any numeric type or bool";
  std::vector<std::string> names;
  for (DataType t : kAllTypes)
    if (s & type_bit(t)) names.push_back(dtype_name(t));
  if (names.empty()) return "no type";
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

const char* attr_type_name(AttrType t) {
  switch (t) {
    case AttrType::Float: return "float";
    case AttrType::Int: return "int";
    case AttrType::String: return "string";
    case AttrType::Tensor: return "tensor";
    case AttrType::Graph: return "graph";
    case AttrType::Floats: return "floats";
    case AttrType::Ints: return "ints";
    case AttrType::Strings: return "strings";
    case AttrType::Tensors: return "tensors";
    case AttrType::Graphs: return "graphs";
    case AttrType::Other: return "other";
  }
  return "other";
}

DataType dtype_from_rule_name(const std::string& s) {
  for (DataType t : kAllTypes)
    if (s == dtype_name(t)) return t;
  return DataType::Undefined;
}

const AttrInfo* OpInfo::attr(const std::string& n) const {
  for (const auto& a : attrs)
    if (a.name == n) return &a;
  return nullptr;
}

const FormalParam* OpInfo::input_formal(size_t i) const {
  if (i < inputs.size()) return &inputs[i];
  if (!inputs.empty() && inputs.back().option == ParamOption::Variadic) return &inputs.back();
  return nullptr;
}

const FormalParam* OpInfo::output_formal(size_t i) const {
  if (i < outputs.size()) return &outputs[i];
  if (!outputs.empty() && outputs.back().option == ParamOption::Variadic) return &outputs.back();
  return nullptr;
}

TypeSet OpInfo::types_of(const FormalParam& p) const {
  auto it = constraints.find(p.type_str);
  if (it != constraints.end()) return it->second;
  DataType dt = tensor_elem(p.type_str);
  return dt == DataType::Undefined ? kAnyType : type_bit(dt);
}

int OpCatalog::newest_onnx_opset() {
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = m.find(onnx::ONNX_DOMAIN);
  return it == m.end() ? 17 : it->second.second;
}

OpCatalog::OpCatalog(int onnx_opset) : opset_(onnx_opset > 0 ? onnx_opset : newest_onnx_opset()) {}

bool OpCatalog::known_domain(const std::string& domain) const {
  if (domain.empty() || domain == "fusor" || domain == "ai.onnx") return true;
  const auto& m = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  return m.count(domain) > 0;
}

OpLookupResult OpCatalog::find(const std::string& domain_in, const std::string& name, int opset) const {
  const std::string domain = domain_in == "ai.onnx" ? "" : domain_in;
  OpLookupResult r;
  if (!known_domain(domain)) {
    r.status = OpLookup::UnknownDomain;
    return r;
  }
  if (domain == "fusor") {
    r.op = find_fusor_op(name);
    r.status = r.op ? OpLookup::Found : OpLookup::UnknownOp;
    return r;
  }
  int version = INT_MAX;  // other ONNX-registered domains (ai.onnx.ml): their newest version
  if (domain.empty()) version = opset > 0 ? opset : opset_;
  const std::string key = domain + '\0' + name + '\0' + std::to_string(version);
  auto it = cache_.find(key);
  if (it != cache_.end()) {
    r.op = it->second.get();
    r.status = OpLookup::Found;
    return r;
  }
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(name, version, domain);
  if (!s) {
    const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(name, domain);
    if (later) {
      r.status = OpLookup::NotYet;
      r.first_version = later->SinceVersion();
    } else {
      r.status = OpLookup::UnknownOp;
    }
    return r;
  }
  if (s->Deprecated()) {
    r.status = OpLookup::Deprecated;
    r.first_version = s->SinceVersion();
    return r;
  }
  auto info = from_schema(*s);
  if (domain.empty()) add_later_attrs(*info, *s);
  r.op = info.get();
  r.status = OpLookup::Found;
  cache_.emplace(key, std::move(info));
  return r;
}

std::string OpCatalog::suggest(const std::string& domain_in, const std::string& name) const {
  const std::string domain = domain_in == "ai.onnx" ? "" : domain_in;
  std::vector<std::string> names;
  if (domain == "fusor") {
    for (const auto& op : fusor_ops()) names.push_back(op.name);
  } else {
    for (const auto& s : onnx::OpSchemaRegistry::get_all_schemas())
      if ((s.domain() == "ai.onnx" ? std::string() : s.domain()) == domain) names.push_back(s.Name());
    std::sort(names.begin(), names.end());
  }
  return closest_name(name, names);
}

}  // namespace fusor::dsl
