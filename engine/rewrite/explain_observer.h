// `fusor explain --rule NAME`: the observer of a rewrite run (observer.h) that records, for every
// root node the rule was tried at, what happened there (explain.h).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "engine/rewrite/explain.h"
#include "engine/rewrite/observer.h"

namespace fusor {

class ExplainObserver : public RewriteObserver {
 public:
  explicit ExplainObserver(std::string rule) : rule_(std::move(rule)) {}

  void begin(const std::vector<CompiledRule>& rules) override;
  bool wants_near_misses(const Rule& r) const override { return r.name == rule_; }
  void pass_fired(const Graph& g, const char* pass, const std::vector<std::string>& nodes, int times,
                  const RunProgress& at) override;
  void near_miss(const Graph& g, const RootInfo& root, const CompiledRule& c, const NearMiss& miss,
                 const RunProgress& at) override;
  void matched(const Graph& g, const RootInfo& root, const CompiledRule& c, const ApplyResult& res,
               const std::vector<const CompiledRule*>& later, const RunProgress& at) override;

  // One record per (graph, root), in the order roots were first tried.
  std::vector<ExplainRecord> records;

 private:
  size_t slot(const Graph& g, const std::string& root);
  ExplainRecord& record(const Graph& g, const RootInfo& root, const CompiledRule& c, const RunProgress& at);
  void note_removed(const Graph& g, const std::vector<std::string>& names, const std::string& by);

  std::string rule_;
  std::map<int, int> body_;                // per compiled rule index: its body among rules of its name
  std::map<std::string, size_t> index_;    // graph, root -> records index
  std::vector<int> miss_progress_;         // per record: its near miss's progress
};

}  // namespace fusor
