// Helpers of the blocked-layout kernel tests (nchwc_test.cpp, nchwc_affine_test.cpp): forcing an
// ISA, the ISAs this machine runs, reorders through the reference kernels.
#pragma once
#include <cstdlib>
#include <vector>

#include "kernels/cpu_features.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {


inline std::vector<Isa> isas() {
  std::vector<Isa> v{Isa::Scalar};
  if (cpu_features().avx2_fma) v.push_back(Isa::Avx2);
  if (cpu_features().avx512) v.push_back(Isa::Avx512);
  return v;
}

inline Tensor to_blocked(const Tensor& x, int64_t block = 16) {
  return fused("ReorderToNchwc", {x}, {Attribute::make_int("block", block)}, "reference");
}
inline Tensor to_plain(const Tensor& x, int64_t channels) {
  return fused("ReorderFromNchwc", {x}, {Attribute::make_int("channels", channels)}, "reference");
}

}  // namespace fusor::test
