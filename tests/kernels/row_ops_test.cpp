// The vector row loops of kernels/rowwise/row_ops.h on every set this machine runs: add_sum forms
// SkipLayerNorm's input row exactly as (x + k) + b and returns the same float as sum() of it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/rowwise/row_ops.h"
#include "tests/kernels/gemm_test_util.h"

namespace fusor::rowwise {
namespace {

using testing_gemm::random_vec;

TEST(RowOps, AddSumIsTheAddThenTheSumBitForBit) {
  std::vector<std::pair<std::string, const RowOps*>> sets{{"scalar", &row_ops_scalar()}};
  if (detect_isa() >= Isa::Avx2) sets.emplace_back("avx2", &row_ops_avx2());
  if (detect_isa() >= Isa::Avx512) sets.emplace_back("avx512", &row_ops_avx512());
  for (const auto& [name, ops] : sets)
    for (int64_t n : {1, 7, 8, 16, 17, 33, 64, 70, 192, 768}) {
      const size_t un = static_cast<size_t>(n);
      const std::vector<float> x = random_vec(un, 1, -4.0f, 4.0f), k = random_vec(un, 2, -4.0f, 4.0f),
                               b = random_vec(un, 3, -4.0f, 4.0f);
      for (const float* bias : {static_cast<const float*>(nullptr), b.data()}) {
        std::vector<float> s(un + 1, 42.0f);  // one past the row: never written
        const float total = ops->add_sum(x.data(), k.data(), bias, s.data(), n);
        const std::string what = name + " n=" + std::to_string(n) + (bias ? " with bias" : "");
        for (size_t i = 0; i < un; ++i) {
          const float want = bias ? (x[i] + k[i]) + bias[i] : x[i] + k[i];
          ASSERT_EQ(s[i], want) << what << " at " << i;
        }
        EXPECT_EQ(s[un], 42.0f) << what;
        EXPECT_EQ(total, ops->sum(s.data(), n)) << what;
      }
    }
}

}  // namespace
}  // namespace fusor::rowwise
