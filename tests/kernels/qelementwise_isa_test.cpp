// The vector loops of kernels/int8/qelementwise.h (qbinary_run, quantize_run, dequantize_run,
// minmax_run) on every instruction-set path this machine has (FUSOR_ISA=avx2 / avx512) against the
// scalar path, element for element and bit for bit: lengths around the 8-, 16- and 32-element
// steps (tails), broadcast operands (stride 0) on either side, signed and unsigned, constants that
// put many results exactly on .5 (ties to even) and past the type's range (saturation), an
// activation clamp narrower than the type, NaN and infinities for QuantizeLinear, NaN at every
// position of a run for minmax. Bytes around each output must stay untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/int8/qelementwise.h"
#include "tests/kernels/isa_env.h"

namespace fusor::int8 {
namespace {

constexpr int64_t kPad = 40;  // guard bytes / floats on either side of an output
constexpr uint8_t kGuard = 0xA5;

std::vector<Isa> vector_isas() {
  std::vector<Isa> v;
  for (Isa i : {Isa::Avx2, Isa::Avx512})
    if (i <= detect_isa()) v.push_back(i);
  return v;
}

const std::vector<int64_t> kLengths = {0, 1, 2, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 47, 63, 64, 65, 100, 1027};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(g());
  return v;
}

// qbinary_run on `isa` into a guarded buffer; returns the n outputs after checking the guards.
std::vector<uint8_t> run_binary(Isa isa, const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb,
                                int64_t n) {
  IsaScope scope(isa);
  std::vector<uint8_t> y(static_cast<size_t>(n + 2 * kPad), kGuard);
  qbinary_run(q, a, sa, b, sb, y.data() + kPad, n);
  for (int64_t i = 0; i < kPad; ++i) {
    EXPECT_EQ(y[i], kGuard) << isa_name(isa) << " wrote before the output";
    EXPECT_EQ(y[n + kPad + i], kGuard) << isa_name(isa) << " wrote past the output, n " << n;
  }
  return {y.begin() + kPad, y.begin() + kPad + n};
}

std::vector<QBinaryConsts> binary_consts(bool is_signed) {
  std::vector<QBinaryConsts> v;
  const float lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  // Add: (a + b) / 2 + 0.5 lands on .5 for every a + b even; * 1.5 saturates both ways.
  v.push_back({false, is_signed, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0, lo, hi});
  v.push_back({false, is_signed, 1.5f, 1.5f, -20.0f, 0, 0, 0, 0, lo, hi});
  v.push_back({false, is_signed, 0.8f, 0.32f, 14.0f - 125 * 0.8f - 3 * 0.32f, 0, 0, 0, 0, lo, hi});
  // Mul: (a - za)(b - zb) / 4 + zy with odd products on .25/.75 and twice-odd on .5.
  v.push_back({true, is_signed, 0, 0, 0, 0.25f, 3, is_signed ? -5.0f : 130.0f, 2.5f, lo, hi});
  v.push_back({true, is_signed, 0, 0, 0, 0.016f, 125, 3, 14, lo, hi});
  // An activation clamp (Relu-like) inside the type's range.
  v.push_back({false, is_signed, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0, is_signed ? -10.0f : 20.0f, is_signed ? 90.0f : 200.0f});
  return v;
}

TEST(QElementwiseIsa, BinaryMatchesScalar) {
  const std::vector<uint8_t> a = random_bytes(1100, 1), b = random_bytes(1100, 2);
  for (Isa isa : vector_isas())
    for (bool is_signed : {false, true})
      for (const QBinaryConsts& q : binary_consts(is_signed))
        for (int64_t sa : {1, 0})
          for (int64_t sb : {1, 0})
            for (int64_t n : kLengths) {
              const uint8_t* pa = a.data() + 3;  // misaligned, and a broadcast value that is not the first byte
              const uint8_t* pb = b.data() + 5;
              const std::vector<uint8_t> want = run_binary(Isa::Scalar, q, pa, sa, pb, sb, n);
              const std::vector<uint8_t> got = run_binary(isa, q, pa, sa, pb, sb, n);
              for (int64_t i = 0; i < n; ++i)
                ASSERT_EQ(got[i], want[i]) << isa_name(isa) << (q.mul ? " mul" : " add") << " signed " << is_signed
                                           << " ka " << q.ka << " k " << q.k << " sa " << sa << " sb " << sb << " n "
                                           << n << " i " << i;
            }
}

// Scalar-path sanity for the constants above: ties do occur and round to even, and the
// saturating case does reach both ends (so the comparison above exercises them).
TEST(QElementwiseIsa, BinaryCasesHitTiesAndSaturation) {
  const uint8_t a[4] = {1, 2, 200, 0}, b[4] = {2, 3, 250, 0};
  IsaScope scope(Isa::Scalar);
  uint8_t y[4];
  qbinary_run({false, false, 0.5f, 0.5f, 0.5f, 0, 0, 0, 0, 0, 255}, a, 1, b, 1, y, 4);
  EXPECT_EQ(y[0], 2);  // 1.5 + 0.5 = 2
  EXPECT_EQ(y[1], 3);  // 2.5 + 0.5 = 3.0
  qbinary_run({false, false, 0.5f, 0.5f, 0, 0, 0, 0, 0, 0, 255}, a, 1, b, 1, y, 4);
  EXPECT_EQ(y[0], 2);  // 1.5 -> 2
  EXPECT_EQ(y[1], 2);  // 2.5 -> 2
  qbinary_run({false, false, 1.5f, 1.5f, -20.0f, 0, 0, 0, 0, 0, 255}, a, 1, b, 1, y, 4);
  EXPECT_EQ(y[2], 255);
  EXPECT_EQ(y[3], 0);
}

std::vector<uint8_t> run_quantize(Isa isa, const float* x, float scale, int32_t zp, bool is_signed, int64_t n) {
  IsaScope scope(isa);
  std::vector<uint8_t> y(static_cast<size_t>(n + 2 * kPad), kGuard);
  quantize_run(x, scale, zp, is_signed, y.data() + kPad, n);
  for (int64_t i = 0; i < kPad; ++i) {
    EXPECT_EQ(y[i], kGuard) << isa_name(isa) << " wrote before the output";
    EXPECT_EQ(y[n + kPad + i], kGuard) << isa_name(isa) << " wrote past the output, n " << n;
  }
  return {y.begin() + kPad, y.begin() + kPad + n};
}

TEST(QElementwiseIsa, QuantizeMatchesScalar) {
  // Multiples of scale / 2 (exact .5 quotients for scale 0.25), wide values that saturate, and
  // NaN / infinities / signed zeros sprinkled in.
  std::mt19937 g(7);
  std::vector<float> x(1100);
  for (size_t i = 0; i < x.size(); ++i) {
    switch (g() % 4) {
      case 0: x[i] = 0.125f * static_cast<float>(static_cast<int>(g() % 2001) - 1000); break;
      case 1: x[i] = std::uniform_real_distribution<float>(-100.0f, 100.0f)(g); break;
      case 2: x[i] = std::uniform_real_distribution<float>(-2.0f, 2.0f)(g); break;
      default: {
        const float special[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(), -0.0f, 0.0f, 0.375f, -0.375f, 1e30f};
        x[i] = special[g() % 8];
      }
    }
  }
  struct P {
    float scale;
    int32_t zp;
    bool is_signed;
  };
  const P params[] = {{0.25f, 0, false}, {0.25f, 128, false}, {0.25f, 0, true}, {0.25f, -3, true},
                      {0.0234f, 131, false}, {0.5f, 10, true}, {0.125f, 255, false}};
  for (Isa isa : vector_isas())
    for (const P& p : params)
      for (int64_t n : kLengths) {
        const float* px = x.data() + 1;
        const std::vector<uint8_t> want = run_quantize(Isa::Scalar, px, p.scale, p.zp, p.is_signed, n);
        const std::vector<uint8_t> got = run_quantize(isa, px, p.scale, p.zp, p.is_signed, n);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_EQ(got[i], want[i]) << isa_name(isa) << " scale " << p.scale << " zp " << p.zp << " signed "
                                     << p.is_signed << " n " << n << " i " << i << " x " << px[i];
      }
}

TEST(QElementwiseIsa, QuantizeRoundsTiesToEven) {
  const float x[4] = {0.125f, 0.375f, -0.125f, -0.375f};  // / 0.25: 0.5, 1.5, -0.5, -1.5
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (isa > detect_isa()) continue;
    const std::vector<uint8_t> y = run_quantize(isa, x, 0.25f, 10, true, 4);
    EXPECT_EQ(y, (std::vector<uint8_t>{10, 12, 10, 8})) << isa_name(isa);
  }
}

TEST(QElementwiseIsa, DequantizeMatchesScalar) {
  std::vector<uint8_t> x(1100);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 7 + i / 256);  // every byte value
  for (Isa isa : vector_isas())
    for (bool is_signed : {false, true})
      for (int32_t zp : {0, 128, -5, 131})
        for (float scale : {0.0234f, 1.0f, 3e-5f})
          for (int64_t n : kLengths) {
            std::vector<float> want(static_cast<size_t>(n + 2 * kPad), 7.0f), got = want;
            {
              IsaScope scope(Isa::Scalar);
              dequantize_run(x.data() + 1, is_signed, scale, zp, want.data() + kPad, n);
            }
            {
              IsaScope scope(isa);
              dequantize_run(x.data() + 1, is_signed, scale, zp, got.data() + kPad, n);
            }
            ASSERT_EQ(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)), 0)
                << isa_name(isa) << " signed " << is_signed << " zp " << zp << " scale " << scale << " n " << n;
          }
}

struct MinMax {
  float lo, hi;
  bool nan;
};

MinMax run_minmax(Isa isa, const float* x, int64_t n, float lo, float hi) {
  IsaScope scope(isa);
  MinMax r{lo, hi, false};
  r.nan = minmax_run(x, n, r.lo, r.hi);
  return r;
}

TEST(QElementwiseIsa, MinMaxMatchesScalar) {
  std::mt19937 g(11);
  std::vector<float> x(1100);
  for (auto& v : x) v = std::uniform_real_distribution<float>(-5.0f, 5.0f)(g);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // The extremes at the very end (in a tail) and the start; then NaN at each position in turn.
  x[1 + 1026] = -50.0f;
  x[1 + 32] = 60.0f;
  for (Isa isa : vector_isas())
    for (int64_t n : kLengths)
      for (auto [lo0, hi0] : {std::pair{0.0f, 0.0f}, std::pair{inf, -inf}, std::pair{-100.0f, 100.0f}}) {
        const MinMax want = run_minmax(Isa::Scalar, x.data() + 1, n, lo0, hi0);
        const MinMax got = run_minmax(isa, x.data() + 1, n, lo0, hi0);
        ASSERT_EQ(got.lo, want.lo) << isa_name(isa) << " n " << n << " start " << lo0;
        ASSERT_EQ(got.hi, want.hi) << isa_name(isa) << " n " << n << " start " << hi0;
        ASSERT_EQ(got.nan, want.nan) << isa_name(isa) << " n " << n;
        ASSERT_FALSE(want.nan);
        for (int64_t k = 0; k < n; ++k) {
          std::vector<float> y(x.begin() + 1, x.begin() + 1 + n);
          y[k] = nan;
          const MinMax w = run_minmax(Isa::Scalar, y.data(), n, lo0, hi0);
          const MinMax r = run_minmax(isa, y.data(), n, lo0, hi0);
          ASSERT_TRUE(w.nan);
          ASSERT_EQ(r.nan, w.nan) << isa_name(isa) << " n " << n << " NaN at " << k;
          ASSERT_EQ(r.lo, w.lo) << isa_name(isa) << " n " << n << " NaN at " << k;
          ASSERT_EQ(r.hi, w.hi) << isa_name(isa) << " n " << n << " NaN at " << k;
        }
      }
  // A NaN past n is not looked at.
  std::vector<float> y = {1.0f, 2.0f, 3.0f, nan, nan, nan, nan, nan, nan, nan, nan};
  for (Isa isa : vector_isas()) EXPECT_FALSE(run_minmax(isa, y.data(), 3, 0.0f, 0.0f).nan) << isa_name(isa);
}

}  // namespace
}  // namespace fusor::int8
