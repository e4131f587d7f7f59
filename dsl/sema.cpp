#include "dsl/sema.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <set>

#include "dsl/builtins.h"
#include "dsl/dtype_solver.h"
#include "dsl/op_catalog.h"
#include "dsl/suggest.h"

namespace fusor::dsl {
namespace {

std::string at(const SourceLoc& l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }
std::string quote(const std::string& s) { return "'" + s + "'"; }

// A name bound in a match (or a pattern body): a capture of any value, or a value a match
// statement produces.
struct Binding {
  SourceLoc loc;
  bool produced = false;
  const CallExpr* producer = nullptr;
  size_t output_index = 0;
  bool optional = false;
  bool variadic = false;
  bool param = false;     // a pattern parameter
  bool consumed = false;  // used as an input inside the match
  int var = -1;           // element-type variable
};

// A value a rewrite statement defines.
struct RewriteBinding {
  SourceLoc loc;
  int var = -1;
};

enum class Place { Match, Where, Rewrite, Test };

class Sema {
 public:
  Sema(RuleSet& rs, const CheckOptions& opts, Diagnostics& diags)
      : rs_(rs), opts_(opts), diags_(diags), catalog_(opts.opset) {}

  void run() {
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

 private:
  // ------------------------------------------------------------ declarations

  void collect() {
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

  // ------------------------------------------------------------ ops

  // The opset a rule's ops are checked at: the target, moved by `opset() >= N` style guards
  // among the rule's top-level where conditions.
  int rule_opset(const RuleDecl& r) const {
    int lo = catalog_.onnx_opset(), hi = INT_MAX;
    std::function<void(const Expr&)> scan = [&](const Expr& e) {
      auto* b = e.dyn<BinaryExpr>();
      if (!b) return;
      if (b->op == BinaryOp::And) {
        scan(*b->lhs);
        scan(*b->rhs);
        return;
      }
      auto* c = b->lhs->dyn<CallExpr>();
      auto* n = b->rhs->dyn<IntExpr>();
      if (!c || !n || c->ops.size() != 1 || c->callee() != "opset" || !c->ops[0].domain.empty()) return;
      int v = static_cast<int>(n->value);
      if (b->op == BinaryOp::Ge) lo = std::max(lo, v);
      if (b->op == BinaryOp::Gt) lo = std::max(lo, v + 1);
      if (b->op == BinaryOp::Eq) lo = v, hi = v;
      if (b->op == BinaryOp::Le) hi = std::min(hi, v);
      if (b->op == BinaryOp::Lt) hi = std::min(hi, v - 1);
    };
    for (const auto& w : r.where) scan(*w);
    return std::max(1, std::min(lo, hi));
  }

  const OpInfo* lookup_op(const OpRef& ref) {
    OpLookupResult r = catalog_.find(ref.domain, ref.name, opset_);
    switch (r.status) {
      case OpLookup::Found: return r.op;
      case OpLookup::UnknownDomain:
        diags_.error(ref.loc, "unknown op domain " + quote(ref.domain) +
                                  " (known: ONNX ops unqualified, 'fusor.', 'ai.onnx.ml.')");
        return nullptr;
      case OpLookup::NotYet:
        diags_.error(ref.loc, "op " + quote(ref.qualified()) + " does not exist at opset " + std::to_string(opset_) +
                                  " (it appears in opset " + std::to_string(r.first_version) +
                                  "); guard the rule with 'where { opset() >= " + std::to_string(r.first_version) +
                                  " }'");
        return nullptr;
      case OpLookup::Deprecated:
        diags_.error(ref.loc, "op " + quote(ref.qualified()) + " is deprecated at opset " + std::to_string(opset_));
        return nullptr;
      case OpLookup::UnknownOp: break;
    }
    std::string msg = "unknown op " + quote(ref.qualified());
    if (ref.domain.empty()) msg += " at opset " + std::to_string(opset_);
    std::string near = catalog_.suggest(ref.domain, ref.name);
    if (!near.empty()) {
      msg += "; did you mean " + quote(ref.domain.empty() ? near : ref.domain + "." + near) + "?";
    } else if (ref.domain.empty() && catalog_.find("fusor", ref.name).op) {
      msg += "; did you mean " + quote("fusor." + ref.name) + "?";
    }
    diags_.error(ref.loc, msg);
    return nullptr;
  }

  // Decides what a call is. Patterns and built-ins are unqualified names; in a where clause
  // every call is a built-in; in a rewrite an unknown lower-case name is taken for a
  // misspelt built-in (ONNX op names are capitalized).
  void resolve(CallExpr& c, Place place) {
    if (c.call_kind != CallKind::Unresolved) return;
    const OpRef& first = c.ops.front();
    if (c.ops.size() == 1 && first.domain.empty() && c.attrs.empty()) {
      auto it = rs_.patterns.find(first.name);
      if (it != rs_.patterns.end()) {
        c.call_kind = CallKind::Pattern;
        c.pattern = it->second;
        return;
      }
      const bool lower = std::islower(static_cast<unsigned char>(first.name[0]));
      if (find_builtin(first.name) || ((place == Place::Where || place == Place::Test) && lower) ||
          (place == Place::Rewrite && lower)) {
        c.call_kind = CallKind::Builtin;
        return;
      }
    } else if (c.ops.size() == 1 && first.domain.empty() && rs_.patterns.count(first.name)) {
      c.call_kind = CallKind::Pattern;
      c.pattern = rs_.patterns[first.name];
      return;
    }
    c.call_kind = CallKind::Op;
  }

  std::vector<const OpInfo*>& ops_of(CallExpr& c) {
    auto it = ops_.find(&c);
    if (it != ops_.end()) return it->second;
    std::vector<const OpInfo*> v;
    std::set<std::string> seen;
    for (const auto& ref : c.ops) {
      if (!seen.insert(ref.qualified()).second)
        diags_.error(ref.loc, "op " + quote(ref.qualified()) + " appears twice in the alternation");
      const bool pattern = ref.domain.empty() && rs_.patterns.count(ref.name);
      v.push_back(pattern ? nullptr : lookup_op(ref));  // a pattern here is reported by the caller
    }
    return ops_[&c] = std::move(v);
  }

  // "input 2 ('W') of Conv"
  static std::string slot_name(const OpInfo& op, size_t i) {
    const FormalParam* f = op.input_formal(i);
    std::string s = "input " + std::to_string(i + 1);
    if (f) s += " (" + quote(f->name) + ")";
    return s + " of " + op.qualified();
  }

  void check_arity(const CallExpr& c, const std::vector<const OpInfo*>& ops, size_t nargs, bool has_variadic) {
    for (const OpInfo* op : ops) {
      if (!op) continue;
      const size_t lo = op->min_inputs, hi = op->max_inputs;
      if (nargs > hi || (!has_variadic && nargs < lo)) {
        std::string range = lo == hi ? std::to_string(lo)
                            : hi == size_t(INT_MAX) ? "at least " + std::to_string(lo)
                                                  : std::to_string(lo) + " to " + std::to_string(hi);
        diags_.error(c.loc, op->qualified() + " takes " + range + " input" + (hi == 1 && lo == 1 ? "" : "s") +
                                ", got " + std::to_string(nargs));
      }
    }
  }

  // ------------------------------------------------------------ literals and kinds

  // The kind of a literal input: Int, Float or String (lists by their elements).
  Kind literal_kind(const Expr& e) {
    if (e.dyn<IntExpr>()) return Kind::Int;
    if (e.dyn<FloatExpr>()) return Kind::Float;
    if (e.dyn<StringExpr>()) return Kind::String;
    if (auto* l = e.dyn<ListExpr>()) {
      Kind k = Kind::Int;
      for (const auto& el : l->elements) {
        Kind ek = literal_kind(*el);
        if (ek == Kind::Unknown) {
          diags_.error(el->loc, "a literal list holds numbers or strings only");
          return Kind::Unknown;
        }
        if (ek == Kind::String && k != Kind::String && &el != &l->elements.front()) {
          diags_.error(el->loc, "a literal list mixes strings and numbers");
          return Kind::Unknown;
        }
        if (ek == Kind::Float || ek == Kind::String) k = ek;
      }
      return k;
    }
    return Kind::Unknown;
  }

  // A literal used as an op input: its kind must fit the input's element types.
  void check_literal_input(const Expr& lit, const OpInfo& op, size_t i) {
    Kind k = literal_kind(lit);
    const FormalParam* f = op.input_formal(i);
    if (!f || k == Kind::Unknown) return;
    TypeSet allowed = op.types_of(*f);
    if ((allowed & kAnyType) == kAnyType) return;
    bool ok = k == Kind::Float    ? (allowed & float_types()) != 0
              : k == Kind::Int    ? (allowed & numeric_types()) != 0
                                  : (allowed & type_bit(DataType::String)) != 0;
    if (!ok)
      diags_.error(lit.loc, "literal of the wrong kind: " + slot_name(op, i) + " takes " + typeset_str(allowed) +
                                ", but this is " + (k == Kind::Float ? "a float" : k == Kind::Int ? "an integer" : "a string") +
                                " literal");
  }

  static ExprType attr_expr_type(AttrType t) {
    switch (t) {
      case AttrType::Float: return ExprType::of(Kind::Float);
      case AttrType::Int: return ExprType::of(Kind::Int);
      case AttrType::String: return ExprType::of(Kind::String);
      case AttrType::Ints: return ExprType::of(Kind::List, Kind::Int);
      case AttrType::Floats: return ExprType::of(Kind::List, Kind::Float);
      case AttrType::Strings: return ExprType::of(Kind::List, Kind::String);
      default: return ExprType::of(Kind::Unknown);
    }
  }

  static bool fits_attr(AttrType want, const ExprType& t) {
    if (t.kind == Kind::Unknown) return true;
    auto list_of = [&](std::initializer_list<Kind> ks) {
      if (t.kind != Kind::List) return false;
      if (t.elem == Kind::Unknown) return true;
      return std::find(ks.begin(), ks.end(), t.elem) != ks.end();
    };
    switch (want) {
      case AttrType::Float: return t.kind == Kind::Float || t.kind == Kind::Int;
      case AttrType::Int: return t.kind == Kind::Int || t.kind == Kind::DType || t.kind == Kind::Bool;
      case AttrType::String: return t.kind == Kind::String || t.kind == Kind::Op;
      case AttrType::Floats: return t.kind == Kind::Attrs || list_of({Kind::Float, Kind::Int});
      case AttrType::Ints: return list_of({Kind::Int});
      case AttrType::Strings: return list_of({Kind::String, Kind::Op});
      case AttrType::Tensor:
        return t.kind == Kind::Int || t.kind == Kind::Float || list_of({Kind::Int, Kind::Float});
      default: return false;
    }
  }

  // ------------------------------------------------------------ expressions (where, values)

  struct Scope {
    std::map<std::string, Binding> match;
    std::map<std::string, RewriteBinding> rewrite;
    std::map<std::string, SourceLoc> rewrite_later;  // names a later rewrite statement defines
    std::vector<std::pair<std::string, SourceLoc>> capture_order;
  };

  bool is_value_name(const Scope& sc, const std::string& n) const {
    return sc.rewrite.count(n) || sc.match.count(n);
  }

  ExprType name_type(const NameExpr& n, const Scope& sc) {
    if (is_value_name(sc, n.name)) return ExprType::of(Kind::Value);
    if (dtype_from_rule_name(n.name) != DataType::Undefined) return ExprType::of(Kind::DType);
    if (catalog_.find("", n.name, opset_).status != OpLookup::UnknownOp) return ExprType::of(Kind::Op);
    report_unbound(n.name, n.loc, sc);
    return ExprType::of(Kind::Unknown);
  }

  void report_unbound(const std::string& name, const SourceLoc& loc, const Scope& sc) {
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

  // The match binding whose producer has the attributes `base.attr` reads; null after an error.
  const Binding* attr_base(const std::string& base, const SourceLoc& loc, const Scope& sc) {
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

  ExprType attr_read_type(const AttrReadExpr& a, const Scope& sc) {
    // `fusor.Gelu` in an expression is an op name, not an attribute read.
    if (!is_value_name(sc, a.base) && catalog_.known_domain(a.base) && !a.base.empty()) {
      lookup_op(OpRef{a.loc, a.base, a.attr});
      return ExprType::of(Kind::Op);
    }
    const Binding* b = attr_base(a.base, a.loc, sc);
    if (!b) return ExprType::of(Kind::Unknown);
    if (a.attr == "op") return ExprType::of(Kind::Op);
    if (a.attr == "attrs") return ExprType::of(Kind::Attrs);
    if (!b->producer || b->producer->call_kind != CallKind::Op) return ExprType::of(Kind::Unknown);
    auto it = ops_.find(b->producer);
    if (it == ops_.end()) return ExprType::of(Kind::Unknown);
    ExprType t = ExprType::of(Kind::Unknown);
    for (const OpInfo* op : it->second) {
      if (!op) continue;
      const AttrInfo* info = op->attr(a.attr);
      if (!info) {
        std::vector<std::string> names;
        for (const auto& x : op->attrs) names.push_back(x.name);
        diags_.error(a.attr_loc, op->qualified() + " has no attribute " + quote(a.attr) + did_you_mean(a.attr, names));
        return ExprType::of(Kind::Unknown);
      }
      t = attr_expr_type(info->type);
    }
    return t;
  }

  ExprType builtin_type(CallExpr& c, const Scope& sc) {
    const BuiltinSpec* spec = find_builtin(c.callee());
    if (!spec) {
      diags_.error(c.ops[0].loc, "unknown built-in function " + quote(c.callee()) + did_you_mean(c.callee(), builtin_names()));
      for (auto& a : c.args) expr_type(*a, sc);
      return ExprType::of(Kind::Unknown);
    }
    const size_t n = c.args.size(), fixed = spec->args.size();
    if ((!spec->variadic && n != fixed) || (spec->variadic && n < fixed)) {
      std::string want = (spec->variadic ? "at least " : "") + std::to_string(fixed) + " argument" + (fixed == 1 ? "" : "s");
      diags_.error(c.loc, "built-in function " + quote(c.callee()) + " takes " + want + ", got " + std::to_string(n));
      return spec->result;
    }
    for (size_t i = 0; i < n; ++i) {
      ArgKind k = spec->args[std::min(i, fixed - 1)];
      Expr& a = *c.args[i];
      if (k == ArgKind::ValueName) {
        auto* nm = a.dyn<NameExpr>();
        if (!nm) {
          diags_.error(a.loc, c.callee() + "() takes value names from the match");
        } else if (!is_value_name(sc, nm->name)) {
          report_unbound(nm->name, nm->loc, sc);
        } else if (c.callee() == "absent" && !(sc.match.count(nm->name) && sc.match.at(nm->name).optional)) {
          diags_.error(a.loc, "absent() needs an optional input, matched as " + quote(nm->name + "?"));
        }
        continue;
      }
      ExprType t = expr_type(a, sc);
      if (k == ArgKind::IntArg && t.kind != Kind::Int && t.kind != Kind::Unknown)
        diags_.error(a.loc, c.callee() + "() takes an integer here, got " + t.str());
      if (k == ArgKind::ListArg && t.kind != Kind::List && t.kind != Kind::Unknown)
        diags_.error(a.loc, c.callee() + "() takes a list here, got " + t.str());
    }
    return spec->result;
  }

  void kind_error(const Expr& e, const std::string& what, const ExprType& t) {
    std::string hint;
    if (t.kind == Kind::Value) hint = "; read a tensor with scalar(x), value(x), shape(x), rank(x) or dtype(x)";
    diags_.error(e.loc, what + ", got " + (t.kind == Kind::Value ? "a " : "") + t.str() + hint);
  }

  // The kind of a where-clause or attribute-value expression.
  ExprType expr_type(Expr& e, const Scope& sc) {
    switch (e.kind) {
      case ExprKind::Int: return ExprType::of(Kind::Int);
      case ExprKind::Float: return ExprType::of(Kind::Float);
      case ExprKind::String: return ExprType::of(Kind::String);
      case ExprKind::List: {
        ExprType t = ExprType::of(Kind::List);
        bool first = true;
        for (auto& el : e.dyn<ListExpr>()->elements) {
          ExprType et = expr_type(*el, sc);
          Kind k = et.kind;
          if (first) t.elem = k;
          else if (t.elem == Kind::Int && k == Kind::Float) t.elem = Kind::Float;
          else if (!(t.elem == Kind::Float && k == Kind::Int) && t.elem != k) t.elem = Kind::Unknown;
          first = false;
        }
        return t;
      }
      case ExprKind::Name: return name_type(*e.dyn<NameExpr>(), sc);
      case ExprKind::Wildcard:
      case ExprKind::Optional:
      case ExprKind::Variadic:
        diags_.error(e.loc, std::string(e.kind == ExprKind::Wildcard ? "'_'" : e.kind == ExprKind::Optional ? "'x?'" : "'xs...'") +
                                " can only be an argument of an op in a match");
        return ExprType::of(Kind::Unknown);
      case ExprKind::AttrRead: return attr_read_type(*e.dyn<AttrReadExpr>(), sc);
      case ExprKind::Index: {
        auto& ix = *e.dyn<IndexExpr>();
        ExprType b = expr_type(*ix.base, sc);
        ExprType i = expr_type(*ix.index, sc);
        if (b.kind != Kind::List && b.kind != Kind::Unknown) kind_error(*ix.base, "only lists can be indexed", b);
        if (i.kind != Kind::Int && i.kind != Kind::Unknown) kind_error(*ix.index, "an index must be an integer", i);
        return ExprType::of(b.kind == Kind::List ? b.elem : Kind::Unknown);
      }
      case ExprKind::Unary: {
        auto& u = *e.dyn<UnaryExpr>();
        ExprType t = expr_type(*u.operand, sc);
        if (u.op == UnaryOp::Not) {
          if (t.kind != Kind::Bool && t.kind != Kind::Unknown) kind_error(*u.operand, "'!' needs a condition", t);
          return ExprType::of(Kind::Bool);
        }
        if (!t.is_number()) kind_error(*u.operand, "'-' needs a number", t);
        return t.is_number() ? t : ExprType::of(Kind::Unknown);
      }
      case ExprKind::Binary: return binary_type(*e.dyn<BinaryExpr>(), sc);
      case ExprKind::Coalesce:
        diags_.error(e.loc, "'?" "?' gives a fallback for an absent input of a rewrite op; it cannot be used here");
        return ExprType::of(Kind::Unknown);
      case ExprKind::Call: {
        auto& c = *e.dyn<CallExpr>();
        resolve(c, place_ == Place::Match ? Place::Where : place_);
        if (c.call_kind == CallKind::Builtin) return builtin_type(c, sc);
        if (c.call_kind == CallKind::Pattern) {
          diags_.error(c.loc, "pattern " + quote(c.callee()) + " can only be called in a match");
          return ExprType::of(Kind::Unknown);
        }
        diags_.error(c.loc, "an op call is not allowed here; conditions use built-in functions (" +
                                std::string("const, rank, dtype, shape, uses, ...)"));
        return ExprType::of(Kind::Unknown);
      }
    }
    return ExprType::of(Kind::Unknown);
  }

  ExprType binary_type(BinaryExpr& b, const Scope& sc) {
    ExprType l = expr_type(*b.lhs, sc), r = expr_type(*b.rhs, sc);
    const std::string op = quote(binary_op_spelling(b.op));
    auto unknown = [](const ExprType& t) { return t.kind == Kind::Unknown; };
    switch (b.op) {
      case BinaryOp::And:
      case BinaryOp::Or:
        if (l.kind != Kind::Bool && !unknown(l)) kind_error(*b.lhs, op + " needs conditions on both sides", l);
        if (r.kind != Kind::Bool && !unknown(r)) kind_error(*b.rhs, op + " needs conditions on both sides", r);
        return ExprType::of(Kind::Bool);
      case BinaryOp::Eq:
      case BinaryOp::Ne: {
        if (l.kind == Kind::Value || r.kind == Kind::Value)
          diags_.error((l.kind == Kind::Value ? b.lhs : b.rhs)->loc,
                       "a tensor value cannot be compared; read it with scalar(x), value(x), shape(x), rank(x) or dtype(x)");
        else if (!comparable(l, r))
          diags_.error(b.loc, "cannot compare " + l.str() + " with " + r.str());
        return ExprType::of(Kind::Bool);
      }
      case BinaryOp::Lt:
      case BinaryOp::Le:
      case BinaryOp::Gt:
      case BinaryOp::Ge:
        if (!l.is_number()) kind_error(*b.lhs, op + " compares numbers", l);
        else if (!r.is_number()) kind_error(*b.rhs, op + " compares numbers", r);
        return ExprType::of(Kind::Bool);
      case BinaryOp::In:
        if (l.kind == Kind::Value) kind_error(*b.lhs, "'in' tests a number, op or type", l);
        if (r.kind != Kind::List && !unknown(r)) kind_error(*b.rhs, "'in' needs a list on its right", r);
        else if (r.kind == Kind::List && r.elem != Kind::Unknown && !unknown(l) &&
                 !comparable(l, ExprType::of(r.elem)))
          diags_.error(b.loc, "cannot look for " + l.str() + " in a " + r.str());
        return ExprType::of(Kind::Bool);
      case BinaryOp::Add:
      case BinaryOp::Sub:
      case BinaryOp::Mul:
      case BinaryOp::Div:
      case BinaryOp::Mod: {
        const std::string hint = l.kind == Kind::Value || r.kind == Kind::Value
                                     ? " (arithmetic on tensors is written with ops: Add, Sub, Mul, Div)"
                                     : "";
        if (!l.is_number()) {
          diags_.error(b.lhs->loc, op + " needs numbers, got " + (l.kind == Kind::Value ? "a " : "") + l.str() + hint);
          return ExprType::of(Kind::Unknown);
        }
        if (!r.is_number()) {
          diags_.error(b.rhs->loc, op + " needs numbers, got " + (r.kind == Kind::Value ? "a " : "") + r.str() + hint);
          return ExprType::of(Kind::Unknown);
        }
        if (unknown(l) || unknown(r)) return ExprType::of(Kind::Unknown);
        return ExprType::of(l.kind == Kind::Float || r.kind == Kind::Float || b.op == BinaryOp::Div ? Kind::Float : Kind::Int);
      }
    }
    return ExprType::of(Kind::Unknown);
  }

  static bool comparable(const ExprType& a, const ExprType& b) {
    if (a.kind == Kind::Unknown || b.kind == Kind::Unknown) return true;
    if (a.is_number() && b.is_number()) return true;
    auto textish = [](Kind k) { return k == Kind::Op || k == Kind::String; };
    if (textish(a.kind) && textish(b.kind)) return true;
    return a.kind == b.kind;
  }

  // ------------------------------------------------------------ attributes of a call

  void check_attrs(CallExpr& c, const std::vector<const OpInfo*>& ops, Scope& sc, bool in_match) {
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

  static bool is_match_attr_literal(const Expr& e) {
    if (e.dyn<IntExpr>() || e.dyn<FloatExpr>() || e.dyn<StringExpr>() || e.dyn<NameExpr>()) return true;
    if (auto* l = e.dyn<ListExpr>())
      return std::all_of(l->elements.begin(), l->elements.end(), [](const ExprPtr& x) { return is_match_attr_literal(*x); });
    return false;
  }

  // `<...c>`: c's node must be matched, and the target op must accept every attribute c's op
  // may carry (unless set explicitly in the same list).
  void check_spread(const AttrItem& item, const std::vector<const OpInfo*>& targets, Scope& sc, const CallExpr& c) {
    const Binding* b = attr_base(item.name, item.loc, sc);
    if (!b || !b->producer || b->producer->call_kind != CallKind::Op) return;
    auto it = ops_.find(b->producer);
    if (it == ops_.end()) return;
    std::set<std::string> overridden;
    for (const auto& a : c.attrs)
      if (!a.spread) overridden.insert(a.name);
    for (const OpInfo* src : it->second) {
      if (!src) continue;
      for (const OpInfo* dst : targets) {
        if (!dst) continue;
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

  // ------------------------------------------------------------ element types

  // Binds the element-type variables of one op node: arguments unify through the op's type
  // constraints; returns one variable per output.
  std::vector<int> node_types(CallExpr& c, const std::vector<const OpInfo*>& ops, const std::vector<int>& arg_vars,
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

  // ------------------------------------------------------------ match (and pattern bodies)

  // Checks one op/pattern call of a match; returns its output type variables.
  std::vector<int> match_call(CallExpr& c, Scope& sc, size_t num_outputs) {
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
      Expr& a = *c.args[i];
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

  int match_arg(Expr& a, size_t i, const std::vector<const OpInfo*>& ops, Scope& sc) {
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

  void match_statement(Statement& s, Scope& sc) {
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

  // The matcher starts at the root (the last statement) and walks inputs, so every statement
  // must feed the root.
  void check_connected(const std::vector<Statement>& stmts) {
    if (stmts.size() < 2) return;
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < stmts.size(); ++i)
      for (const auto& o : stmts[i].outputs)
        if (o.name != "_") producer.emplace(o.name, i);
    std::vector<bool> seen(stmts.size(), false);
    std::vector<size_t> work = {stmts.size() - 1};
    seen.back() = true;
    std::function<void(const Expr&)> visit = [&](const Expr& e) {
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
        diags_.error(stmts[i].loc, "this statement does not feed the match's root (the last statement, at " +
                                       at(stmts.back().loc) + "); every matched node must flow into the root");
  }

  // ------------------------------------------------------------ rewrite

  int rewrite_name_var(const std::string& name, const SourceLoc& loc, Scope& sc) {
    auto r = sc.rewrite.find(name);
    if (r != sc.rewrite.end()) return r->second.var;
    auto m = sc.match.find(name);
    if (m != sc.match.end()) return m->second.var;
    report_unbound(name, loc, sc);
    return -1;
  }

  // A value the rewrite computes (a statement's right side, or an op input). Returns its
  // element-type variables (one per output; -1 when the rule cannot tell).
  std::vector<int> rewrite_value(Expr& e, Scope& sc, size_t num_outputs) {
    if (auto* c = e.dyn<CallExpr>()) {
      resolve(*c, Place::Rewrite);
      if (c->call_kind == CallKind::Op) return rewrite_call(*c, sc, num_outputs);
      if (c->call_kind == CallKind::Pattern) {
        diags_.error(c->loc, "pattern " + quote(c->callee()) + " can only be called in a match");
        return {-1};
      }
    }
    if (auto* n = e.dyn<NameExpr>()) return {rewrite_name_var(n->name, n->loc, sc)};
    if (e.dyn<IntExpr>() || e.dyn<FloatExpr>() || e.dyn<ListExpr>()) {
      literal_kind(e);
      return {-1};
    }
    ExprType t = expr_type(e, sc);
    if (t.kind == Kind::Bool || t.kind == Kind::Op || t.kind == Kind::DType || t.kind == Kind::Attrs ||
        t.kind == Kind::String)
      kind_error(e, "a rewrite value must be a tensor or a number", t);
    return {-1};
  }

  std::vector<int> rewrite_call(CallExpr& c, Scope& sc, size_t num_outputs) {
    if (c.ops.size() > 1) {
      diags_.error(c.ops[1].loc, "an alternation can only be matched; a rewrite creates one op");
      return {-1};
    }
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

  int rewrite_arg(Expr& a, size_t i, const OpInfo* op, Scope& sc) {
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
        if (op) check_literal_input(a, *op, i);
        else literal_kind(a);
        return -1;
      default: {
        auto outs = rewrite_value(a, sc, 1);
        return outs.empty() ? -1 : outs[0];
      }
    }
  }

  void rewrite_statement(Statement& s, Scope& sc) {
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

  // ------------------------------------------------------------ rules

  void check_rule(RuleDecl& r) {
    opset_ = rule_opset(r);
    if (r.has_level && !parse_level(r.level_text))
      diags_.error(r.level_loc, "unknown level " + quote(r.level_text) + "; expected basic, extended, layout or all" +
                                    did_you_mean(r.level_text, {"basic", "extended", "layout", "all"}));
    std::set<std::string> provs;
    for (const auto& p : r.providers)
      if (!provs.insert(p.name).second) diags_.error(p.loc, "provider " + quote(p.name) + " is listed twice");
    if (r.benefit && *r.benefit < 0) diags_.error(r.benefit_loc, "benefit must not be negative");

    Scope sc;
    place_ = Place::Match;
    if (r.match.empty()) diags_.error(r.loc, "rule " + quote(r.name) + " matches nothing: its match block is empty");
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

  // Names the where clause requires to be constant: arguments of top-level const(...).
  static std::set<std::string> required_constants(const RuleDecl& r) {
    std::set<std::string> out;
    std::function<void(const Expr&)> scan = [&](const Expr& e) {
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

  void check_test(TestBlock& t, const RuleDecl& r, Scope& sc) {
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

  // ------------------------------------------------------------ patterns

  void check_pattern(PatternDecl& p) {
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
      if (diags_.error_count() == errors_before_body) check_connected(body);
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

  void collect_pattern_calls(const PatternDecl& p, const CallExpr& c) {
    if (c.call_kind == CallKind::Pattern && c.pattern) calls_[&p].emplace_back(c.pattern, c.loc);
    for (const auto& a : c.args)
      if (auto* n = a->dyn<CallExpr>()) collect_pattern_calls(p, *n);
  }

  void check_pattern_cycles() {
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

  RuleSet& rs_;
  const CheckOptions& opts_;
  Diagnostics& diags_;
  OpCatalog catalog_;
  DTypeSolver solver_;
  int opset_ = 0;
  Place place_ = Place::Match;
  std::map<const CallExpr*, std::vector<const OpInfo*>> ops_;
  std::map<const PatternDecl*, std::vector<std::pair<const PatternDecl*, SourceLoc>>> calls_;
};

}  // namespace

void check_rules(RuleSet& rules, const CheckOptions& opts, Diagnostics& diags) {
  Sema(rules, opts, diags).run();
}

}  // namespace fusor::dsl
