// The fixed-point loop (egg style): a worklist of nodes, seeded with the graph in order. Popping a
// node runs the built-in passes on it (dead_code, constant_folding, cse), then the rules whose
// root op is the node's op, best first (benefit, then rule list order, then name). A change
// re-queues only the nodes it touched and their neighbours. initializer_dedup runs once over all
// initializers and then on every initializer a change creates.
//
// Determinism: the queue is FIFO over node ids, rules have a total order, and new names come from
// the graph's counter, so the same graph and rules give the same result.
// Termination: every new node records a rewrite depth (1 + the deepest node its match consumed).
// A chain deeper than max_depth on one spot, or more than max_rewrites rewrites in all, is a
// cycle: fusor::Error(BadInput) naming the rules involved (so the CLI exits 2 and writes nothing).
// Subgraphs (If/Loop/Scan bodies) are rewritten first, each with its own worklist.
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "engine/rewrite/explain.h"
#include "engine/rewrite/match.h"
#include "core/pattern/rule.h"

namespace fusor {

class KernelGate;

struct RewriteOptions {
  std::vector<std::string> disabled;  // rule or built-in pass names
  bool trace = false;                 // fill RewriteReport::trace
  size_t max_rewrites = 0;            // 0: max(10000, 20 x nodes)
  int max_depth = 1000;               // rewrite chain depth on one spot
  size_t fold_max_bytes = size_t(1) << 20;
  bool throw_on_limit = true;         // false: stop and report instead of throwing
  std::string explain_rule;           // record where this rule matched or nearly matched (explain.h)
  const KernelGate* gate = nullptr;   // the provider's kernel declarations (kernel_gate.h); null: no gating
  bool reinfer_shapes = false;        // run fusor::infer_shapes on the model after changes
};

struct TraceRecord {
  std::string rule;        // rule or pass name
  std::string location;    // "FILE:LINE", "built-in" for passes
  std::vector<std::string> nodes;  // names of the nodes replaced
  std::string graph;       // graph name (subgraphs are named by their owner's graph attribute)
  std::string str() const; // "conv_bn_fold (rules/x.rules:12): conv1, bn1"
};

enum class StopReason { Saturated, IterationLimit, Cycle };
const char* stop_reason_name(StopReason r);

struct RewriteReport {
  std::map<std::string, int> rules_fired;  // by rule or pass name
  std::vector<TraceRecord> trace;
  std::vector<ExplainRecord> explain;  // explain_rule's records, in the order roots were first tried
  int skipped = 0;                     // rewrites the gate skipped (all rules)
  StopReason stop = StopReason::Saturated;
  std::string stop_message;
  size_t nodes_visited = 0;    // worklist pops
  size_t match_attempts = 0;   // rule match attempts
  size_t rewrites = 0;         // changes, passes included
};

RewriteReport run_rewrites(Model& model, const std::vector<Rule>& rules, const RewriteOptions& opts);
// The same on one graph (and its subgraphs), at the given ONNX opset.
RewriteReport run_rewrites(Graph& graph, const std::vector<Rule>& rules, const RewriteOptions& opts, int64_t opset);

}  // namespace fusor
