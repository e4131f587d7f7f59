// Internal to the semantic checks (dsl/sema*.cpp): the checker, one class whose methods are
// split across files by concern:
//   sema.cpp           the driver: declarations, duplicate names, the per-file loop
//   sema_ops.cpp       op lookup (ONNX schemas, fusor catalog), call resolution, arity, literals
//   sema_exprs.cpp     the names of where/attribute expressions (the checker is dsl/expr_check.h)
//   sema_attrs.cpp     attribute lists: names, types, required attributes, spreads
//   sema_types.cpp     element-type variables of op nodes (for the type-change check)
//   sema_match.cpp     match statements and pattern bodies
//   sema_rewrite.cpp   rewrite statements
//   sema_rule.cpp      a whole rule: header, blocks, outputs left undefined, test blocks
//   sema_patterns.cpp  pattern declarations and call cycles
#pragma once
#include <algorithm>
#include <cctype>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "dsl/builtins.h"
#include "dsl/diagnostics.h"
#include "dsl/dtype_solver.h"
#include "dsl/op_catalog.h"
#include "dsl/rules.h"
#include "dsl/suggest.h"

namespace fusor::dsl::sema_detail {

inline std::string at(const SourceLoc& l) { return std::to_string(l.line) + ":" + std::to_string(l.col); }
inline std::string quote(const std::string& s) { return "'" + s + "'"; }

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
      : rs_(rs), diags_(diags), catalog_(opts.opset) {}

  void run();

 private:
  // ------------------------------------------------------------ declarations

  void collect();

  // ------------------------------------------------------------ ops

  // The opset a rule's ops are checked at: the target, moved by `opset() >= N` style guards
  // among the rule's top-level where conditions.
  int rule_opset(const RuleDecl& r) const;

  const OpInfo* lookup_op(const OpRef& ref);

  // Decides what a call is. Patterns and built-ins are unqualified names; in a where clause
  // every call is a built-in; in a rewrite an unknown lower-case name is taken for a
  // misspelt built-in (ONNX op names are capitalized).
  void resolve(CallExpr& c, Place place);

  std::vector<const OpInfo*>& ops_of(CallExpr& c);

  // "input 2 ('W') of Conv"
  static std::string slot_name(const OpInfo& op, size_t i);

  void check_arity(const CallExpr& c, const std::vector<const OpInfo*>& ops, size_t nargs, bool has_variadic);

  // ------------------------------------------------------------ literals and kinds

  // The kind of a literal input: Int, Float or String (lists by their elements).
  Kind literal_kind(const AstExpr& e);

  // A literal used as an op input: its kind must fit the input's element types.
  void check_literal_input(const AstExpr& lit, const OpInfo& op, size_t i);

  static ExprType attr_expr_type(AttrType t);

  static bool fits_attr(AttrType want, const ExprType& t);

  // ------------------------------------------------------------ expressions (where, values)

  struct Scope {
    std::map<std::string, Binding> match;
    std::map<std::string, RewriteBinding> rewrite;
    std::map<std::string, SourceLoc> rewrite_later;  // names a later rewrite statement defines
    std::vector<std::pair<std::string, SourceLoc>> capture_order;
  };

  bool is_value_name(const Scope& sc, const std::string& n) const;

  void report_unbound(const std::string& name, const SourceLoc& loc, const Scope& sc);

  // The match binding whose producer has the attributes `base.attr` reads; null after an error.
  const Binding* attr_base(const std::string& base, const SourceLoc& loc, const Scope& sc);

  // `base.attr` with base bound in the match.
  ExprType attr_read_type(const AttrReadExpr& a, const Scope& sc);

  void kind_error(const AstExpr& e, const std::string& what, const ExprType& t);

  // The kind of a where-clause or attribute-value expression (the shared checker, dsl/expr_check.h,
  // over the rule's names: RuleScope in sema_exprs.cpp).
  ExprType expr_type(AstExpr& e, const Scope& sc);
  class RuleScope;

  // ------------------------------------------------------------ attributes of a call

  void check_attrs(CallExpr& c, const std::vector<const OpInfo*>& ops, Scope& sc, bool in_match);

  static bool is_match_attr_literal(const AstExpr& e);

  // A number, string or list of them, written out (no names or calls).
  static bool is_literal(const AstExpr& e);

  // `<...c>`: c's node must be matched, and the target op must accept every attribute c's op
  // may carry (unless set explicitly in the same list).
  void check_spread(const AttrItem& item, const std::vector<const OpInfo*>& targets, Scope& sc, const CallExpr& c);

  // ------------------------------------------------------------ element types

  // Binds the element-type variables of one op node: arguments unify through the op's type
  // constraints; returns one variable per output.
  std::vector<int> node_types(CallExpr& c, const std::vector<const OpInfo*>& ops, const std::vector<int>& arg_vars,
                              size_t num_outputs);

  // ------------------------------------------------------------ match (and pattern bodies)

  // Checks one op/pattern call of a match; returns its output type variables.
  std::vector<int> match_call(CallExpr& c, Scope& sc, size_t num_outputs);

  int match_arg(AstExpr& a, size_t i, const std::vector<const OpInfo*>& ops, Scope& sc);

  void match_statement(Statement& s, Scope& sc);

  // The matcher starts at the root (the last statement) and walks inputs; the other roots of a
  // match with several are found through a value they share: every statement must be connected
  // to the root through values.
  void check_connected(const std::vector<Statement>& stmts);
  // A pattern body has one result (its last statement): every statement must flow into it.
  void check_feeds_root(const std::vector<Statement>& stmts);

  // ------------------------------------------------------------ rewrite

  int rewrite_name_var(const std::string& name, const SourceLoc& loc, Scope& sc);

  // A value the rewrite computes (a statement's right side, or an op input). Returns its
  // element-type variables (one per output; -1 when the rule cannot tell).
  std::vector<int> rewrite_value(AstExpr& e, Scope& sc, size_t num_outputs);

  std::vector<int> rewrite_call(CallExpr& c, Scope& sc, size_t num_outputs);

  // `y.op <...> (args)` with y bound in the match: the new node is the op that matched y, so the
  // call is checked against every op of y's alternation (ops_[&c]); sets c.matched_op.
  void resolve_matched_op(CallExpr& c, Scope& sc);

  int rewrite_arg(AstExpr& a, size_t i, const OpInfo* op, Scope& sc);

  void rewrite_statement(Statement& s, Scope& sc);

  // A rewrite temporary (a name the match does not have) that nothing reads is dead code.
  void warn_unused_temporaries(const RuleDecl& r, const Scope& sc);

  // ------------------------------------------------------------ rules

  void check_rule(RuleDecl& r);

  // Names the where clause requires to be constant: arguments of top-level const(...).
  static std::set<std::string> required_constants(const RuleDecl& r);

  void check_test(TestBlock& t, const RuleDecl& r, Scope& sc);

  // ------------------------------------------------------------ patterns

  void check_pattern(PatternDecl& p);

  void collect_pattern_calls(const PatternDecl& p, const CallExpr& c);

  void check_pattern_cycles();

  RuleSet& rs_;
  Diagnostics& diags_;
  OpCatalog catalog_;
  DTypeSolver solver_;
  int opset_ = 0;
  Place place_ = Place::Match;
  std::map<const CallExpr*, std::vector<const OpInfo*>> ops_;
  std::map<const PatternDecl*, std::vector<std::pair<const PatternDecl*, SourceLoc>>> calls_;
};

}  // namespace fusor::dsl::sema_detail
