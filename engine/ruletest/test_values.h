// Tensor contents for instantiated rule tests: the values a test block writes out, and seeded
// random data for the rest.
//
// Random data comes from the same generator as `fusor run`'s inputs (engine/session/inputs.h):
// a fixed splitmix64 stream per (seed, stream), so results repeat on every machine.
#pragma once
#include <cstdint>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor::ruletest {

// Where random values fall: floating-point uniform in [lo, hi), integers uniform in
// [int_lo, int_hi], bools either way.
struct RandomRange {
  double lo = -1, hi = 1;
  int64_t int_lo = 0, int_hi = 3;
};

// A tensor of `dtype` and `shape` with random contents; `stream` separates tensors drawn with one
// seed.
Tensor random_tensor(DataType dtype, const Shape& shape, uint64_t seed, uint64_t stream, const RandomRange& range);

// A tensor holding `values`: one value fills every element; otherwise there must be exactly one
// value per element (the caller reports the mismatch; this returns an undefined Tensor).
Tensor tensor_of_values(DataType dtype, const Shape& shape, const std::vector<double>& values);

}  // namespace fusor::ruletest
