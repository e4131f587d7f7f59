// The check every rule makes right after its root op, shared across the rules dispatched on that
// op: which ops produce the root's operands. A node's operand producers are read once (operand_ops),
// then each rule's requirements are tested against that short list, with no allocation and no
// backtracking state; the full matcher (match.h) runs only for the rules that pass.
//
// This is the first level of a predicate tree (as MLIR's PDL interpreter shares the checks of a
// common prefix): with 200 rules on one root op, a node pays one operand scan plus 200 small set
// tests instead of 200 matcher runs. The filter is a necessary condition only: it never rejects a
// node the matcher would accept, so results are unchanged (tests/rewrite/operand_filter_test.cpp).
#pragma once
#include <vector>

#include "core/ir/graph.h"
#include "core/pattern/rule.h"

namespace fusor {

// The ops producing a node's inputs (OpType() for an input without a producer or absent).
using OperandOps = std::vector<OpType>;
void operand_ops(const Graph& g, const Node& n, OperandOps& out);

class OperandFilter {
 public:
  OperandFilter() = default;
  // The root's required operand producers: each input of the root that is bound to another
  // pattern node's output, not optional. Operand order is not used (commutative and n-ary roots
  // may match their operands in any order), so a requirement is "some operand is produced by one
  // of these ops".
  explicit OperandFilter(const Pattern& p);
  bool may_match(const OperandOps& ops) const;
  bool empty() const { return required_.empty(); }

 private:
  std::vector<std::vector<OpType>> required_;
};

}  // namespace fusor
