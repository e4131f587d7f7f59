#include "dsl/fusor_ops.h"

#include <algorithm>
#include <stdexcept>

namespace fusor::dsl {
namespace {

AttrType attr_kind(const std::string& k, const std::string& op) {
  static const std::pair<const char*, AttrType> kinds[] = {
      {"float", AttrType::Float}, {"int", AttrType::Int}, {"string", AttrType::String},
      {"floats", AttrType::Floats}, {"ints", AttrType::Ints}, {"strings", AttrType::Strings},
      {"tensor", AttrType::Tensor}};
  for (const auto& [n, t] : kinds)
    if (k == n) return t;
  // The table is compiled in: a typo here is a bug in fusor, caught by the tests.
  throw std::logic_error("fusor_ops: bad attribute kind '" + k + "' in " + op);
}

std::vector<FormalParam> params(const std::vector<FusorParam>& ps) {
  std::vector<FormalParam> out;
  for (const auto& p : ps) {
    FormalParam f;
    f.name = p.name;
    f.type_str = p.type;
    f.option = p.option == FusorParam::Option::Variadic   ? ParamOption::Variadic
               : p.option == FusorParam::Option::Optional ? ParamOption::Optional
                                                          : ParamOption::Single;
    out.push_back(std::move(f));
  }
  return out;
}

void count(const std::vector<FormalParam>& ps, int& lo, int& hi) {
  lo = 0;
  hi = 0;
  for (const auto& p : ps) {
    if (p.option == ParamOption::Single) lo = static_cast<int>(&p - ps.data()) + 1;
    hi = p.option == ParamOption::Variadic ? 2147483647 : hi + 1;
  }
}

OpInfo to_op_info(const FusorOpSignature& s) {
  OpInfo op;
  op.domain = "fusor";
  op.name = s.name;
  op.since_version = kFusorOpsetVersion;
  op.doc = s.doc;
  op.inputs = params(s.inputs);
  op.outputs = params(s.outputs);
  count(op.inputs, op.min_inputs, op.max_inputs);
  count(op.outputs, op.min_outputs, op.max_outputs);
  for (const auto& c : s.constraints) {
    TypeSet set = 0;
    for (const auto& t : c.types) {
      DataType dt = dtype_from_rule_name(t);
      if (dt == DataType::Undefined) throw std::logic_error("fusor_ops: bad type '" + t + "' in " + op.name);
      set |= type_bit(dt);
    }
    op.constraints[c.name] = set;
  }
  for (const auto& a : s.attrs) {
    op.attrs.push_back(AttrInfo{a.name, attr_kind(a.kind, s.name), a.required, false, a.default_text});
  }
  std::sort(op.attrs.begin(), op.attrs.end(), [](const AttrInfo& x, const AttrInfo& y) { return x.name < y.name; });
  return op;
}

}  // namespace

const std::vector<OpInfo>& fusor_ops() {
  static const std::vector<OpInfo> ops = [] {
    std::vector<OpInfo> v;
    for (const auto& s : fusor_op_signatures()) v.push_back(to_op_info(s));
    return v;
  }();
  return ops;
}

const OpInfo* find_fusor_op(const std::string& name) {
  for (const auto& op : fusor_ops())
    if (op.name == name) return &op;
  return nullptr;
}

}  // namespace fusor::dsl
