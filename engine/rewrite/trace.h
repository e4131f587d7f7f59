// `--trace`: one record per change of a rewrite run (rules and built-in passes), in order. An
// observer of the run (observer.h).
#pragma once
#include <string>
#include <vector>

#include "engine/rewrite/observer.h"

namespace fusor {

struct TraceRecord {
  std::string rule;        // rule or pass name
  std::string location;    // "FILE:LINE", "built-in" for passes
  std::vector<std::string> nodes;  // names of the nodes replaced
  std::string graph;       // graph name (subgraphs are named by their owner's graph attribute)
  std::string str() const; // "conv_bn_fold (rules/x.rules:12): conv1, bn1"
};

class TraceObserver : public RewriteObserver {
 public:
  void pass_fired(const Graph& g, const char* pass, const std::vector<std::string>& nodes, int times,
                  const RunProgress& at) override;
  void matched(const Graph& g, const RootInfo& root, const CompiledRule& c, const ApplyResult& res,
               const std::vector<const CompiledRule*>& later, const RunProgress& at) override;

  std::vector<TraceRecord> records;
};

}  // namespace fusor
