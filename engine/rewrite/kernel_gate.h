// A provider's kernel declarations as a gate on rewrites (issue 7, "a rewrite whose result the
// provider's kernel declarations cannot run is skipped for that provider").
//
// A provider definition's `kernels { ... }` block lists the ops it runs, some only in some forms
// (`fusor.FusedConv where activation in [Relu, Clip]`). The runner asks the gate about every node
// a rewrite creates, before the rewrite is committed; when one cannot run, the rewrite is rolled
// back at that match and `fusor explain` reports it as skipped.
//
// - A provider without a `kernels` block runs every op fusor has a kernel for: nothing is gated
//   (cpu.provider).
// - New nodes whose inputs are all constants are not gated: constant folding evaluates them on
//   fusor's own kernels before any provider sees the graph (weight folding writes arithmetic
//   on the weights, e.g. Mul(w, Reshape(k, ...)) in conv_bn_fold).
// - Conditions (core/pattern/kernel_table.h) are Exprs of the one expression language, evaluated
//   by eval_expr (predicate.h) with the node's first output and first input bound: attributes
//   read normalized, with the schema default when the node omits one. A condition that reads
//   something unknown (an unknown rank) does not hold.
#pragma once
#include <string>
#include <vector>

#include "core/pattern/kernel_table.h"
#include "engine/rewrite/match.h"

namespace fusor {

class KernelGate {
 public:
  // Keeps a reference: `table` must outlive the gate.
  explicit KernelGate(const KernelTable& table) : table_(table) {}

  const std::string& provider() const { return table_.provider; }
  // Whether the provider declares its kernels (else every op runs).
  bool restricts() const { return table_.restricts(); }

  // "" when a declaration covers node `n` of env.graph; else why none does, e.g.
  // "provider 'clamp' has no kernel for fusor.FusedConv with activation = Sigmoid (its kernels:
  // fusor.FusedConv where activation in ["", Relu, Clip] at clamp.provider:5)".
  std::string cannot_run(MatchEnv& env, NodeId n) const;

  // The nodes of `nodes` the gate applies to: those with an input that is not a constant, directly
  // or through other nodes of the list (the list is in creation order).
  static std::vector<NodeId> runtime_nodes(const Graph& g, const std::vector<NodeId>& nodes);

 private:
  const KernelTable& table_;
};

}  // namespace fusor
