#include "dsl/lower.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/ops/op_traits.h"
#include "dsl/lower_expr.h"

namespace fusor::dsl {

namespace {

OpType op_of(const OpRef& r) {
  return OpType(canonical_domain(r.domain), r.name);
}

std::optional<Literal> literal_of(const AstExpr& e) {
  if (auto* i = e.dyn<IntExpr>()) return Literal::scalar(static_cast<double>(i->value), true);
  if (auto* f = e.dyn<FloatExpr>()) return Literal::scalar(f->value, false);
  if (auto* u = e.dyn<UnaryExpr>(); u && u->op == UnaryOp::Neg) {
    auto l = literal_of(*u->operand);
    if (!l || l->is_list) return std::nullopt;
    l->values[0] = -l->values[0];
    return l;
  }
  if (auto* l = e.dyn<ListExpr>()) {
    Literal out;
    out.is_list = true;
    out.is_integer = true;
    for (const auto& el : l->elements) {
      auto v = literal_of(*el);
      if (!v || v->is_list) return std::nullopt;
      out.values.push_back(v->values[0]);
      out.is_integer = out.is_integer && v->is_integer;
    }
    return out;
  }
  return std::nullopt;
}

// A match attribute constraint's value, or a literal attribute of a rewrite: numbers, lists,
// strings, element type names (as the int ONNX stores), op names (as strings).
std::optional<Attribute> literal_attr(const std::string& name, const AstExpr& e) {
  if (auto l = literal_of(e)) {
    if (!l->is_list)
      return l->is_integer ? Attribute::make_int(name, static_cast<int64_t>(l->values[0]))
                           : Attribute::make_float(name, static_cast<float>(l->values[0]));
    if (l->is_integer) {
      std::vector<int64_t> v;
      for (double d : l->values) v.push_back(static_cast<int64_t>(d));
      return Attribute::make_ints(name, v);
    }
    std::vector<float> v;
    for (double d : l->values) v.push_back(static_cast<float>(d));
    return Attribute::make_floats(name, v);
  }
  if (auto* s = e.dyn<StringExpr>()) return Attribute::make_string(name, s->value);
  if (auto* l = e.dyn<ListExpr>()) {
    std::vector<std::string> v;
    for (const auto& el : l->elements) {
      auto* s = el->dyn<StringExpr>();
      if (!s) return std::nullopt;
      v.push_back(s->value);
    }
    return Attribute::make_strings(name, v);
  }
  if (auto* n = e.dyn<NameExpr>()) {
    DataType dt = dtype_from_name(n->name);
    if (dt != DataType::Undefined) return Attribute::make_int(name, static_cast<int64_t>(dt));
    return Attribute::make_string(name, n->name);
  }
  return std::nullopt;
}

// Lowers one rule for one choice of pattern bodies.
class RuleLowering {
 public:
  // choices[k]: the body used at the k-th pattern call inlined (0 past the end).
  RuleLowering(const RuleDecl& r, const std::vector<size_t>& choices) : r_(r), choices_(choices) {}

  // The number of bodies at each pattern call inlined by run(), in inlining order.
  const std::vector<size_t>& call_sites() const { return call_sites_; }

  Rule run() {
    Rule out;
    out.name = r_.name;
    out.file = r_.loc.file;
    out.line = static_cast<int>(r_.loc.line);
    out.level = r_.level;
    for (const auto& p : r_.providers) out.providers.push_back(p.name);
    if (r_.benefit) out.benefit = static_cast<int>(*r_.benefit);
    else out.benefit = static_cast<int>(default_benefit(r_));
    Pattern& p = out.pattern;
    p_ = &p;
    int root = -1;
    for (const Statement& s : r_.match) root = lower_statement(s, scope_);
    p.root = root;
    for (const auto& w : r_.where) {
      Expr e = lower_expr(*w);
      p.where = p.where ? Expr::call(Expr::Op::And, {*p.where, std::move(e)}) : std::move(e);
    }
    rw_ = &out.rewrite;
    for (const Statement& s : r_.rewrite) lower_rewrite_statement(s);
    return out;
  }

 private:
  using Scope = std::map<std::string, int>;

  int var(Scope& scope, const std::string& name) {
    auto it = scope.find(name);
    if (it != scope.end()) return it->second;
    int v = p_->add_var(name);
    scope[name] = v;
    return v;
  }
  int anon_var() { return p_->add_var(""); }

  // Lowers a match statement; returns the pattern node defining its (last) outputs.
  int lower_statement(const Statement& s, Scope& scope) {
    auto* call = s.value->dyn<CallExpr>();
    if (!call) throw LowerError{s.loc, "a match statement must be a call"};
    if (call->call_kind == CallKind::Pattern) {
      std::vector<int> results;
      int node = inline_pattern(*call, scope, results);
      for (size_t i = 0; i < s.outputs.size() && i < results.size(); ++i) {
        if (s.outputs[i].name == "_") continue;
        bind_name(scope, s.outputs[i].name, results[i]);
      }
      return node;
    }
    std::vector<int> outs;
    for (const auto& o : s.outputs) outs.push_back(o.name == "_" ? -1 : var(scope, o.name));
    return lower_call(*call, scope, outs);
  }

  // `y = pattern(...)`: y names the pattern's result var.
  void bind_name(Scope& scope, const std::string& name, int v) {
    if (scope.count(name)) throw LowerError{r_.loc, "'" + name + "' is used before the pattern call that binds it"};
    scope[name] = v;
    if (p_->vars[v].name.empty()) p_->vars[v].name = name;
  }

  int lower_call(const CallExpr& c, Scope& scope, const std::vector<int>& outs) {
    PatternNode pn;
    for (const auto& o : c.ops) pn.ops.push_back(op_of(o));
    for (const auto& a : c.attrs) {
      if (a.spread) throw LowerError{a.loc, "a spread '<...>' cannot appear in a match"};
      auto attr = literal_attr(a.name, *a.value);
      if (!attr) throw LowerError{a.loc, "attribute '" + a.name + "' in a match must be a literal"};
      pn.attrs.push_back({a.name, *attr});
    }
    for (size_t i = 0; i < c.args.size(); ++i) {
      const AstExpr& a = *c.args[i];
      std::optional<std::string> lifted = lifted_slot(pn.ops, i);
      if (lifted && a.kind == ExprKind::Wildcard) {
        // `Unsqueeze(x, _)`: the normal form holds constant axes as an attribute; `_` constrains
        // nothing, so the slot simply drops out.
        pn.inputs.push_back(PInput::wildcard());
        lifted_slots_.insert(pn.inputs.size() - 1);
        continue;
      }
      if (auto lit = literal_of(a)) {
        if (lifted) {
          pn.attrs.push_back({*lifted, *literal_attr(*lifted, a)});
          pn.inputs.push_back(PInput::wildcard());  // dropped below: lifted slots leave the input list
          lifted_slots_.insert(pn.inputs.size() - 1);
        } else {
          pn.inputs.push_back(PInput::lit(p_->add_literal(*lit)));
        }
        continue;
      }
      pn.inputs.push_back(lower_match_arg(a, scope));
    }
    // Lifted slots are attributes in the normal form, so they are not inputs.
    if (!lifted_slots_.empty()) {
      std::vector<PInput> kept;
      for (size_t i = 0; i < pn.inputs.size(); ++i)
        if (!lifted_slots_.count(i)) kept.push_back(pn.inputs[i]);
      pn.inputs = std::move(kept);
      lifted_slots_.clear();
    }
    int n = static_cast<int>(p_->nodes.size());
    std::vector<int> outputs = outs.empty() ? std::vector<int>{anon_var()} : outs;
    for (size_t slot = 0; slot < outputs.size(); ++slot) {
      if (outputs[slot] < 0) continue;
      p_->vars[outputs[slot]].producer = n;
      p_->vars[outputs[slot]].slot = static_cast<int>(slot);
    }
    pn.outputs = outputs;
    p_->nodes.push_back(std::move(pn));
    return n;
  }

  // The attribute slot `i` is lifted to when every alternative lifts it to the same one.
  static std::optional<std::string> lifted_slot(const std::vector<OpType>& ops, size_t i) {
    std::optional<std::string> name;
    for (size_t k = 0; k < ops.size(); ++k) {
      auto l = lifted_input_attr(ops[k], i);
      if (!l || (k > 0 && l != name)) return std::nullopt;
      name = l;
    }
    return name;
  }

  PInput lower_match_arg(const AstExpr& a, Scope& scope) {
    switch (a.kind) {
      case ExprKind::Name: return PInput::of(var(scope, a.dyn<NameExpr>()->name));
      case ExprKind::Wildcard: return PInput::wildcard();
      case ExprKind::Optional: return PInput::of(var(scope, a.dyn<OptionalExpr>()->name), true);
      case ExprKind::Variadic: return PInput::tail(var(scope, a.dyn<VariadicExpr>()->name));
      case ExprKind::Call: {
        const auto& c = *a.dyn<CallExpr>();
        if (c.call_kind == CallKind::Pattern) {
          std::vector<int> results;
          inline_pattern(c, scope, results);
          return PInput::of(results.at(0));
        }
        int n = lower_call(c, scope, {});
        return PInput::of(p_->nodes[n].outputs[0]);
      }
      default: throw LowerError{a.loc, "unsupported argument in a match"};
    }
  }

  // Inlines `c` (a pattern call) with the chosen body: parameters alias the arguments' vars,
  // other names are fresh. Returns the body's last node; `results` gets its output vars.
  int inline_pattern(const CallExpr& c, Scope& scope, std::vector<int>& results) {
    const PatternDecl* decl = c.pattern;
    if (!decl) throw LowerError{c.loc, "unresolved pattern call '" + c.callee() + "'"};
    if (++depth_ > 32) throw LowerError{c.loc, "patterns nest too deeply"};
    Scope local;
    for (size_t i = 0; i < decl->params.size() && i < c.args.size(); ++i) {
      const AstExpr& a = *c.args[i];
      int v;
      if (auto* n = a.dyn<NameExpr>()) v = var(scope, n->name);
      else if (a.kind == ExprKind::Call) {
        PInput in = lower_match_arg(a, scope);
        v = in.var;
      } else if (a.kind == ExprKind::Wildcard) v = anon_var();
      else throw LowerError{a.loc, "pattern arguments must be names, '_' or calls (not literals)"};
      local[decl->params[i].name] = v;
    }
    size_t site = call_sites_.size();
    call_sites_.push_back(decl->bodies.size());
    size_t b = site < choices_.size() ? choices_[site] : 0;
    const auto& body = decl->bodies.at(b);
    int node = -1;
    for (const Statement& s : body) node = lower_statement(s, local);
    if (node < 0) throw LowerError{c.loc, "empty pattern body"};
    results = p_->nodes[node].outputs;
    --depth_;
    return node;
  }

  // ---- expressions (where, attribute values and computed rewrite inputs) ----

  // The match var a name refers to, or -1. In a rewrite, temporaries are not match vars.
  int match_var(const std::string& name) const {
    auto it = scope_.find(name);
    return it == scope_.end() ? -1 : it->second;
  }

  // The rule's names for expressions: match vars; temporaries of the rewrite are not values a
  // built-in can read.
  class Names : public ExprVars {
   public:
    explicit Names(const RuleLowering& l) : l_(l) {}
    std::optional<Expr> name(const std::string& n) const override {
      int v = l_.match_var(n);
      if (v < 0) return std::nullopt;
      return Expr::of_var(Expr::Op::Var, v);
    }
    int attr_base(const std::string& base) const override { return l_.match_var(base); }
    int value_var(const AstExpr& e) const override { return l_.value_var(e); }

   private:
    const RuleLowering& l_;
  };

  int value_var(const AstExpr& e) const {
    std::string name;
    if (auto* n = e.dyn<NameExpr>()) name = n->name;
    else if (auto* o = e.dyn<OptionalExpr>()) name = o->name;
    int v = name.empty() ? -1 : match_var(name);
    if (v < 0 || (rw_ && temps_.count(name)))
      throw LowerError{e.loc, "this built-in takes a value bound in the match"};
    return v;
  }

  Expr lower_expr(const AstExpr& e) const { return dsl::lower_expr(e, names_); }

  // ---- rewrite ----

  RInput rewrite_input(const AstExpr& e) {
    switch (e.kind) {
      case ExprKind::Name: {
        const std::string& n = e.dyn<NameExpr>()->name;
        if (auto it = temps_.find(n); it != temps_.end()) return it->second;
        int v = match_var(n);
        if (v >= 0) return RInput::of(v);
        break;
      }
      case ExprKind::Optional: return RInput::of(value_var(e));
      case ExprKind::Variadic: {
        int v = match_var(e.dyn<VariadicExpr>()->name);
        if (v < 0) throw LowerError{e.loc, "'" + e.dyn<VariadicExpr>()->name + "...' must name a variadic capture of the match"};
        return RInput::tail(v);
      }
      case ExprKind::Coalesce: {
        const auto& c = *e.dyn<CoalesceExpr>();
        auto lit = literal_of(*c.fallback);
        if (!lit) throw LowerError{c.fallback->loc, "the fallback of '\?\?' must be a literal"};
        RInput in = rewrite_input(*c.value);
        if (in.kind != RInput::Kind::Var) throw LowerError{c.loc, "'\?\?' applies to a matched optional input"};
        return RInput::or_literal(in.var, rw_->add_literal(*lit));
      }
      case ExprKind::Call: {
        const auto& c = *e.dyn<CallExpr>();
        if (c.call_kind == CallKind::Op) return RInput::node_out(lower_rnode(c, 1));
        break;
      }
      default: break;
    }
    if (auto lit = literal_of(e)) return RInput::lit(rw_->add_literal(*lit));
    return RInput::of_expr(rw_->add_expr(lower_expr(e)));
  }

  int lower_rnode(const CallExpr& c, int num_outputs) {
    if (c.ops.size() != 1) throw LowerError{c.loc, "an alternation cannot appear in a rewrite"};
    RNode n;
    if (c.matched_op) {
      n.op_of_var = match_var(c.ops[0].domain);
      if (n.op_of_var < 0) throw LowerError{c.loc, "'" + c.ops[0].domain + ".op' needs a value of the match"};
    } else {
      n.op = op_of(c.ops[0]);
    }
    n.num_outputs = num_outputs;
    for (const auto& a : c.attrs) {
      AttrTemplate t;
      t.name = a.name;
      if (a.spread) {
        t.kind = AttrTemplate::Kind::CopyAll;
        t.var = match_var(a.name);
        if (t.var < 0) throw LowerError{a.loc, "'..." + a.name + "' must name a matched value"};
      } else if (auto* r = a.value->dyn<AttrReadExpr>(); r && match_var(r->base) >= 0) {
        t.var = match_var(r->base);
        if (r->attr == "op") t.kind = AttrTemplate::Kind::OpName;
        else if (r->attr == "attrs") t.kind = AttrTemplate::Kind::AttrsOf;
        else { t.kind = AttrTemplate::Kind::Read; t.read_name = r->attr; }
      } else if (auto lit = literal_attr(a.name, *a.value);
                 lit && (a.value->kind != ExprKind::Name || match_var(a.value->dyn<NameExpr>()->name) < 0)) {
        t.kind = AttrTemplate::Kind::Literal;
        t.value = *lit;
      } else {
        t.kind = AttrTemplate::Kind::FromExpr;
        t.expr = lower_expr(*a.value);
      }
      n.attrs.push_back(std::move(t));
    }
    for (const auto& a : c.args) {
      if (a->kind == ExprKind::Wildcard) { n.inputs.push_back(RInput::absent()); continue; }
      n.inputs.push_back(rewrite_input(*a));
    }
    return rw_->add_node(std::move(n));
  }

  void define(const std::string& name, RInput src) {
    if (name == "_") return;
    if (!temps_.count(name)) {
      int v = match_var(name);
      if (v >= 0) {
        rw_->redefs.push_back({v, src});
      }
    }
    temps_[name] = src;
  }

  void lower_rewrite_statement(const Statement& s) {
    if (auto* c = s.value->dyn<CallExpr>(); c && c->call_kind == CallKind::Op) {
      int n = lower_rnode(*c, static_cast<int>(std::max<size_t>(1, s.outputs.size())));
      for (size_t i = 0; i < s.outputs.size(); ++i) define(s.outputs[i].name, RInput::node_out(n, static_cast<int>(i)));
      return;
    }
    if (s.outputs.size() != 1) throw LowerError{s.loc, "only an op call defines several values"};
    define(s.outputs[0].name, rewrite_input(*s.value));
  }

  const RuleDecl& r_;
  const std::vector<size_t>& choices_;
  Names names_{*this};
  std::vector<size_t> call_sites_;
  Pattern* p_ = nullptr;
  Rewrite* rw_ = nullptr;
  Scope scope_;
  std::map<std::string, RInput> temps_;
  std::set<size_t> lifted_slots_;
  int depth_ = 0;
};

}  // namespace

bool lower_rule(const RuleDecl& rule, std::vector<Rule>& out, Diagnostics& diags) {
  // Depth-first over the body chosen at each pattern call site, like an odometer: lower with the
  // current choices, then advance the last call site that has another body.
  std::vector<Rule> lowered;
  std::vector<size_t> choices;
  while (true) {
    RuleLowering l(rule, choices);
    try {
      lowered.push_back(l.run());
    } catch (const LowerError& u) {
      diags.error(u.loc.has_position() ? u.loc : rule.loc, "rule '" + rule.name + "': " + u.message);
      return false;
    }
    const std::vector<size_t>& sites = l.call_sites();
    choices.resize(sites.size(), 0);
    size_t k = sites.size();
    while (k > 0 && choices[k - 1] + 1 >= sites[k - 1]) --k;
    if (k == 0) break;
    ++choices[k - 1];
    choices.resize(k);
    if (lowered.size() >= kMaxBodyCombinations) {
      diags.error(rule.loc, "rule '" + rule.name + "' expands to more than " + std::to_string(kMaxBodyCombinations) +
                                " pattern-body combinations");
      return false;
    }
  }
  for (auto& r : lowered) out.push_back(std::move(r));
  return true;
}

std::vector<Rule> lower_rules(const std::vector<const RuleDecl*>& rules, Diagnostics& diags) {
  std::vector<Rule> out;
  for (const RuleDecl* r : rules) lower_rule(*r, out, diags);
  return out;
}

}  // namespace fusor::dsl
