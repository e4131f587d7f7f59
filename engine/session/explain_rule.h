// The facts `fusor explain --rule NAME` gives about the rule before the run: where it is defined
// and whether it runs at the requested level for the provider (see engine/rewrite/explain.h for
// what the run records).
#pragma once
#include <cstdint>

#include "engine/rewrite/explain.h"
#include "engine/session/optimize.h"

namespace fusor {

// Looks options.explain_rule up in the rule files optimize() would load at any level (the
// provider's files at `all` unless --no-default-rules, and the --rules files). Throws
// Error(Usage) when none defines it, naming the closest rule names; Error(BadInput) for rule
// files with errors. Fills everything but ExplainResult::records.
ExplainResult describe_explained_rule(const OptimizeOptions& options, int64_t opset);

}  // namespace fusor
