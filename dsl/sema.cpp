// The semantic checks' driver: declarations, duplicate names, the per-file loop.
#include "dsl/sema.h"

#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

void Sema::run() {
  rs_.opset = catalog_.onnx_opset();
  collect();
  for (auto& f : rs_.files) {
    const size_t before = diags_.error_count();
    for (auto& p : f->patterns) {
      auto it = rs_.patterns.find(p->name);
      if (it != rs_.patterns.end() && it->second == p.get()) check_pattern(*p);
    }
    for (auto& r : f->rules) check_rule(*r);
    if (diags_.error_count() > before) f->has_errors = true;
  }
  check_pattern_cycles();
}

void Sema::collect() {
  std::map<std::string, const RuleDecl*> seen;
  size_t order = 0;
  for (auto& f : rs_.files) {
    for (auto& r : f->rules) {
      r->order = order++;
      auto [it, fresh] = seen.emplace(r->name, r.get());
      if (!fresh) {
        diags_.error(r->loc, "rule " + quote(r->name) + " is already defined");
        diags_.note(it->second->loc, "previous definition is here");
        continue;
      }
      rs_.rules.push_back(r.get());
    }
    for (auto& p : f->patterns) {
      if (find_builtin(p->name)) {
        diags_.error(p->loc, "pattern " + quote(p->name) + " has the name of a built-in function");
        continue;
      }
      auto [it, fresh] = rs_.patterns.emplace(p->name, p.get());
      if (!fresh) {
        diags_.error(p->loc, "pattern " + quote(p->name) + " is already defined");
        diags_.note(it->second->loc, "previous definition is here; write alternatives as 'pattern " + p->name +
                                         "(...) { ... } | { ... }'");
      }
    }
  }
}

}  // namespace fusor::dsl::sema_detail

namespace fusor::dsl {

void check_rules(RuleSet& rules, const CheckOptions& opts, Diagnostics& diags) {
  sema_detail::Sema(rules, opts, diags).run();
}

}  // namespace fusor::dsl
