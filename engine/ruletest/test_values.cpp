#include "engine/ruletest/test_values.h"

#include "core/ir/graph.h"
#include "engine/session/inputs.h"
#include "engine/rewrite/graph_util.h"

namespace fusor::ruletest {

Tensor random_tensor(DataType dtype, const Shape& shape, uint64_t seed, uint64_t stream, const RandomRange& range) {
  // complete_inputs draws a graph's inputs from a seeded stream; a one-input graph per tensor reuses
  // that generator instead of keeping a second one.
  Graph g;
  g.add_input(g.add_value("t", ValueType::tensor(dtype, shape)));
  NamedTensors given;
  InputOptions opts;
  opts.seed = seed * 0x9e3779b97f4a7c15ULL + stream;
  opts.lo = range.lo;
  opts.hi = range.hi;
  opts.int_lo = range.int_lo;
  opts.int_hi = range.int_hi;
  complete_inputs(g, given, opts, nullptr);
  return std::move(given.back().second);
}

Tensor tensor_of_values(DataType dtype, const Shape& shape, const std::vector<double>& values) {
  int64_t n = shape_numel(shape);
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != n) return Tensor();
  std::vector<double> all = values.size() == 1 ? std::vector<double>(static_cast<size_t>(n), values[0]) : values;
  return literal_tensor(Literal::list(std::move(all)), dtype).reshaped(shape);
}

}  // namespace fusor::ruletest
