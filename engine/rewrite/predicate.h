// Evaluation of `where` expressions (and expression attribute templates) over a match.
// Three-valued: a predicate reading an unknown (symbolic or missing) dimension, rank or attribute
// is Unknown, which propagates and counts as false at the top.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "engine/rewrite/match.h"

namespace fusor {

struct PValue {
  // Sym: a symbolic dimension (its dim_param in `str`). Two equal symbols compare equal (ONNX:
  // dims with the same dim_param have the same size); anything else about a symbol is Unknown.
  enum class Kind { Unknown, Bool, Num, List, Op, DType, Str, Sym };
  Kind kind = Kind::Unknown;
  bool b = false;
  double num = 0;
  std::vector<PValue> list;
  OpType op;
  DataType dtype = DataType::Undefined;
  std::string str;

  static PValue unknown() { return {}; }
  static PValue boolean(bool v) { PValue p; p.kind = Kind::Bool; p.b = v; return p; }
  static PValue number(double v) { PValue p; p.kind = Kind::Num; p.num = v; return p; }
  static PValue symbol(std::string s) { PValue p; p.kind = Kind::Sym; p.str = std::move(s); return p; }
  bool known() const;  // recursively known
  std::string repr() const;
};

PValue eval_expr(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env);
// True only when the expression is known and true.
bool eval_predicate(const Expr& e, const Pattern& p, const Match& m, MatchEnv& env);
// The attribute a value denotes: Num -> int when integral and `kind` allows, else float; List ->
// ints or floats; Str/Op -> string. `kind` (Undefined kind: infer) comes from the op schema.
std::optional<Attribute> pvalue_to_attr(const PValue& v, const std::string& name, AttrKind kind);

}  // namespace fusor

namespace fusor {
// Attribute `name` of node n in normal form, or the ONNX default (normalized) when omitted.
std::optional<Attribute> read_node_attr(MatchEnv& env, NodeId n, const std::string& name);
PValue attr_to_pvalue(const Attribute& a);
}  // namespace fusor
