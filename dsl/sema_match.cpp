// Match statements and pattern bodies: bindings, optional/variadic/literal inputs, connectivity.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

std::vector<int> Sema::match_call(CallExpr& c, Scope& sc, size_t num_outputs) {
  resolve(c, Place::Match);
  if (c.call_kind == CallKind::Builtin) {
    diags_.error(c.loc, "built-in function " + quote(c.callee()) + " cannot be matched; conditions go in 'where { ... }'");
    for (size_t i = 0; i < c.args.size(); ++i) match_arg(*c.args[i], i, {}, sc);  // bind names: no follow-on errors
    return {};
  }
  std::vector<const OpInfo*> ops;
  if (c.call_kind == CallKind::Pattern) {
    if (c.args.size() != c.pattern->params.size())
      diags_.error(c.loc, "pattern " + quote(c.callee()) + " takes " + std::to_string(c.pattern->params.size()) +
                              " argument" + (c.pattern->params.size() == 1 ? "" : "s") + ", got " +
                              std::to_string(c.args.size()));
    if (!c.attrs.empty()) diags_.error(c.attrs[0].loc, "a pattern call takes no attributes");
  } else {
    ops = ops_of(c);
    if (ops.size() > 1)
      for (size_t i = 0; i < c.ops.size(); ++i)
        if (rs_.patterns.count(c.ops[i].name))
          diags_.error(c.ops[i].loc, "pattern " + quote(c.ops[i].name) +
                                         " cannot be part of an alternation; give the pattern alternative bodies instead");
    check_attrs(c, ops, sc, true);
  }
  std::vector<int> arg_vars;
  bool has_variadic = false;
  for (size_t i = 0; i < c.args.size(); ++i) {
    AstExpr& a = *c.args[i];
    if (a.dyn<VariadicExpr>()) {
      has_variadic = true;
      if (i + 1 != c.args.size()) diags_.error(a.loc, quote(a.dyn<VariadicExpr>()->name + "...") + " must be the last argument");
    }
    arg_vars.push_back(match_arg(a, i, ops, sc));
  }
  if (c.call_kind == CallKind::Op) check_arity(c, ops, c.args.size() - (has_variadic ? 1 : 0), has_variadic);
  if (c.call_kind == CallKind::Pattern) {
    std::vector<int> outs;
    for (size_t j = 0; j < std::max<size_t>(num_outputs, 1); ++j) outs.push_back(solver_.fresh());
    return outs;
  }
  return node_types(c, ops, arg_vars, num_outputs);
}

int Sema::match_arg(AstExpr& a, size_t i, const std::vector<const OpInfo*>& ops, Scope& sc) {
  auto capture = [&](const std::string& name, const SourceLoc& loc) -> Binding& {
    auto it = sc.match.find(name);
    if (it != sc.match.end()) {
      it->second.consumed = true;
      return it->second;
    }
    Binding b;
    b.loc = loc;
    b.consumed = true;
    b.var = solver_.fresh();
    sc.capture_order.emplace_back(name, loc);
    return sc.match[name] = b;
  };
  switch (a.kind) {
    case ExprKind::Name: {
      auto& n = *a.dyn<NameExpr>();
      return capture(n.name, n.loc).var;
    }
    case ExprKind::Wildcard: return -1;
    case ExprKind::Optional: {
      auto& o = *a.dyn<OptionalExpr>();
      auto it = sc.match.find(o.name);
      if (it != sc.match.end() && it->second.produced) {
        diags_.error(a.loc, quote(o.name + "?") + " marks an optional input; " + quote(o.name) +
                                " is produced by the statement at " + at(it->second.loc));
        return -1;
      }
      for (const OpInfo* op : ops) {
        const FormalParam* f = op ? op->input_formal(i) : nullptr;
        if (f && f->option == ParamOption::Single)
          diags_.error(a.loc, slot_name(*op, i) + " is required; " + quote(o.name + "?") + " marks an optional input");
      }
      Binding& b = capture(o.name, o.loc);
      b.optional = true;
      return b.var;
    }
    case ExprKind::Variadic: {
      auto& v = *a.dyn<VariadicExpr>();
      for (const OpInfo* op : ops) {
        const FormalParam* f = op ? op->input_formal(i) : nullptr;
        if (op && (!f || f->option != ParamOption::Variadic))
          diags_.error(a.loc, quote(v.name + "...") + " matches variadic inputs, but " +
                                  (f ? slot_name(*op, i) + " is not variadic" : op->qualified() + " has no input " + std::to_string(i + 1)));
      }
      Binding& b = capture(v.name, v.loc);
      b.variadic = true;
      return b.var;
    }
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::String:
    case ExprKind::List:
      for (const OpInfo* op : ops)
        if (op) check_literal_input(a, *op, i);
      return -1;
    case ExprKind::Call: {
      auto outs = match_call(*a.dyn<CallExpr>(), sc, 1);
      return outs.empty() ? -1 : outs[0];
    }
    default:
      diags_.error(a.loc, "not allowed in a match: an op argument is a name, '_', 'x?', 'xs...', a literal or a nested op");
      return -1;
  }
}

void Sema::match_statement(Statement& s, Scope& sc) {
  auto* c = s.value->dyn<CallExpr>();
  if (!c) {
    diags_.error(s.value->loc, "a match statement needs an op on the right: NAME = Op(...)");
    return;
  }
  std::vector<int> outs = match_call(*c, sc, s.outputs.size());
  if (c->call_kind == CallKind::Op) {
    for (const OpInfo* op : ops_of(*c))
      if (op && s.outputs.size() > static_cast<size_t>(op->max_outputs))
        diags_.error(s.outputs[op->max_outputs].loc, op->qualified() + " has " + std::to_string(op->max_outputs) +
                                                        " output" + (op->max_outputs == 1 ? "" : "s") + ", the statement names " +
                                                        std::to_string(s.outputs.size()));
  } else if (c->call_kind == CallKind::Pattern && c->pattern && !c->pattern->bodies.empty() &&
             !c->pattern->bodies[0].empty() && s.outputs.size() != c->pattern->bodies[0].back().outputs.size()) {
    diags_.error(s.loc, "pattern " + quote(c->callee()) + " gives " +
                            std::to_string(c->pattern->bodies[0].back().outputs.size()) + " result(s), the statement names " +
                            std::to_string(s.outputs.size()));
  }
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    const OutputName& o = s.outputs[i];
    if (o.name == "_") continue;
    auto it = sc.match.find(o.name);
    if (it != sc.match.end()) {
      if (it->second.produced)
        diags_.error(o.loc, quote(o.name) + " is already bound by the statement at " + at(it->second.loc) +
                                "; a name in a match stands for one value");
      else
        diags_.error(it->second.loc, quote(o.name) + " is used before it is bound (by the statement at " + at(o.loc) +
                                         "); write the producing statement first");
      continue;
    }
    Binding b;
    b.loc = o.loc;
    b.produced = true;
    b.producer = c;
    b.output_index = i;
    b.var = i < outs.size() ? outs[i] : solver_.fresh();
    sc.match[o.name] = b;
  }
}

void Sema::check_connected(const std::vector<Statement>& stmts) {
  if (stmts.size() < 2) return;
  // Statements are connected when one reads what another defines or both read one value; a match
  // with several roots (statements no other reads) is matched from the last one, the others found
  // among the consumers of a value they share.
  std::vector<size_t> parent(stmts.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = i;
  std::function<size_t(size_t)> find = [&](size_t i) { return parent[i] == i ? i : parent[i] = find(parent[i]); };
  std::map<std::string, size_t> first_use;
  auto touch = [&](const std::string& name, size_t i) {
    if (name.empty() || name == "_") return;
    auto [it, fresh] = first_use.emplace(name, i);
    if (!fresh) parent[find(i)] = find(it->second);
  };
  std::function<void(const AstExpr&, size_t)> visit = [&](const AstExpr& e, size_t i) {
    if (auto* n = e.dyn<NameExpr>()) touch(n->name, i);
    if (auto* o = e.dyn<OptionalExpr>()) touch(o->name, i);
    if (auto* v = e.dyn<VariadicExpr>()) touch(v->name, i);
    if (auto* c = e.dyn<CallExpr>())
      for (const auto& a : c->args) visit(*a, i);
  };
  for (size_t i = 0; i < stmts.size(); ++i) {
    for (const auto& o : stmts[i].outputs) touch(o.name, i);
    visit(*stmts[i].value, i);
  }
  for (size_t i = 0; i + 1 < stmts.size(); ++i)
    if (find(i) != find(stmts.size() - 1))
      diags_.error(stmts[i].loc, "this statement shares no value with the rest of the match (rooted at the last "
                                 "statement, at " + at(stmts.back().loc) +
                                     "); a match with several roots needs them to read a common value");
}

void Sema::check_feeds_root(const std::vector<Statement>& stmts) {
  if (stmts.size() < 2) return;
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < stmts.size(); ++i)
    for (const auto& o : stmts[i].outputs)
      if (o.name != "_") producer.emplace(o.name, i);
  std::vector<bool> seen(stmts.size(), false);
  std::vector<size_t> work = {stmts.size() - 1};
  seen.back() = true;
  std::function<void(const AstExpr&)> visit = [&](const AstExpr& e) {
    std::string name;
    if (auto* n = e.dyn<NameExpr>()) name = n->name;
    if (auto* o = e.dyn<OptionalExpr>()) name = o->name;
    if (auto* v = e.dyn<VariadicExpr>()) name = v->name;
    if (auto* c = e.dyn<CallExpr>())
      for (const auto& a : c->args) visit(*a);
    auto it = producer.find(name);
    if (it != producer.end() && !seen[it->second]) {
      seen[it->second] = true;
      work.push_back(it->second);
    }
  };
  while (!work.empty()) {
    size_t i = work.back();
    work.pop_back();
    visit(*stmts[i].value);
  }
  for (size_t i = 0; i + 1 < stmts.size(); ++i)
    if (!seen[i])
      diags_.error(stmts[i].loc, "this statement does not feed the pattern's result (the last statement, at " +
                                     at(stmts.back().loc) + "); every node of a pattern body must flow into it");
}

}  // namespace fusor::dsl::sema_detail
