// Applying a rule's rewrite to one match.
//
// New nodes are inserted before the match's root (every var a template uses is defined before
// it). Each redefined output keeps its name, element type and shape: the new value takes over
// the old value's uses, graph-output slots and name, and a rewrite that would change the element
// type or a known shape is refused at this match (the graph is left as it was). Forwarding
// `y = x` where y is a graph output and x cannot take the name (a graph input or initializer,
// another graph output) keeps an Identity; when the match already is that Identity, nothing
// changes and the rewrite reports no change, so the fixed-point loop ends. Types of new nodes
// come from infer_node_types. Attributes the model's opset spells as inputs (Clip min/max,
// axes) are turned back into constant inputs.
#pragma once
#include <string>
#include <vector>

#include "engine/rewrite/match.h"

namespace fusor {

struct ApplyResult {
  bool changed = false;
  std::string refused;                // why the rewrite was refused at this match ("" when not)
  bool skipped = false;               // refused because the provider's kernels cannot run a new node
  std::vector<NodeId> new_nodes;      // in order
  std::vector<NodeId> touched;        // nodes whose inputs or uses changed (to re-queue)
  std::vector<std::string> matched;   // names of the matched nodes (for --trace)
  std::vector<NodeId> removed;        // matched node ids
  int depth = 0;                      // see RewriteState::depth
};

// Per-graph state the rewriter keeps across rewrites.
struct RewriteState {
  // Rewrite depth per node: 0 for original nodes; for new ones the deepest matched node's, plus
  // one when the rewrite did not shrink the graph (as many new nodes as matched ones or more).
  // Rules that undo each other grow it on one spot; a chain of shrinking rewrites (Relu(Relu(x))
  // collapsing) does not, since shrinking alone always terminates. The runner bounds it.
  std::vector<int> depth;
  int get(NodeId n) const { return n < depth.size() ? depth[n] : 0; }
  void set(NodeId n, int d) {
    if (n >= depth.size()) depth.resize(n + 1, 0);
    depth[n] = d;
  }
};

class KernelGate;
// With a gate, a rewrite creating a node the provider's kernel declarations cannot run (constant-only
// nodes aside: constant folding evaluates them) is rolled back and reported `skipped`.
ApplyResult apply_rewrite(Graph& g, const CompiledRule& cr, const Match& m, MatchEnv& env, RewriteState& st,
                          const KernelGate* gate = nullptr);

}  // namespace fusor
