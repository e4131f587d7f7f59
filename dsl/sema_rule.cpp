// A whole rule: header clauses, blocks, matched outputs left undefined or retyped, test blocks.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

void Sema::check_rule(RuleDecl& r) {
  opset_ = rule_opset(r);
  if (r.has_level && !parse_rule_level(r.level_text))
    diags_.error(r.level_loc, "unknown level " + quote(r.level_text) + "; expected basic, extended, layout or all" +
                                  did_you_mean(r.level_text, {"basic", "extended", "layout", "all"}));
  std::set<std::string> provs;
  for (const auto& p : r.providers)
    if (!provs.insert(p.name).second) diags_.error(p.loc, "provider " + quote(p.name) + " is listed twice");
  if (r.benefit && *r.benefit < 0) diags_.error(r.benefit_loc, "benefit must not be negative");

  Scope sc;
  place_ = Place::Match;
  if (r.match.empty()) diags_.error(r.loc, "rule " + quote(r.name) + " matches nothing: its match block is empty");
  if (!r.match.empty()) {
    const auto& outs = r.match.back().outputs;
    if (std::all_of(outs.begin(), outs.end(), [](const OutputName& o) { return o.name == "_"; }))
      diags_.error(r.match.back().loc, "the root statement (the last of the match) names no output, so the rewrite has "
                                       "nothing to replace");
  }
  const size_t errors_before_match = diags_.error_count();
  for (auto& s : r.match) match_statement(s, sc);
  if (diags_.error_count() == errors_before_match) check_connected(r.match);  // no cascades

  place_ = Place::Where;
  for (auto& w : r.where) {
    ExprType t = expr_type(*w, sc);
    if (t.kind != Kind::Bool && t.kind != Kind::Unknown) kind_error(*w, "a where condition must be true or false", t);
  }

  place_ = Place::Rewrite;
  for (auto& s : r.rewrite)
    for (const auto& o : s.outputs)
      if (o.name != "_" && !sc.rewrite_later.count(o.name)) sc.rewrite_later[o.name] = o.loc;
  for (auto& s : r.rewrite) rewrite_statement(s, sc);
  warn_unused_temporaries(r, sc);

  // Every output of the match (a value no other match statement consumes) needs a new value.
  for (const auto& s : r.match) {
    for (const auto& o : s.outputs) {
      auto it = sc.match.find(o.name);
      if (o.name == "_" || it == sc.match.end() || !it->second.produced || it->second.loc.line != o.loc.line ||
          it->second.loc.col != o.loc.col || it->second.consumed)
        continue;
      auto rw = sc.rewrite.find(o.name);
      if (rw == sc.rewrite.end()) {
        diags_.error(o.loc, "the rewrite leaves matched output " + quote(o.name) +
                                " undefined; redefine it in the rewrite, or name it '_' in the match if it must have no consumers");
        continue;
      }
      TypeSet before = solver_.set(it->second.var), after = solver_.set(rw->second.var);
      if ((before & after) == 0)
        diags_.error(rw->second.loc, "the rewrite changes the element type of " + quote(o.name) + ": the match gives it " +
                                         typeset_str(before) + ", the rewrite " + typeset_str(after));
    }
  }
  // Internal values the rewrite redefines must keep their type too.
  for (const auto& [name, rw] : sc.rewrite) {
    auto it = sc.match.find(name);
    if (it == sc.match.end() || !it->second.consumed) continue;
    TypeSet before = solver_.set(it->second.var), after = solver_.set(rw.var);
    if ((before & after) == 0)
      diags_.error(rw.loc, "the rewrite changes the element type of " + quote(name) + ": the match gives it " +
                               typeset_str(before) + ", the rewrite " + typeset_str(after));
  }

  place_ = Place::Test;
  for (auto& t : r.tests) check_test(t, r, sc);
}

std::set<std::string> Sema::required_constants(const RuleDecl& r) {
  std::set<std::string> out;
  std::function<void(const AstExpr&)> scan = [&](const AstExpr& e) {
    if (auto* b = e.dyn<BinaryExpr>()) {
      if (b->op == BinaryOp::And) {
        scan(*b->lhs);
        scan(*b->rhs);
      }
      return;
    }
    auto* c = e.dyn<CallExpr>();
    if (!c || c->ops.size() != 1 || c->callee() != "const") return;
    for (const auto& a : c->args)
      if (auto* n = a->dyn<NameExpr>()) out.insert(n->name);
  };
  for (const auto& w : r.where) scan(*w);
  return out;
}

void Sema::check_test(TestBlock& t, const RuleDecl& r, Scope& sc) {
  const std::set<std::string> consts = required_constants(r);
  std::map<std::string, SourceLoc> given;
  for (auto& in : t.inputs) {
    auto it = sc.match.find(in.name);
    if (it == sc.match.end()) {
      std::vector<std::string> caps;
      for (const auto& [n, b] : sc.match)
        if (!b.produced) caps.push_back(n);
      diags_.error(in.loc, quote(in.name) + " is not an input of the match" + did_you_mean(in.name, caps));
      continue;
    }
    if (it->second.produced) {
      diags_.error(in.loc, quote(in.name) + " is produced by the match; a test gives only the match's inputs");
      continue;
    }
    auto [g, fresh] = given.emplace(in.name, in.loc);
    if (!fresh) {
      diags_.error(in.loc, quote(in.name) + " is given twice in this test (first at " + at(g->second) + ")");
      continue;
    }
    if (in.absent) {
      if (!it->second.optional)
        diags_.error(in.loc, quote(in.name) + " is not optional in the match, so it cannot be 'none'");
      continue;
    }
    DataType dt = dtype_from_rule_name(in.dtype);
    if (dt == DataType::Undefined) {
      std::vector<std::string> names = {"float", "double", "float16", "bfloat16", "int8", "int16", "int32", "int64",
                                        "uint8", "uint16", "uint32", "uint64", "bool"};
      diags_.error(in.dtype_loc, "unknown element type " + quote(in.dtype) + did_you_mean(in.dtype, names));
    }
    for (size_t d = 0; d < in.dims.size(); ++d)
      if (in.dims[d] <= 0) diags_.error(in.loc, "test shapes need positive dimensions; dimension " + std::to_string(d) + " is " + std::to_string(in.dims[d]));
    if (consts.count(in.name) && !in.is_const)
      diags_.error(in.loc, quote(in.name) + " must be a constant: the where clause requires const(" + in.name +
                               "); write '" + in.name + ": const " + in.dtype + "[...]'");
    if (in.value) {
      if (!in.is_const) diags_.error(in.value->loc, "only a constant ('const') input can be given a value");
      Kind k = literal_kind(*in.value);
      if (k == Kind::Unknown && !in.value->dyn<ListExpr>())
        diags_.error(in.value->loc, "a test value must be a number or a list of numbers");
      else if (k == Kind::Float && dt != DataType::Undefined && !dtype_is_float(dt))
        diags_.error(in.value->loc, "literal of the wrong kind: " + quote(in.name) + " is " + in.dtype +
                                        ", but the value is a float literal");
      else if (k == Kind::String)
        diags_.error(in.value->loc, "literal of the wrong kind: a test value is numeric");
    }
  }
  for (const auto& [name, loc] : sc.capture_order) {
    const Binding& b = sc.match.at(name);
    if (b.produced || b.optional || given.count(name)) continue;
    diags_.error(t.loc, "the test gives no type for input " + quote(name) + " (write '" + name + ": " +
                            (consts.count(name) ? "const " : "") + "float[...]')");
  }
  std::set<std::pair<std::string, std::string>> attrs_given;
  for (auto& a : t.attrs) {
    const Binding* b = attr_base(a.value_name, a.loc, sc);
    if (!b) continue;
    if (!attrs_given.insert({a.value_name, a.attr}).second)
      diags_.error(a.loc, quote(a.value_name + "." + a.attr) + " is set twice in this test");
    if (!b->producer || b->producer->call_kind != CallKind::Op) continue;
    auto ops = ops_.find(b->producer);
    if (ops == ops_.end()) continue;
    if (a.attr == "op") {
      // Picks the alternative of an alternation the test instantiates.
      std::string chosen;
      if (auto* n = a.value->dyn<NameExpr>()) chosen = n->name;
      if (auto* q = a.value->dyn<AttrReadExpr>()) chosen = q->base + "." + q->attr;
      bool found = false;
      for (const auto& ref : b->producer->ops) found |= ref.qualified() == chosen;
      if (!found) diags_.error(a.value->loc, quote(chosen) + " is not one of the ops matched for " + quote(a.value_name));
      continue;
    }
    ExprType t2 = expr_type(*a.value, sc);
    for (const OpInfo* op : ops->second) {
      if (!op) continue;
      const AttrInfo* info = op->attr(a.attr);
      if (!info) {
        if (b->producer->ops.size() == 1) {
          std::vector<std::string> names;
          for (const auto& x : op->attrs) names.push_back(x.name);
          diags_.error(a.loc, op->qualified() + " has no attribute " + quote(a.attr) + did_you_mean(a.attr, names));
        }
        continue;
      }
      if (!fits_attr(info->type, t2))
        diags_.error(a.value->loc, "attribute " + quote(a.attr) + " of " + op->qualified() + " is " +
                                       attr_type_name(info->type) + ", but the value is " + t2.str());
    }
  }
  if (t.tolerance && !(*t.tolerance > 0)) diags_.error(t.tolerance_loc, "tolerance must be positive");
}

}  // namespace fusor::dsl::sema_detail
