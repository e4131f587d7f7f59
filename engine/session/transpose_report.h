// What the layout level did with Transposes, for `fusor optimize --json` (issue 7's diagnostics):
// how many the model had, how many the layout rules inserted (two per op they convert to NHWC:
// rules named *_to_nhwc), how many were cancelled, and for each one left the op that blocked it.
//
// The transpose rules push Transposes towards the outputs, so a Transpose stops in front of an op
// no rule moves it through: that op is named ("blocked by Flatten"). A Transpose reading a graph
// input or feeding a graph output is where the layout changes at the model's boundary.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"

namespace fusor {

struct TransposeLeft {
  std::string node;     // the Transpose's name
  std::string reason;   // "blocked by Flatten ('flat0')", "feeds graph output 'y'", ...
};

struct TransposeReport {
  int64_t before = 0, inserted = 0, cancelled = 0, left = 0;
  std::vector<TransposeLeft> details;
};

int64_t count_transposes(const Model& model);
// `before`: count_transposes of the model before optimize; `rules_fired` from its report.
TransposeReport transpose_report(const Model& after, int64_t before, const std::map<std::string, int64_t>& rules_fired);

}  // namespace fusor
