// Rewrite statements: names, inputs, absent optional inputs, redefinitions.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

int Sema::rewrite_name_var(const std::string& name, const SourceLoc& loc, Scope& sc) {
  auto r = sc.rewrite.find(name);
  if (r != sc.rewrite.end()) return r->second.var;
  auto m = sc.match.find(name);
  if (m != sc.match.end()) return m->second.var;
  report_unbound(name, loc, sc);
  return -1;
}

std::vector<int> Sema::rewrite_value(AstExpr& e, Scope& sc, size_t num_outputs) {
  if (auto* c = e.dyn<CallExpr>()) {
    resolve(*c, Place::Rewrite);
    if (c->call_kind == CallKind::Op) return rewrite_call(*c, sc, num_outputs);
    if (c->call_kind == CallKind::Pattern) {
      diags_.error(c->loc, "pattern " + quote(c->callee()) + " can only be called in a match");
      return {-1};
    }
  }
  if (auto* n = e.dyn<NameExpr>()) return {rewrite_name_var(n->name, n->loc, sc)};
  if (e.dyn<IntExpr>() || e.dyn<FloatExpr>() || (e.dyn<ListExpr>() && is_literal(e))) {
    literal_kind(e);
    return {-1};
  }
  if (auto* l = e.dyn<ListExpr>()) {  // computed: `[shape(x)[0], -1]` becomes a constant tensor
    for (auto& el : l->elements) {
      ExprType et = expr_type(*el, sc);
      if (!et.is_number()) kind_error(*el, "a list in a rewrite becomes a constant tensor and must hold numbers", et);
    }
    return {-1};
  }
  ExprType t = expr_type(e, sc);
  if (t.kind == Kind::Bool || t.kind == Kind::Op || t.kind == Kind::DType || t.kind == Kind::Attrs ||
      t.kind == Kind::String)
    kind_error(e, "a rewrite value must be a tensor or a number", t);
  return {-1};
}

std::vector<int> Sema::rewrite_call(CallExpr& c, Scope& sc, size_t num_outputs) {
  if (c.ops.size() > 1) {
    diags_.error(c.ops[1].loc, "an alternation can only be matched; a rewrite creates one op");
    return {-1};
  }
  resolve_matched_op(c, sc);
  std::vector<const OpInfo*> ops = ops_of(c);
  check_attrs(c, ops, sc, false);
  std::vector<int> arg_vars;
  bool has_variadic = false;
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (c.args[i]->dyn<VariadicExpr>()) has_variadic = true;
    arg_vars.push_back(rewrite_arg(*c.args[i], i, ops[0], sc));
  }
  check_arity(c, ops, c.args.size() - (has_variadic ? 1 : 0), has_variadic);
  return node_types(c, ops, arg_vars, num_outputs);
}

void Sema::resolve_matched_op(CallExpr& c, Scope& sc) {
  const OpRef& ref = c.ops.front();
  if (ref.domain.empty() || ops_.count(&c)) return;
  auto it = sc.match.find(ref.domain);
  if (it == sc.match.end()) return;  // an op of another domain (fusor.Gelu), checked as such
  const Binding& b = it->second;
  ops_[&c] = {nullptr};  // reported here, not again as an unknown domain
  if (ref.name != "op") {
    diags_.error(ref.loc, quote(ref.qualified()) + " is not an op; " + quote(ref.domain + ".op") +
                              " creates the op that matched " + quote(ref.domain));
    return;
  }
  if (!b.produced) {
    diags_.error(ref.loc, quote(ref.domain) + " is an input of the match, not the output of a matched node, so it has no op to reuse");
    return;
  }
  if (!b.producer || b.producer->call_kind != CallKind::Op) {
    diags_.error(ref.loc, quote(ref.domain) + " is the result of a pattern call; " + quote(ref.domain + ".op") +
                              " needs a value an op of the match produces");
    return;
  }
  c.matched_op = true;
  ops_[&c] = ops_of(*const_cast<CallExpr*>(b.producer));
}

int Sema::rewrite_arg(AstExpr& a, size_t i, const OpInfo* op, Scope& sc) {
  const FormalParam* f = op ? op->input_formal(i) : nullptr;
  switch (a.kind) {
    case ExprKind::Wildcard:
      diags_.error(a.loc, "'_' matches any value; a rewrite must say which value to use");
      return -1;
    case ExprKind::Optional: {
      const std::string& n = a.dyn<OptionalExpr>()->name;
      diags_.error(a.loc, quote(n + "?") + " belongs in a match; in a rewrite write " + quote(n) +
                              " (passes it on, absent or not) or " + quote(n + " ?? 0.0"));
      return -1;
    }
    case ExprKind::Variadic: {
      auto& v = *a.dyn<VariadicExpr>();
      auto m = sc.match.find(v.name);
      if (m == sc.match.end() || !m->second.variadic) {
        diags_.error(a.loc, quote(v.name + "...") + " passes on variadic inputs matched as " + quote(v.name + "...") +
                                ", but the match has none by that name");
        return -1;
      }
      if (op && (!f || f->option != ParamOption::Variadic))
        diags_.error(a.loc, quote(v.name + "...") + " needs a variadic input, and " +
                                (f ? slot_name(*op, i) + " is not variadic" : op->qualified() + " has no input " + std::to_string(i + 1)));
      return m->second.var;
    }
    case ExprKind::Name: {
      auto& n = *a.dyn<NameExpr>();
      int v = rewrite_name_var(n.name, n.loc, sc);
      auto m = sc.match.find(n.name);
      if (!sc.rewrite.count(n.name) && m != sc.match.end() && m->second.optional && op && f &&
          f->option == ParamOption::Single)
        diags_.error(a.loc, quote(n.name) + " may be absent (it is matched as " + quote(n.name + "?") + "), but " +
                                slot_name(*op, i) + " is required; write " + quote(n.name + " ?? 0.0") + " for a default");
      return v;
    }
    case ExprKind::Coalesce: {
      auto& co = *a.dyn<CoalesceExpr>();
      int v = -1;
      auto* n = co.value->dyn<NameExpr>();
      auto m = n ? sc.match.find(n->name) : sc.match.end();
      if (!n || m == sc.match.end() || !m->second.optional || sc.rewrite.count(n->name)) {
        diags_.error(co.value->loc, "'?" "?' needs an optional input of the match (matched as 'x?') on its left");
      } else {
        v = m->second.var;
      }
      if (op && (co.fallback->dyn<IntExpr>() || co.fallback->dyn<FloatExpr>() || co.fallback->dyn<ListExpr>()))
        check_literal_input(*co.fallback, *op, i);
      else
        rewrite_value(*co.fallback, sc, 1);
      return v;
    }
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::List:
      if (!is_literal(a)) return rewrite_value(a, sc, 1)[0];  // computed: `[shape(x)[0], -1]`
      if (op) check_literal_input(a, *op, i);
      else literal_kind(a);
      return -1;
    default: {
      auto outs = rewrite_value(a, sc, 1);
      return outs.empty() ? -1 : outs[0];
    }
  }
}

void Sema::rewrite_statement(Statement& s, Scope& sc) {
  std::vector<int> vars = rewrite_value(*s.value, sc, s.outputs.size());
  auto* c = s.value->dyn<CallExpr>();
  if (s.outputs.size() > 1) {
    if (!c || c->call_kind != CallKind::Op) {
      diags_.error(s.outputs[1].loc, "only an op can define several outputs");
    } else if (!ops_of(*c).empty() && ops_of(*c)[0] &&
               s.outputs.size() > static_cast<size_t>(ops_of(*c)[0]->max_outputs)) {
      const OpInfo* op = ops_of(*c)[0];
      diags_.error(s.outputs[op->max_outputs].loc, op->qualified() + " has " + std::to_string(op->max_outputs) +
                                                      " output" + (op->max_outputs == 1 ? "" : "s") +
                                                      ", the statement names " + std::to_string(s.outputs.size()));
    }
  }
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    const OutputName& o = s.outputs[i];
    sc.rewrite_later.erase(o.name);
    if (o.name == "_") continue;
    auto prev = sc.rewrite.find(o.name);
    if (prev != sc.rewrite.end()) {
      diags_.error(o.loc, quote(o.name) + " is already defined in this rewrite, at " + at(prev->second.loc));
      continue;
    }
    auto m = sc.match.find(o.name);
    if (m != sc.match.end() && !m->second.produced) {
      diags_.error(o.loc, quote(o.name) + " is an input of the match; a rewrite can only redefine values the match produces");
      continue;
    }
    int v = i < vars.size() ? vars[i] : -1;
    if (v < 0) v = solver_.fresh();
    sc.rewrite[o.name] = RewriteBinding{o.loc, v};
  }
}

namespace {

void collect_names(const AstExpr& e, std::set<std::string>& out) {
  if (auto* n = e.dyn<NameExpr>()) out.insert(n->name);
  if (auto* v = e.dyn<VariadicExpr>()) out.insert(v->name);
  if (auto* l = e.dyn<ListExpr>())
    for (const auto& x : l->elements) collect_names(*x, out);
  if (auto* c = e.dyn<CallExpr>()) {
    for (const auto& x : c->args) collect_names(*x, out);
    for (const auto& a : c->attrs)
      if (a.value) collect_names(*a.value, out);
  }
  if (auto* i = e.dyn<IndexExpr>()) {
    collect_names(*i->base, out);
    collect_names(*i->index, out);
  }
  if (auto* u = e.dyn<UnaryExpr>()) collect_names(*u->operand, out);
  if (auto* b = e.dyn<BinaryExpr>()) {
    collect_names(*b->lhs, out);
    collect_names(*b->rhs, out);
  }
  if (auto* c = e.dyn<CoalesceExpr>()) {
    collect_names(*c->value, out);
    collect_names(*c->fallback, out);
  }
}

}  // namespace

void Sema::warn_unused_temporaries(const RuleDecl& r, const Scope& sc) {
  std::set<std::string> used;
  for (const auto& s : r.rewrite) collect_names(*s.value, used);
  for (const auto& s : r.rewrite)
    for (const auto& o : s.outputs) {
      if (o.name == "_" || sc.match.count(o.name) || used.count(o.name)) continue;
      auto it = sc.rewrite.find(o.name);
      if (it != sc.rewrite.end() && it->second.loc.line == o.loc.line && it->second.loc.col == o.loc.col)
        diags_.warning(o.loc, quote(o.name) + " is defined but never used");
    }
}

}  // namespace fusor::dsl::sema_detail
