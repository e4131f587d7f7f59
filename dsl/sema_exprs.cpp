// The names of a rule's expressions (where conditions, attribute values, rewrite values): the
// rule's ExprScope for the shared expression checker (dsl/expr_check.h).
#include "dsl/expr_check.h"
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

// Match bindings are values; `v.attr` reads an attribute of the node that produced v.
class Sema::RuleScope : public ExprScope {
 public:
  RuleScope(Sema& s, const Scope& sc) : s_(s), sc_(sc) {}

  std::optional<ExprType> name(const NameExpr& n) override {
    if (s_.is_value_name(sc_, n.name)) return ExprType::of(Kind::Value);
    return std::nullopt;
  }
  void unknown_name(const NameExpr& n) override { s_.report_unbound(n.name, n.loc, sc_); }
  bool binds(const std::string& base) const override { return s_.is_value_name(sc_, base); }
  ExprType attr_read(const AttrReadExpr& a) override { return s_.attr_read_type(a, sc_); }

  std::optional<ExprType> call(CallExpr& c) override {
    s_.resolve(c, s_.place_ == Place::Match ? Place::Where : s_.place_);
    if (c.call_kind == CallKind::Builtin) return std::nullopt;
    if (c.call_kind == CallKind::Pattern) {
      s_.diags_.error(c.loc, "pattern " + quote(c.callee()) + " can only be called in a match");
      return ExprType::of(Kind::Unknown);
    }
    s_.diags_.error(c.loc, "an op call is not allowed here; conditions use built-in functions (" +
                               std::string("const, rank, dtype, shape, uses, ...)"));
    return ExprType::of(Kind::Unknown);
  }

  void value_argument(const CallExpr& c, const AstExpr& a) override {
    auto* nm = a.dyn<NameExpr>();
    if (!nm) {
      s_.diags_.error(a.loc, c.callee() + "() takes value names from the match");
    } else if (!s_.is_value_name(sc_, nm->name)) {
      s_.report_unbound(nm->name, nm->loc, sc_);
    } else if (c.callee() == "absent" && !(sc_.match.count(nm->name) && sc_.match.at(nm->name).optional)) {
      s_.diags_.error(a.loc, "absent() needs an optional input, matched as " + quote(nm->name + "?"));
    }
  }

  void op_name(const OpRef& ref) override { s_.lookup_op(ref); }
  int opset() const override { return s_.opset_; }

 private:
  Sema& s_;
  const Scope& sc_;
};

ExprType Sema::expr_type(AstExpr& e, const Scope& sc) {
  RuleScope scope(*this, sc);
  return ExprChecker(catalog_, diags_, scope).check(e);
}

void Sema::kind_error(const AstExpr& e, const std::string& what, const ExprType& t) { report_kind(diags_, e, what, t); }

bool Sema::is_value_name(const Scope& sc, const std::string& n) const {
  return sc.rewrite.count(n) || sc.match.count(n);
}

void Sema::report_unbound(const std::string& name, const SourceLoc& loc, const Scope& sc) {
  auto later = sc.rewrite_later.find(name);
  if (later != sc.rewrite_later.end()) {
    diags_.error(loc, quote(name) + " is used before it is bound (by the statement at " + at(later->second) + ")");
    return;
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : sc.match) names.push_back(k);
  for (const auto& [k, v] : sc.rewrite) names.push_back(k);
  diags_.error(loc, "unknown name " + quote(name) + ": it is not bound in the match" +
                        (place_ == Place::Rewrite ? " or earlier in the rewrite" : std::string()) +
                        did_you_mean(name, names));
}

const Binding* Sema::attr_base(const std::string& base, const SourceLoc& loc, const Scope& sc) {
  auto it = sc.match.find(base);
  if (it == sc.match.end()) {
    if (sc.rewrite.count(base))
      diags_.error(loc, quote(base) + " is defined by the rewrite; attribute reads refer to nodes of the match");
    else
      report_unbound(base, loc, sc);
    return nullptr;
  }
  if (!it->second.produced) {
    diags_.error(loc, quote(base) + " is an input of the match, not the output of a matched node, so it has no attributes");
    return nullptr;
  }
  return &it->second;
}

ExprType Sema::attr_read_type(const AttrReadExpr& a, const Scope& sc) {
  const Binding* b = attr_base(a.base, a.loc, sc);
  if (!b) return ExprType::of(Kind::Unknown);
  if (a.attr == "op") return ExprType::of(Kind::Op);
  if (a.attr == "attrs") return ExprType::of(Kind::Attrs);
  if (!b->producer || b->producer->call_kind != CallKind::Op) return ExprType::of(Kind::Unknown);
  auto it = ops_.find(b->producer);
  if (it == ops_.end()) return ExprType::of(Kind::Unknown);
  // In an alternation, an attribute only some alternatives have is fine (`y.op == LeakyRelu &&
  // y.alpha < 0.5`); one that none has is an error.
  ExprType t = ExprType::of(Kind::Unknown);
  bool found = false, known = false;
  std::vector<std::string> names;
  std::string ops_text;
  for (const OpInfo* op : it->second) {
    if (!op) continue;
    known = true;
    ops_text += (ops_text.empty() ? "" : " or ") + op->qualified();
    if (const AttrInfo* info = op->attr(a.attr)) {
      t = found && attr_expr_type(info->type).kind != t.kind ? ExprType::of(Kind::Unknown) : attr_expr_type(info->type);
      found = true;
    }
    for (const auto& x : op->attrs) names.push_back(x.name);
  }
  if (known && !found)
    diags_.error(a.attr_loc, ops_text + " has no attribute " + quote(a.attr) + did_you_mean(a.attr, names));
  return t;
}

}  // namespace fusor::dsl::sema_detail
