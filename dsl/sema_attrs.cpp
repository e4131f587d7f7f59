// Attribute lists of calls: names and types from the schema, required attributes, spreads.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

void Sema::check_attrs(CallExpr& c, const std::vector<const OpInfo*>& ops, Scope& sc, bool in_match) {
  std::map<std::string, SourceLoc> set;
  for (auto& item : c.attrs) {
    if (item.spread) {
      if (in_match) {
        diags_.error(item.loc, "'..." + item.name + "' copies attributes in a rewrite; a match can only constrain attributes");
        continue;
      }
      check_spread(item, ops, sc, c);
      continue;
    }
    auto [it, fresh] = set.emplace(item.name, item.loc);
    if (!fresh) diags_.error(item.loc, "attribute " + quote(item.name) + " is set twice");
    if (in_match && !is_match_attr_literal(*item.value)) {
      diags_.error(item.value->loc, "an attribute constraint in a match must be a literal (number, string, list, type or op name)");
      continue;
    }
    ExprType t = expr_type(*item.value, sc);
    for (const OpInfo* op : ops) {
      if (!op) continue;
      const AttrInfo* info = op->attr(item.name);
      if (!info) {
        std::vector<std::string> names;
        for (const auto& a : op->attrs) names.push_back(a.name);
        diags_.error(item.loc, op->qualified() + " has no attribute " + quote(item.name) + did_you_mean(item.name, names));
        continue;
      }
      if (!in_match && info->since > 0) {
        diags_.error(item.loc, "attribute " + quote(item.name) + " of " + op->qualified() + " exists from opset " +
                                   std::to_string(info->since) + ", above the opset the rules are checked at; a " +
                                   "rewrite cannot write it (a guard such as `where { opset() >= " +
                                   std::to_string(info->since) + " }` lifts the check)");
        continue;
      }
      if (info->type == AttrType::Graph || info->type == AttrType::Graphs)
        diags_.error(item.value->loc, "attribute " + quote(item.name) + " of " + op->qualified() +
                                          " holds a graph; rules cannot write graph attributes");
      else if (!fits_attr(info->type, t))
        diags_.error(item.value->loc, "attribute " + quote(item.name) + " of " + op->qualified() + " is " +
                                          attr_type_name(info->type) + ", but the value is " +
                                          (t.kind == Kind::Value ? "a " : "") + t.str());
    }
  }
  if (in_match) return;
  // A rewrite must give every required attribute (directly or through a spread).
  bool has_spread = std::any_of(c.attrs.begin(), c.attrs.end(), [](const AttrItem& a) { return a.spread; });
  for (const OpInfo* op : ops) {
    if (!op || has_spread) continue;
    for (const auto& a : op->attrs)
      if (a.required && !set.count(a.name))
        diags_.error(c.ops[0].loc, op->qualified() + " requires attribute " + quote(a.name));
  }
}

bool Sema::is_literal(const AstExpr& e) {
  if (e.dyn<IntExpr>() || e.dyn<FloatExpr>() || e.dyn<StringExpr>()) return true;
  if (auto* l = e.dyn<ListExpr>())
    return std::all_of(l->elements.begin(), l->elements.end(), [](const ExprPtr& x) { return is_literal(*x); });
  return false;
}

bool Sema::is_match_attr_literal(const AstExpr& e) {
  if (e.dyn<IntExpr>() || e.dyn<FloatExpr>() || e.dyn<StringExpr>() || e.dyn<NameExpr>()) return true;
  if (auto* l = e.dyn<ListExpr>())
    return std::all_of(l->elements.begin(), l->elements.end(), [](const ExprPtr& x) { return is_match_attr_literal(*x); });
  return false;
}

void Sema::check_spread(const AttrItem& item, const std::vector<const OpInfo*>& targets, Scope& sc, const CallExpr& c) {
  const Binding* b = attr_base(item.name, item.loc, sc);
  if (!b || !b->producer || b->producer->call_kind != CallKind::Op) return;
  auto it = ops_.find(b->producer);
  if (it == ops_.end()) return;
  std::set<std::string> overridden;
  for (const auto& a : c.attrs)
    if (!a.spread) overridden.insert(a.name);
  // `y.op <...y>`: each op of y's alternation copies its own attributes.
  const bool same_node = c.matched_op && c.ops.front().domain == item.name;
  for (const OpInfo* src : it->second) {
    if (!src) continue;
    for (const OpInfo* dst : targets) {
      if (!dst || (same_node && dst != src)) continue;
      std::vector<std::string> missing;
      for (const auto& a : src->attrs) {
        if (a.normalized || overridden.count(a.name)) continue;
        const AttrInfo* d = dst->attr(a.name);
        if (!d)
          missing.push_back(a.name);
        else if (d->type != a.type)
          diags_.error(item.loc, "'..." + item.name + "' copies " + src->qualified() + "'s attribute " + quote(a.name) +
                                     " (" + attr_type_name(a.type) + ") into " + dst->qualified() + ", where it is " +
                                     attr_type_name(d->type));
      }
      if (!missing.empty()) {
        std::string list;
        for (size_t i = 0; i < missing.size(); ++i) list += (i ? ", " : "") + missing[i];
        diags_.error(item.loc, "'..." + item.name + "' copies " + src->qualified() + "'s attribute" +
                                   (missing.size() > 1 ? "s " : " ") + list + ", which " + dst->qualified() +
                                   " does not have");
      }
    }
  }
}

}  // namespace fusor::dsl::sema_detail
