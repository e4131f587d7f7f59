// Pattern declarations: parameters, bodies, results, call cycles.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

void Sema::check_pattern(PatternDecl& p) {
  opset_ = catalog_.onnx_opset();
  place_ = Place::Match;
  std::set<std::string> params;
  for (const auto& prm : p.params)
    if (!params.insert(prm.name).second) diags_.error(prm.loc, "parameter " + quote(prm.name) + " is listed twice");
  size_t results = 0;
  for (size_t bi = 0; bi < p.bodies.size(); ++bi) {
    auto& body = p.bodies[bi];
    if (body.empty()) {
      diags_.error(p.loc, "pattern " + quote(p.name) + " has an empty body");
      continue;
    }
    Scope sc;
    for (const auto& prm : p.params) {
      Binding b;
      b.loc = prm.loc;
      b.param = true;
      b.var = solver_.fresh();
      sc.match[prm.name] = b;
    }
    const size_t errors_before_body = diags_.error_count();
    for (auto& s : body) {
      match_statement(s, sc);
      if (auto* c = s.value->dyn<CallExpr>()) collect_pattern_calls(p, *c);
    }
    if (diags_.error_count() == errors_before_body) check_feeds_root(body);
    for (const auto& prm : p.params)
      if (!sc.match[prm.name].consumed)
        diags_.error(prm.loc, "parameter " + quote(prm.name) + " is not used" +
                                  (p.bodies.size() > 1 ? " in alternative " + std::to_string(bi + 1) : std::string()));
    size_t n = body.back().outputs.size();
    if (bi == 0) results = n;
    else if (n != results)
      diags_.error(body.back().loc, "every alternative of pattern " + quote(p.name) + " must give " +
                                        std::to_string(results) + " result(s); this one gives " + std::to_string(n));
  }
}

void Sema::collect_pattern_calls(const PatternDecl& p, const CallExpr& c) {
  if (c.call_kind == CallKind::Pattern && c.pattern) calls_[&p].emplace_back(c.pattern, c.loc);
  for (const auto& a : c.args)
    if (auto* n = a->dyn<CallExpr>()) collect_pattern_calls(p, *n);
}

void Sema::check_pattern_cycles() {
  std::map<const PatternDecl*, int> state;  // 1 visiting, 2 done
  std::vector<const PatternDecl*> stack;
  std::function<void(const PatternDecl*)> visit = [&](const PatternDecl* p) {
    state[p] = 1;
    stack.push_back(p);
    for (const auto& [q, loc] : calls_[p]) {
      if (state[q] == 1) {
        std::string chain;
        auto it = std::find(stack.begin(), stack.end(), q);
        for (; it != stack.end(); ++it) chain += (*it)->name + " -> ";
        diags_.error(loc, "pattern " + quote(q->name) + " calls itself: " + chain + q->name);
      } else if (state[q] == 0) {
        visit(q);
      }
    }
    stack.pop_back();
    state[p] = 2;
  };
  for (auto& f : rs_.files)
    for (auto& p : f->patterns)
      if (state[p.get()] == 0) visit(p.get());
}

}  // namespace fusor::dsl::sema_detail
