// The compiled matcher: one rule's pattern against the graph, starting at a root node.
//
// Several roots: a pattern whose statements do not all feed the last one (`q = MatMul(x, wq)`,
// `k = MatMul(x, wk)`) is matched from the last one down, then each other root is found among the
// consumers of a value already bound (x's consumers), as a further choice point; every pattern node
// binds a different graph node.
//
// A match attempt is a depth-first search over goals ("this pattern var is that value", "this
// pattern node is that graph node", "this literal is that value"). Choices (commutative operand
// order, n-ary subsets, alternation is a plain membership test) push alternatives and undo their
// bindings on failure, so one attempt explores every way the rule can match at that root without
// the rule being copied per operand order. Checks inside a node go cheapest first: op id, arity,
// attribute constants; then its inputs; the outside-use rule and `where` run last, once the
// structure matched.
#pragma once
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "engine/rewrite/normalize.h"
#include "core/pattern/rule.h"

namespace fusor {

// What a successful attempt bound.
struct Match {
  std::vector<ValueId> vars;        // per pattern var; kNoValue when absent or unbound
  std::vector<uint8_t> bound;       // per var
  std::vector<NodeId> nodes;        // per pattern node
  std::vector<std::vector<ValueId>> tails;  // per var (Tail vars only)
  bool is_absent(int var) const { return bound[var] && vars[var] == kNoValue; }
};

// Which kind of constraint a near miss failed (for `fusor explain`).
enum class MissKind {
  Op,          // a node's op is not the pattern's (or none of its alternatives)
  Arity,       // a node has too many or too few inputs, or lacks a named output
  Attribute,   // a `<name = value>` constraint
  Input,       // an input: absent, not produced by a node, or not the value a shared name is bound to
  Literal,     // a literal input: not constant, or another value
  OutsideUse,  // a matched node's output is used outside the match, or is a graph output
  Where,       // the where clause (unknown shapes count as false)
};
// "op", "arity", "attribute", "input", "literal", "outside use", "where"
const char* miss_kind_name(MissKind k);

// Why a rule whose root op matched did not match (for `fusor explain`).
struct NearMiss {
  NodeId root = kNoNode;
  int pattern_node = -1;   // the pattern node being checked, -1 for rule-wide checks
  NodeId node = kNoNode;   // the graph node it was checked against
  std::string reason;      // "node 'n2' (Mul): input 1: expected literal 0.5, got 'w' (not constant)"
  MissKind kind = MissKind::Op;
  int input = -1;             // the input of `node` the failure is about, -1 for none
  NodeId consumer = kNoNode;  // when `node` was reached through an input: the node reading it
  int consumer_input = -1;    // ... and which of its inputs
  int progress = -1;          // how far the attempt got (comparable between a rule's bodies)
};

// A pattern node found from a value the match bound before it (`var`), among that value's
// consumers: how a pattern with several roots reaches its other roots (and their inputs).
struct UpStep {
  int node = -1;
  int var = -1;
};

// Per-rule facts computed once.
struct CompiledRule {
  const Rule* rule = nullptr;
  int index = 0;                 // position in the rule list (ties after benefit)
  std::vector<uint8_t> redefined;  // per var: the rewrite redefines it
  std::vector<UpStep> up;        // in order; empty for a pattern with one root
};

// Validates a rule's structure (indices in range, every node reached from the root down through
// inputs or, for a pattern with several roots, up from a value bound before it; tails last,
// redefinitions target matched outputs). Throws BadInput "FILE:LINE: rule 'NAME': ...".
CompiledRule compile_rule(const Rule& r, int index);

struct MatchEnv {
  const Graph& graph;
  NormCache& norm;
  int64_t opset = 0;
  size_t attempts = 0;  // match attempts started (for locality measurements)
};

// Tries the rule at `root`. On success fills `m`. When `miss` is non-null and the root op
// matched but the rule did not, the failure that got furthest is described there.
bool match_rule(const CompiledRule& cr, MatchEnv& env, NodeId root, Match& m, NearMiss* miss = nullptr);

}  // namespace fusor
