// The 8-bit NHWC MaxPool (fusor.NhwcMaxPool through the "int8" kernels, kernels/int8/qpool.cpp)
// on every instruction-set path this machine has (FUSOR_ISA=scalar / avx2 / avx512) against a
// direct loop over each window in this file: uint8 and int8 (a signed max, not an unsigned one),
// channel counts below, at and around the vector widths (16, 32, 64: the steps and their
// overlapping or masked last step), padded windows, strides, dilations, and windows with no tap
// inside X (the type's lowest value).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor::test {
namespace {

struct Case {
  int64_t H, W, k, s, d, pad;
};

// y[n, oh, ow, c] = max over the window's taps inside X, lowest when there is none.
std::vector<uint8_t> direct(const std::vector<uint8_t>& x, int64_t N, int64_t C, const Case& p, bool sgn, int64_t OH,
                            int64_t OW) {
  std::vector<uint8_t> y(static_cast<size_t>(N * OH * OW * C));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow)
        for (int64_t c = 0; c < C; ++c) {
          int best = sgn ? -128 : 0;
          for (int64_t i = 0; i < p.k; ++i)
            for (int64_t j = 0; j < p.k; ++j) {
              const int64_t ih = oh * p.s - p.pad + i * p.d, iw = ow * p.s - p.pad + j * p.d;
              if (ih < 0 || ih >= p.H || iw < 0 || iw >= p.W) continue;
              const uint8_t v = x[static_cast<size_t>(((n * p.H + ih) * p.W + iw) * C + c)];
              best = std::max(best, sgn ? static_cast<int>(static_cast<int8_t>(v)) : static_cast<int>(v));
            }
          y[static_cast<size_t>(((n * OH + oh) * OW + ow) * C + c)] = static_cast<uint8_t>(best);
        }
  return y;
}

TEST(QMaxPoolIsa, NhwcMatchesTheDirectLoopOnEveryPath) {
  const Case cases[] = {{7, 9, 3, 2, 1, 1}, {5, 6, 2, 2, 1, 0}, {8, 8, 3, 1, 2, 2}, {2, 3, 3, 1, 1, 4}};
  std::mt19937 g(5);
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (isa > detect_isa()) continue;
    IsaScope scope(isa);
    for (const Case& p : cases)
      for (int64_t C : {1, 5, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 70, 100})
        for (bool sgn : {false, true}) {
          const int64_t N = 2;
          std::vector<uint8_t> xv(static_cast<size_t>(N * p.H * p.W * C));
          for (auto& b : xv) b = static_cast<uint8_t>(g());
          const Tensor x = Tensor::from_vector<uint8_t>({N, p.H, p.W, C}, xv);
          const Tensor xt = sgn ? Tensor::from_vector<int8_t>({N, p.H, p.W, C}, std::vector<int8_t>(xv.begin(), xv.end()))
                                : x;
          const std::vector<Attribute> attrs = {
              Attribute::make_ints("kernel_shape", {p.k, p.k}), Attribute::make_ints("strides", {p.s, p.s}),
              Attribute::make_ints("dilations", {p.d, p.d}), Attribute::make_ints("pads", {p.pad, p.pad, p.pad, p.pad})};
          const Tensor y = fused("NhwcMaxPool", {xt}, attrs, "int8");
          const int64_t OH = y.shape()[1], OW = y.shape()[2];
          ASSERT_EQ(OH, (p.H + 2 * p.pad - p.d * (p.k - 1) - 1) / p.s + 1);
          const std::vector<uint8_t> want = direct(xv, N, C, p, sgn, OH, OW);
          const uint8_t* got = static_cast<const uint8_t*>(y.raw());
          for (size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << isa_name(isa) << " C " << C << " signed " << sgn << " H " << p.H << " k "
                                       << p.k << " pad " << p.pad << " at " << i;
        }
  }
}

}  // namespace
}  // namespace fusor::test
