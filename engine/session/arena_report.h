// The memory plan of a planned model as JSON (`fusor inspect --arena`): every intermediate of the
// main graph with its lifetime (defining and last-reading step), planned bytes, arena offset and
// how it got its place (own buffer, in place over an input, view), plus totals: the arena's peak
// against the no-reuse total. Subgraph plans are summarized. Keys are listed in docs/cli.md.
#pragma once
#include "engine/exec/executor.h"
#include "core/util/json.h"

namespace fusor {

json::Value arena_json(const Executor& executor);

}  // namespace fusor
