// The vector row loops of kernels/rowwise/row_ops.h on every set this machine runs: add_sum forms
// SkipLayerNorm's input row exactly as (x + k) + b and returns the same float as sum() of it; norm
// gives LayerNorm / SkipLayerNorm / RMSNorm rows within float rounding of the formula in double,
// in registers and by the passes, writing nothing past the row.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/rowwise/row_ops.h"
#include "tests/kernels/gemm_test_util.h"

namespace fusor::rowwise {
namespace {

using testing_gemm::random_vec;

std::vector<std::pair<std::string, const RowOps*>> all_sets() {
  std::vector<std::pair<std::string, const RowOps*>> sets{{"scalar", &row_ops_scalar()}};
  if (detect_isa() >= Isa::Avx2) sets.emplace_back("avx2", &row_ops_avx2());
  if (detect_isa() >= Isa::Avx512) sets.emplace_back("avx512", &row_ops_avx512());
  return sets;
}

TEST(RowOps, AddSumIsTheAddThenTheSumBitForBit) {
  const auto sets = all_sets();
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

TEST(RowOps, NormIsTheLayerNormFormula) {
  // Lengths on both sides of every set's register bound (96 floats on AVX2, 384 on AVX-512), ragged
  // and whole; an offset mean (+3) so the deviations are small against the values.
  for (const auto& [name, ops] : all_sets())
    for (int64_t n : {1, 5, 16, 17, 95, 96, 97, 192, 193, 256, 383, 384, 385, 768}) {
      const size_t un = static_cast<size_t>(n);
      std::vector<float> x = random_vec(un, 4, -1.0f, 1.0f);
      for (float& v : x) v += 3.0f;
      const std::vector<float> k = random_vec(un, 5, -2.0f, 2.0f), b = random_vec(un, 6, -1.0f, 1.0f),
                               scale = random_vec(un, 7, 0.5f, 1.5f), shift = random_vec(un, 8, -1.0f, 1.0f);
      for (int form = 0; form < 8; ++form) {
        const bool skip = form & 1, center = !(form & 2), with_shift = form & 4;
        const float* kp = skip ? k.data() : nullptr;
        const float* bp = skip ? b.data() : nullptr;
        std::vector<float> s(un + 1, 42.0f), y(un + 1, 42.0f);
        ops->norm(x.data(), kp, bp, skip ? s.data() : nullptr, y.data(), n, scale.data(),
                  with_shift ? shift.data() : nullptr, 1e-5f, center);
        std::vector<double> v(un);
        double mean = 0, var = 0;
        for (size_t i = 0; i < un; ++i) v[i] = skip ? double((x[i] + k[i]) + b[i]) : double(x[i]);
        if (center) {
          for (double t : v) mean += t;
          mean /= double(n);
        }
        for (double t : v) var += (t - mean) * (t - mean);
        const double inv = 1.0 / std::sqrt(var / double(n) + 1e-5);
        const std::string what = name + " n=" + std::to_string(n) + " form=" + std::to_string(form);
        for (size_t i = 0; i < un; ++i) {
          if (skip) {
            ASSERT_EQ(s[i], float(v[i])) << what << " at " << i;
          }
          const double want = (v[i] - mean) * inv * scale[i] + (with_shift ? shift[i] : 0.0);
          // The mean's float rounding (~n 6e-8 of |v| ~ 4) shows in (v - mean) * inv.
          ASSERT_NEAR(y[i], want, 2e-5 * (1 + std::fabs(want)) + 1e-6 * double(n) * inv) << what << " at " << i;
        }
        EXPECT_EQ(y[un], 42.0f) << what;
        EXPECT_EQ(s[un], 42.0f) << what;
      }
    }
}

}  // namespace
}  // namespace fusor::rowwise
