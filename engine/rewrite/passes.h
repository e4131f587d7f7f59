// The built-in passes that run inside the fixed-point loop, each on one node at a time so they
// share the worklist with the rules. Each returns whether it changed the graph and appends the
// nodes whose neighbourhood changed to `touched`.
//
// Why these are passes and not rules:
// - constant_folding: evaluating a node needs the CPU kernels; no pattern can compute values.
// - dead_code: "a node whose outputs nobody uses" is a property of uses, not a pattern rooted at
//   an output the rewrite could redefine (a match needs an output to redefine).
// - cse: "two nodes with the same op, attributes and inputs" quantifies over any op and any
//   attribute set; patterns name fixed ops and constrain attributes by value.
// - initializer_dedup: comparing tensor bytes across unrelated initializers is not a pattern over
//   nodes at all.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/ir/graph.h"

namespace fusor {

inline constexpr const char* kConstantFolding = "constant_folding";
inline constexpr const char* kDeadCode = "dead_code";
inline constexpr const char* kCse = "cse";
inline constexpr const char* kInitializerDedup = "initializer_dedup";

// Removes n when none of its outputs is used or a graph output.
bool dead_code_pass(Graph& g, NodeId n, std::vector<NodeId>& touched);

struct FoldOptions {
  // Results over this many bytes are not folded, unless they are no larger than the node's
  // constant inputs together (folding that does not grow the model is always kept), or than
  // op_traits(op).fold_growth times them (a weight transform such as fusor.WinogradFilter).
  size_t max_bytes = size_t(1) << 20;
  int64_t opset = 0;
};
// Replaces n by initializers when all its inputs are constant (and it is deterministic, has a
// kernel, no subgraph), a Constant node by its initializer, and Shape/Size of a value whose
// shape is static by the constant. Kernel errors leave the node in place.
bool constant_folding_pass(Graph& g, NodeId n, const FoldOptions& opts, std::vector<NodeId>& touched);

// Replaces n by an earlier-equivalent node (same op, attributes, inputs) among the consumers of
// its first input. Nodes with subgraphs or nondeterministic ops are never merged.
bool cse_pass(Graph& g, NodeId n, std::vector<NodeId>& touched);

// Merges initializers with equal dtype, shape and bytes into the first one (by value id). Graph
// inputs and outputs are kept apart. Incremental: add() indexes/merges one initializer.
class InitializerDedup {
 public:
  explicit InitializerDedup(Graph& g) : g_(g) {}
  // Indexes every initializer; returns the number merged.
  int run_all(std::vector<NodeId>& touched);
  // Indexes v; returns true when v was merged into an earlier equal initializer.
  bool add(ValueId v, std::vector<NodeId>& touched);

 private:
  Graph& g_;
  std::map<std::string, std::vector<ValueId>> index_;
};

}  // namespace fusor
