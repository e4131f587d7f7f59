// The fixed-point loop (egg style): a worklist of nodes, seeded with the graph in order. Popping a
// node runs the built-in passes on it (dead_code, constant_folding, cse), then the rules whose
// root op is the node's op, best first (benefit, then rule list order, then name). A change
// re-queues only the nodes it touched and their neighbours. initializer_dedup runs once over all
// initializers and then on every initializer a change creates.
//
// Determinism: the queue is FIFO over node ids, rules have a total order, and new names come from
// the graph's counter, so the same graph and rules give the same result.
// Termination: every new node records a rewrite depth (1 + the deepest node its match consumed).
// A chain deeper than max_depth on one spot is a cycle, more than max_rewrites rewrites in all a
// runaway: the run stops there and returns the reason (RewriteReport::stop) with a message naming
// the rules involved and where they are defined; it does not throw. The caller decides (optimize()
// refuses the model: BadInput, exit 2, nothing written).
// Subgraphs (If/Loop/Scan bodies) are rewritten first, each with its own worklist.
//
// The built-in passes are a list of node passes tried in order on every popped node (dead_code,
// constant_folding with initializer_dedup of what it folds, cse); initializer_dedup also runs once
// over all initializers first. Explain records and --trace are observers of the run (observer.h).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/pattern/rule.h"
#include "engine/rewrite/explain.h"
#include "engine/rewrite/match.h"
#include "engine/rewrite/observer.h"
#include "engine/rewrite/trace.h"

namespace fusor {

class KernelGate;

struct RewriteOptions {
  std::vector<std::string> disabled;  // rule or built-in pass names
  bool trace = false;                 // fill RewriteReport::trace
  size_t max_rewrites = 0;            // 0: max(10000, 20 x nodes)
  int max_depth = 1000;               // rewrite chain depth on one spot
  size_t fold_max_bytes = size_t(1) << 20;
  std::string explain_rule;           // record where this rule matched or nearly matched (explain.h)
  const KernelGate* gate = nullptr;   // the provider's kernel declarations (kernel_gate.h); null: no gating
  bool reinfer_shapes = false;        // run fusor::infer_shapes on the model after changes
  std::vector<RewriteObserver*> observers;  // watch the run (observer.h), besides trace and explain
};

// Saturated: no rule or pass applies any more (the fixed point). Cycle and IterationLimit: the run
// stopped early (see Termination above); the graph is valid but not at a fixed point.
enum class StopReason { Saturated, IterationLimit, Cycle };
const char* stop_reason_name(StopReason r);

struct RewriteReport {
  std::map<std::string, int> rules_fired;  // by rule or pass name
  std::vector<TraceRecord> trace;
  std::vector<ExplainRecord> explain;  // explain_rule's records, in the order roots were first tried
  int skipped = 0;                     // rewrites the gate skipped (all rules)
  StopReason stop = StopReason::Saturated;
  // Cycle: "rewriting does not terminate: rules a (rules/x.rules:3), b (rules/x.rules:9) keep
  // rewriting each other's results (rewrite depth 1001 on one spot)"; IterationLimit likewise.
  std::string stop_message;
  size_t nodes_visited = 0;    // worklist pops
  size_t match_attempts = 0;   // rule match attempts
  size_t rewrites = 0;         // changes, passes included
};

RewriteReport run_rewrites(Model& model, const std::vector<Rule>& rules, const RewriteOptions& opts);
// The same on one graph (and its subgraphs), at the given ONNX opset.
RewriteReport run_rewrites(Graph& graph, const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset);

}  // namespace fusor
