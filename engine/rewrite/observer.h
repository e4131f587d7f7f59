// Observing a rewrite run (as egg's runner hooks): the fixed-point loop (runner.h) tells its
// observers what happens, and keeps no records of its own. `--trace` and `fusor explain` are
// observers (trace.h, explain_observer.h); a host or a test may add its own through
// RewriteOptions::observers. Observers only watch: they must not change the graph.
//
// Events, in the order they happen at one visit of a node: a built-in pass fired (and the visit
// ends), or the rules rooted at the node's op are tried best first; each failed attempt of a rule
// the observer wants near misses of is reported, then the first match is reported with the
// outcome of its rewrite (applied, refused, skipped); an applied rewrite ends the visit.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "engine/rewrite/apply.h"
#include "engine/rewrite/match.h"

namespace fusor {

// Where the run is: worklist pops and rewrites (passes included) so far.
struct RunProgress {
  size_t nodes_visited = 0;
  size_t rewrites = 0;
};

// The node a rule was tried at, as it was before any rewrite there.
struct RootInfo {
  NodeId node = kNoNode;
  std::string name;
  std::string op;  // "Conv", "fusor.FusedConv"
};

class RewriteObserver {
 public:
  virtual ~RewriteObserver() = default;
  // Called once before the run with every rule it runs (CompiledRule::index is the rule's
  // position in the list given to run_rewrites).
  virtual void begin(const std::vector<CompiledRule>& rules) {}
  // Whether failed attempts of `r` should be described (a NearMiss costs time; the operand
  // prefilter is skipped for such rules so that the miss names the check that failed).
  virtual bool wants_near_misses(const Rule& r) const { return false; }
  // A built-in pass changed the graph `times` times; `nodes` are the names of the nodes it
  // changed, taken before the change.
  virtual void pass_fired(const Graph& g, const char* pass, const std::vector<std::string>& nodes, int times,
                          const RunProgress& at) {}
  // Rule `c` did not match at `root` (only for rules wants_near_misses() chose).
  virtual void near_miss(const Graph& g, const RootInfo& root, const CompiledRule& c, const NearMiss& miss,
                         const RunProgress& at) {}
  // Rule `c` matched at `root`; `res` tells whether its rewrite was applied (res.changed),
  // refused or skipped. `later` are the rules for root's op that come after `c` (a rewrite
  // preempts them at this node).
  virtual void matched(const Graph& g, const RootInfo& root, const CompiledRule& c, const ApplyResult& res,
                       const std::vector<const CompiledRule*>& later, const RunProgress& at) {}
};

}  // namespace fusor
