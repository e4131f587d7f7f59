// Op lookup (ONNX schemas at the rule's opset, fusor's catalog), call resolution, arity, literal kinds.
#include "dsl/sema_checker.h"

namespace fusor::dsl::sema_detail {

int Sema::rule_opset(const RuleDecl& r) const {
  int lo = catalog_.onnx_opset(), hi = INT_MAX;
  std::function<void(const AstExpr&)> scan = [&](const AstExpr& e) {
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

const OpInfo* Sema::lookup_op(const OpRef& ref) {
  OpLookupResult r = catalog_.find(ref.domain, ref.name, opset_);
  switch (r.status) {
    case OpLookup::Found: return r.op;
    case OpLookup::UnknownDomain:
      if (ref.name == "op")
        diags_.error(ref.loc, quote(ref.qualified()) + " creates the op that matched " + quote(ref.domain) +
                                  ": it is written in a rewrite, with " + quote(ref.domain) + " produced by the match");
      else
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

void Sema::resolve(CallExpr& c, Place place) {
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

std::vector<const OpInfo*>& Sema::ops_of(CallExpr& c) {
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

std::string Sema::slot_name(const OpInfo& op, size_t i) {
  const FormalParam* f = op.input_formal(i);
  std::string s = "input " + std::to_string(i + 1);
  if (f) s += " (" + quote(f->name) + ")";
  return s + " of " + op.qualified();
}

void Sema::check_arity(const CallExpr& c, const std::vector<const OpInfo*>& ops, size_t nargs, bool has_variadic) {
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

Kind Sema::literal_kind(const AstExpr& e) {
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

void Sema::check_literal_input(const AstExpr& lit, const OpInfo& op, size_t i) {
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

ExprType Sema::attr_expr_type(AttrType t) {
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

bool Sema::fits_attr(AttrType want, const ExprType& t) {
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

}  // namespace fusor::dsl::sema_detail
