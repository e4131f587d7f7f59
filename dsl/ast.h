// The typed AST of the rule language (see docs/rules-reference.md).
//
// The parser builds it; sema checks it and fills in the few resolution fields marked "set by
// sema"; dsl/lower.h lowers it into
// rules as data (core/pattern/). Every node has a SourceLoc.
// Expressions are one small class hierarchy with a kind tag (as MLIR's PDLL AST), walked with
// `dyn<T>()`.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pattern/level.h"
#include "dsl/source.h"

namespace fusor::dsl {

// ---------------------------------------------------------------- expressions

enum class ExprKind {
  Name,       // x            a capture, a rewrite temporary, or (in where) an op/dtype name
  Wildcard,   // _            match argument: any value
  Optional,   // x?           match argument: an optional input, maybe absent
  Variadic,   // xs...        the remaining variadic inputs
  Int,        // 4, -1
  Float,      // 1e-5, 2.0
  String,     // "NOTSET"
  List,       // [-1, 1, 1, 1]
  Call,       // Op <attrs> (args), Relu | Sigmoid (c), fusor.Gelu(x), pattern(x), rank(x)
  AttrRead,   // y.epsilon, a.op, a.attrs
  Index,      // shape(x)[1]
  Unary,      // !e, -e
  Binary,     // e op e
  Coalesce,   // b ?? 0.0
};

struct AstExpr {
  explicit AstExpr(ExprKind k, SourceLoc l) : kind(k), loc(std::move(l)) {}
  virtual ~AstExpr() = default;
  const ExprKind kind;
  SourceLoc loc;

  template <typename T> T* dyn() { return kind == T::kKind ? static_cast<T*>(this) : nullptr; }
  template <typename T> const T* dyn() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};
using ExprPtr = std::unique_ptr<AstExpr>;

struct NameExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Name;
  NameExpr(SourceLoc l, std::string n) : AstExpr(kKind, std::move(l)), name(std::move(n)) {}
  std::string name;
};

struct WildcardExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Wildcard;
  explicit WildcardExpr(SourceLoc l) : AstExpr(kKind, std::move(l)) {}
};

struct OptionalExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Optional;
  OptionalExpr(SourceLoc l, std::string n) : AstExpr(kKind, std::move(l)), name(std::move(n)) {}
  std::string name;
};

struct VariadicExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Variadic;
  VariadicExpr(SourceLoc l, std::string n) : AstExpr(kKind, std::move(l)), name(std::move(n)) {}
  std::string name;
};

struct IntExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Int;
  IntExpr(SourceLoc l, int64_t v) : AstExpr(kKind, std::move(l)), value(v) {}
  int64_t value;
};

struct FloatExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Float;
  FloatExpr(SourceLoc l, double v, std::string t) : AstExpr(kKind, std::move(l)), value(v), text(std::move(t)) {}
  double value;
  std::string text;  // as written, for messages
};

struct StringExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::String;
  StringExpr(SourceLoc l, std::string v) : AstExpr(kKind, std::move(l)), value(std::move(v)) {}
  std::string value;  // escapes resolved
};

struct ListExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::List;
  explicit ListExpr(SourceLoc l) : AstExpr(kKind, std::move(l)) {}
  std::vector<ExprPtr> elements;
};

// One op name as written: `Conv`, `fusor.FusedConv` (domain "fusor"), `com.microsoft.X`.
struct OpRef {
  SourceLoc loc;
  std::string domain;  // "" for ONNX
  std::string name;
  // "Conv", "fusor.FusedConv"
  std::string qualified() const { return domain.empty() ? name : domain + "." + name; }
};

// An attribute item in `< ... >`: `name = value`, or the spread `...c`.
struct AttrItem {
  SourceLoc loc;
  bool spread = false;
  std::string name;  // attribute name, or the spread's value name
  ExprPtr value;     // null for a spread
};

enum class CallKind {
  Unresolved,  // as parsed
  Op,          // an ONNX or other-domain op (alternatives in `ops`)
  Pattern,     // a call of a `pattern` (ops.size() == 1)
  Builtin,     // a built-in function of where/rewrite (ops.size() == 1, no domain)
};

struct PatternDecl;

struct CallExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Call;
  explicit CallExpr(SourceLoc l) : AstExpr(kKind, std::move(l)) {}
  std::vector<OpRef> ops;       // more than one: an alternation `Relu | Sigmoid (c)`
  std::vector<AttrItem> attrs;  // `< ... >`
  std::vector<ExprPtr> args;
  // Set by sema.
  CallKind call_kind = CallKind::Unresolved;
  const PatternDecl* pattern = nullptr;
  // `y.op <...> (args)` in a rewrite (ops[0] is {domain "y", name "op"}): creates the op that
  // matched `y`, one of its alternation's ops.
  bool matched_op = false;
  // Callee name for builtins and patterns.
  const std::string& callee() const { return ops.front().name; }
};

// `base.attr`: an attribute of the node that produced `base` in the match. The pseudo-attributes
// `op` (the op that matched) and `attrs` (all its attributes) are read the same way.
struct AttrReadExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::AttrRead;
  AttrReadExpr(SourceLoc l, std::string b, SourceLoc al, std::string a)
      : AstExpr(kKind, std::move(l)), base(std::move(b)), attr_loc(std::move(al)), attr(std::move(a)) {}
  std::string base;
  SourceLoc attr_loc;
  std::string attr;
};

struct IndexExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Index;
  IndexExpr(SourceLoc l, ExprPtr b, ExprPtr i) : AstExpr(kKind, std::move(l)), base(std::move(b)), index(std::move(i)) {}
  ExprPtr base, index;
};

enum class UnaryOp { Not, Neg };

struct UnaryExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Unary;
  UnaryExpr(SourceLoc l, UnaryOp o, ExprPtr e) : AstExpr(kKind, std::move(l)), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp { Or, And, Eq, Ne, Lt, Le, Gt, Ge, In, Add, Sub, Mul, Div, Mod };
const char* binary_op_spelling(BinaryOp op);

// loc is the operator's position.
struct BinaryExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Binary;
  BinaryExpr(SourceLoc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : AstExpr(kKind, std::move(l)), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  BinaryOp op;
  ExprPtr lhs, rhs;
};

// `value ?? fallback` (rewrite): the fallback when `value` is an absent optional input.
struct CoalesceExpr : AstExpr {
  static constexpr ExprKind kKind = ExprKind::Coalesce;
  CoalesceExpr(SourceLoc l, ExprPtr v, ExprPtr f) : AstExpr(kKind, std::move(l)), value(std::move(v)), fallback(std::move(f)) {}
  ExprPtr value, fallback;
};

// ---------------------------------------------------------------- statements and declarations

struct OutputName {
  SourceLoc loc;
  std::string name;  // "_" for an output that must have no consumers
};

// `a, b = expr`
struct Statement {
  SourceLoc loc;
  std::vector<OutputName> outputs;
  ExprPtr value;
};


struct NameRef {
  SourceLoc loc;
  std::string name;
};

// A self-contained test: input types, constants, attributes for the instantiated pattern.
//   test { x: float[1, 8, 16, 16]; w: const float[8, 8, 3, 3]; b: none; t.perm = [0, 2, 1, 3]; }
struct TestInput {
  SourceLoc loc;
  std::string name;
  bool is_const = false;
  bool absent = false;      // `b: none`: an optional input left out
  SourceLoc dtype_loc;
  std::string dtype;        // ONNX spelling: float, int64, ...
  std::vector<int64_t> dims;
  ExprPtr value;            // `= 1e-5` or `= [...]`: the constant's contents, else random
};

struct TestAttr {
  SourceLoc loc;
  std::string value_name;  // the match value whose producer gets the attribute
  std::string attr;
  ExprPtr value;
};

struct TestBlock {
  SourceLoc loc;
  std::string name;  // optional
  std::vector<TestInput> inputs;
  std::vector<TestAttr> attrs;
  std::optional<double> tolerance;
  SourceLoc tolerance_loc;
};

struct RuleDecl {
  SourceLoc loc;
  std::string name;
  OptLevel level = OptLevel::Basic;  // default when no `level` clause (never Disabled)
  bool has_level = false;
  SourceLoc level_loc;
  std::string level_text;      // as written, for the unknown-level check
  std::vector<NameRef> providers;  // empty: every provider
  std::optional<int64_t> benefit;  // default: number of matched nodes
  SourceLoc benefit_loc;
  std::vector<Statement> match;
  std::vector<ExprPtr> where;  // conjunction
  std::vector<Statement> rewrite;
  std::vector<TestBlock> tests;
  size_t order = 0;  // position in the whole rule set (file order across imports)
};

struct PatternDecl {
  SourceLoc loc;
  std::string name;
  std::vector<NameRef> params;
  // One body per alternative: `pattern p(x) { ... } | { ... }`. The outputs of a body's last
  // statement are the pattern's results.
  std::vector<std::vector<Statement>> bodies;
};

struct ImportDecl {
  SourceLoc loc;
  std::string path;           // as written
  std::string resolved_path;  // relative to the importing file
};

struct RuleFile {
  std::string path;  // as given, used in SourceLocs
  int version = 0;
  std::vector<ImportDecl> imports;
  std::vector<std::unique_ptr<RuleDecl>> rules;
  std::vector<std::unique_ptr<PatternDecl>> patterns;
  bool has_errors = false;  // syntax or semantic errors in this file
  std::string source;       // the text that was parsed (the session's rule cache compares it)
};

}  // namespace fusor::dsl
