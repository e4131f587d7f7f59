// Element-type variables of op nodes, unified through the schema's type constraints.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

std::vector<int> Sema::node_types(CallExpr& c, const std::vector<const OpInfo*>& ops, const std::vector<int>& arg_vars,
                                  size_t num_outputs) {
  std::vector<int> outs;
  const OpInfo* op = ops.size() == 1 ? ops[0] : nullptr;
  std::map<std::string, int> local;
  auto formal_var = [&](const FormalParam& f) -> int {
    if (!op->constraints.count(f.type_str)) return solver_.fresh(op->types_of(f));
    auto it = local.find(f.type_str);
    if (it != local.end()) return it->second;
    return local[f.type_str] = solver_.fresh(op->types_of(f));
  };
  if (op) {
    for (size_t i = 0; i < arg_vars.size(); ++i) {
      const FormalParam* f = op->input_formal(i);
      if (!f || arg_vars[i] < 0) continue;
      int fv = formal_var(*f);
      if (!solver_.unify(arg_vars[i], fv))
        diags_.error(c.args[i]->loc, "element types cannot agree: " + slot_name(*op, i) + " takes " +
                                         typeset_str(solver_.set(fv)) + ", but this value is " +
                                         typeset_str(solver_.set(arg_vars[i])));
    }
  }
  for (size_t j = 0; j < std::max<size_t>(num_outputs, 1); ++j) {
    const FormalParam* f = op ? op->output_formal(j) : nullptr;
    int v = f ? formal_var(*f) : solver_.fresh();
    if (op && op->domain.empty() && op->name == "Cast" && j == 0) {
      for (const auto& a : c.attrs) {
        if (a.spread || a.name != "to") continue;
        DataType to = DataType::Undefined;
        if (auto* n = a.value->dyn<NameExpr>()) to = dtype_from_rule_name(n->name);
        if (auto* i = a.value->dyn<IntExpr>()) to = static_cast<DataType>(i->value);
        if (to != DataType::Undefined && static_cast<int>(to) > 0 && static_cast<int>(to) < 32)
          solver_.restrict(v, type_bit(to));
      }
    }
    outs.push_back(v);
  }
  return outs;
}

}  // namespace fusor::dsl::sema_detail
