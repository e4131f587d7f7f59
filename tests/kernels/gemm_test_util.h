// Shared helpers of the GEMM and fast-conv tests: random data, the ISAs this machine can force,
// and comparison against double-precision references.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"

namespace fusor::testing_gemm {

inline std::vector<float> random_vec(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

// Every path this machine can run (each one forced in turn).
inline std::vector<Isa> runnable_isas() {
  std::vector<Isa> out{Isa::Scalar};
  if (detect_isa() >= Isa::Avx2) out.push_back(Isa::Avx2);
  if (detect_isa() >= Isa::Avx512) out.push_back(Isa::Avx512);
  return out;
}

inline std::vector<ActivationSpec> all_activations() {
  return {ActivationSpec::of(Activation::None), ActivationSpec::relu(), ActivationSpec::clip(-0.3f, 0.4f),
          ActivationSpec::leaky_relu(0.1f), ActivationSpec::of(Activation::Sigmoid), ActivationSpec::of(Activation::Tanh),
          ActivationSpec::hard_sigmoid(0.2f, 0.5f), ActivationSpec::of(Activation::HardSwish),
          ActivationSpec::of(Activation::SiLU), ActivationSpec::of(Activation::Gelu),
          ActivationSpec::of(Activation::GeluTanh)};
}

// |got - want| <= atol + rtol * |want| for each element; reports the first few mismatches.
inline ::testing::AssertionResult all_close(const float* got, const std::vector<double>& want, double atol,
                                            double rtol, const std::vector<double>* scale = nullptr) {
  int bad = 0;
  std::string msg;
  for (size_t i = 0; i < want.size(); ++i) {
    const double tol = atol * (scale ? (*scale)[i] : 1.0) + rtol * std::fabs(want[i]);
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      if (bad < 5) msg += " [" + std::to_string(i) + "] got " + std::to_string(got[i]) + " want " + std::to_string(want[i]) + ";";
      ++bad;
    }
  }
  if (bad) return ::testing::AssertionFailure() << bad << " of " << want.size() << " differ:" << msg;
  return ::testing::AssertionSuccess();
}

}  // namespace fusor::testing_gemm
