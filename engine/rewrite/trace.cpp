#include "engine/rewrite/trace.h"

namespace fusor {

std::string TraceRecord::str() const {
  std::string s = rule + " (" + location + "):";
  for (size_t i = 0; i < nodes.size(); ++i) s += (i ? ", " : " ") + nodes[i];
  return s;
}

void TraceObserver::pass_fired(const Graph& g, const char* pass, const std::vector<std::string>& nodes, int,
                               const RunProgress&) {
  records.push_back({pass, "built-in", nodes, g.name});
}

void TraceObserver::matched(const Graph& g, const RootInfo&, const CompiledRule& c, const ApplyResult& res,
                            const std::vector<const CompiledRule*>&, const RunProgress&) {
  if (res.changed) records.push_back({c.rule->name, c.rule->location(), res.matched, g.name});
}

}  // namespace fusor
