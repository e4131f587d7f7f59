// The int8 NHWC convolution (kernels/int8/qconv.h) against plain loops over the QDQ definition, on
// every int8 path the machine runs: im2col with padding (small and large channel counts, strides,
// dilation, groups), the implicit GEMM (rows read in place from X or its padded copy), the in-place
// 1x1 path, depthwise, int8 and uint8 activations, uint8 weights
// with per-channel zero points, the residual epilogue, batches (an empty one too), one and two
// threads, outputs too small to split by rows, and the Winograd form of 3x3 unit-stride convs
// (which must give the GEMM's bytes). The integer sums are exact, so a result may differ from the
// double-precision definition only by one step where float rounding breaks a tie differently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kernels/int8/qconv.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/int8_isas.h"

namespace fusor::int8 {
namespace {

struct Case {
  const char* name;
  int64_t batch, c, h, w, oc, kh, kw, stride, pad, dil, group;
  bool signed_act = false, uint8_weights = false, residual = false;
  int64_t dil_h = 0;  // 0: dil
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class QConvTest : public testing::TestWithParam<Case> {};

TEST_P(QConvTest, MatchesLoops) {
  const Case t = GetParam();
  Conv2dShape s;
  s.batch = t.batch, s.in_c = t.c, s.in_h = t.h, s.in_w = t.w, s.out_c = t.oc, s.k_h = t.kh, s.k_w = t.kw;
  const int64_t dil_h = t.dil_h ? t.dil_h : t.dil;
  s.stride_h = s.stride_w = t.stride, s.dil_h = dil_h, s.dil_w = t.dil, s.group = t.group;
  s.pad_t = s.pad_l = s.pad_b = s.pad_r = t.pad;
  s.out_h = (t.h + 2 * t.pad - dil_h * (t.kh - 1) - 1) / t.stride + 1;
  s.out_w = (t.w + 2 * t.pad - t.dil * (t.kw - 1) - 1) / t.stride + 1;
  const int64_t cg = t.c / t.group, ocg = t.oc / t.group, taps = t.kh * t.kw;
  const int64_t out_n = t.batch * s.out_h * s.out_w * t.oc;
  std::mt19937 rng(static_cast<uint32_t>(t.c * 1009 + t.oc * 31 + t.kh));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> x(static_cast<size_t>(t.batch * t.h * t.w * t.c)), w(static_cast<size_t>(t.oc * cg * taps));
  std::vector<uint8_t> z(static_cast<size_t>(out_n));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : z) v = static_cast<uint8_t>(byte(rng));
  std::vector<float> ws(static_cast<size_t>(t.oc)), bs(static_cast<size_t>(t.oc));
  std::vector<int32_t> wz(static_cast<size_t>(t.oc)), bias(static_cast<size_t>(t.oc));
  QConvSpec spec;
  spec.out_c = t.oc, spec.in_c_per_group = cg, spec.k_h = t.kh, spec.k_w = t.kw, spec.group = t.group;
  spec.signed_act = t.signed_act;
  spec.x = {0.0211f, t.signed_act ? -5 : 131};
  spec.y = {0.1013f + 0.0137f * static_cast<float>(cg * taps % 7), t.signed_act ? 3 : 17};
  spec.act_lo = 0;  // Relu
  spec.residual = t.residual;
  spec.conv = {0.1537f, t.signed_act ? -2 : 120};
  spec.z = {0.0713f, t.signed_act ? 1 : 110};
  for (int64_t o = 0; o < t.oc; ++o) {
    ws[o] = (0.5f + 0.01f * static_cast<float>(o % 13)) / static_cast<float>(cg * taps);
    wz[o] = t.uint8_weights ? 120 + byte(rng) % 16 : 0;
    bias[o] = byte(rng) * 40 - 5000;
    bs[o] = spec.x.scale * ws[o];
  }
  auto xv = [&](int64_t i) { return t.signed_act ? static_cast<int32_t>(static_cast<int8_t>(x[i])) : x[i]; };
  auto wv = [&](int64_t i) { return t.uint8_weights ? static_cast<int32_t>(w[i]) : static_cast<int8_t>(w[i]); };
  auto zv = [&](int64_t i) { return t.signed_act ? static_cast<int32_t>(static_cast<int8_t>(z[i])) : z[i]; };
  const double tmin = t.signed_act ? -128 : 0, tmax = t.signed_act ? 127 : 255;
  // The definition, in doubles on exact integer sums.
  std::vector<double> want(static_cast<size_t>(out_n));
  for (int64_t n = 0; n < t.batch; ++n)
    for (int64_t oh = 0; oh < s.out_h; ++oh)
      for (int64_t ow = 0; ow < s.out_w; ++ow)
        for (int64_t o = 0; o < t.oc; ++o) {
          const int64_t g = o / ocg;
          int64_t acc = bias[o];
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < t.kh; ++i)
              for (int64_t j = 0; j < t.kw; ++j) {
                const int64_t ih = oh * t.stride - t.pad + i * dil_h, iw = ow * t.stride - t.pad + j * t.dil;
                if (ih < 0 || ih >= t.h || iw < 0 || iw >= t.w) continue;
                const int64_t xi = ((n * t.h + ih) * t.w + iw) * t.c + g * cg + c;
                acc += static_cast<int64_t>(xv(xi) - spec.x.zero_point) * (wv((o * cg + c) * taps + i * t.kw + j) - wz[o]);
              }
          const int64_t at = ((n * s.out_h + oh) * s.out_w + ow) * t.oc + o;
          const double real = static_cast<double>(acc) * spec.x.scale * ws[o];
          double y;
          if (t.residual) {
            const double q = std::clamp(std::nearbyint(real / spec.conv.scale) + spec.conv.zero_point, tmin, tmax);
            y = ((q - spec.conv.zero_point) * spec.conv.scale + (zv(at) - spec.z.zero_point) * spec.z.scale) /
                    spec.y.scale + spec.y.zero_point;
          } else {
            y = real / spec.y.scale + spec.y.zero_point;
          }
          want[static_cast<size_t>(at)] = std::clamp(std::nearbyint(y), static_cast<double>(spec.y.zero_point), tmax);
        }
  // Every path three times: with the GEMM, then allowed each Winograd form (3x3, unit strides, one
  // group, 16 channels or more on AVX2): F(2,3), then F(4,3) where its bound holds (at 64 channels
  // or fewer here). Their exact sums must give the GEMM's bytes.
  const bool unit = t.stride == 1 && t.dil == 1 && dil_h == 1;
  const bool wino_shape = unit && t.kh == 3 && t.kw == 3 && t.group == 1 && t.c >= 16;
  std::vector<std::vector<uint8_t>> gemm_out;
  for (int tile : {0, 2, 4}) {
    const bool allow_wino = tile != 0;
    spec.unit_stride = allow_wino && unit;
    spec.winograd_tile = tile;
    size_t run_i = 0;
    for (Int8Isa isa : runnable_int8_isas())
    for (bool amx : amx_modes(isa)) {
      AmxScope amx_scope(amx);
      SCOPED_TRACE(int8_isa_name(isa) + std::string(amx ? " with AMX" : ""));
      SCOPED_TRACE(allow_wino ? "winograd F(" + std::to_string(tile) + ",3)" : "gemm");
      QConvWeights qw(spec, w.data(), !t.uint8_weights, ws.data(), t.oc, t.uint8_weights ? wz.data() : nullptr,
                      t.uint8_weights ? t.oc : 0, bias.data(), bs.data(), t.oc, isa);
      const bool wino_here = allow_wino && wino_shape && isa == Int8Isa::Avx2;
      if (tile == 2 || t.c <= 64) {
        EXPECT_EQ(qw.winograd_tile(), wino_here ? tile : 0);
      } else {
        EXPECT_TRUE(qw.winograd_tile() == 0 || (wino_here && qw.winograd_tile() == tile));
      }
      for (int threads : {1, 2}) {
        SCOPED_TRACE(threads);
        ThreadPool pool(threads);
        std::vector<uint8_t> scratch;
        auto get = [&](size_t bytes) -> void* {
          scratch.assign(bytes + 64, 0xcd);  // garbage, as an arena's would be
          return scratch.data();
        };
        std::vector<uint8_t> y(static_cast<size_t>(out_n), 0xee);
        qw.run(s, x.data(), t.residual ? z.data() : nullptr, y.data(), threads > 1 ? &pool : nullptr, get);
        int64_t off_by_one = 0;
        for (int64_t i = 0; i < out_n; ++i) {
          const double got = t.signed_act ? static_cast<int8_t>(y[i]) : y[i];
          const double d = std::fabs(got - want[static_cast<size_t>(i)]);
          ASSERT_LE(d, 1.0) << "element " << i << " want " << want[static_cast<size_t>(i)] << " got " << got;
          off_by_one += d > 0;
        }
        EXPECT_LE(off_by_one, std::max<int64_t>(2, out_n / 200));
        if (!allow_wino) {
          gemm_out.push_back(y);
        } else {
          ASSERT_LT(run_i, gemm_out.size());
          EXPECT_TRUE(y == gemm_out[run_i]) << "not the GEMM's bytes";
        }
        ++run_i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QConvTest,
    testing::Values(Case{"stem_7x7s2_c3", 1, 3, 23, 21, 64, 7, 7, 2, 3, 1, 1},
                    Case{"stem_3x3s2_c3_signed", 1, 3, 17, 18, 32, 3, 3, 2, 1, 1, 1, true},
                    // Kernel rows of <= 16, 32 and 64 bytes (im2col's one-move copies), batches
                    // (the last rows' reads stop at the end of X), an unpadded one.
                    Case{"stem_3x3s2_c3_batch2", 2, 3, 17, 18, 32, 3, 3, 2, 1, 1, 1},
                    Case{"k3_c8_batch3", 3, 8, 6, 7, 24, 3, 3, 1, 1, 1, 1},
                    Case{"k3_c16_unpadded", 1, 16, 6, 9, 40, 3, 3, 1, 0, 1, 1},
                    Case{"k4_c4_s2_uint8_weights", 2, 4, 11, 10, 20, 4, 4, 2, 1, 1, 1, false, true},
                    Case{"k3_c64", 1, 64, 9, 11, 64, 3, 3, 1, 1, 1, 1},
                    Case{"k3_c20_oc70_batch2", 2, 20, 7, 6, 70, 3, 3, 1, 1, 1, 1},
                    Case{"k3_small_m_wide", 1, 96, 5, 5, 272, 3, 3, 1, 1, 1, 1},
                    Case{"k3_small_m_residual", 1, 64, 4, 3, 160, 3, 3, 1, 1, 1, 1, false, false, true},
                    // The residual on every tile width (80 columns: 4 + 1 vectors; 48: 3).
                    Case{"k3_residual_oc80", 1, 24, 7, 9, 80, 3, 3, 1, 1, 1, 1, false, false, true},
                    Case{"k1_residual_oc48_signed", 1, 32, 5, 6, 48, 1, 1, 1, 0, 1, 1, true, false, true},
                    Case{"k3_dilated", 1, 8, 9, 10, 24, 3, 3, 1, 2, 2, 1},
                    // The Winograd form: odd output sizes (tiles half outside), channel counts
                    // that are odd or not a multiple of 16, several tile groups, int8
                    // activations, weight zero points, pads of 2 (windows wholly outside).
                    Case{"wino_c17_odd", 2, 17, 7, 5, 21, 3, 3, 1, 1, 1, 1},
                    Case{"wino_c64_groups", 1, 64, 23, 21, 48, 3, 3, 1, 1, 1, 1},
                    Case{"wino_c40_signed_residual", 1, 40, 6, 9, 36, 3, 3, 1, 1, 1, 1, true, false, true},
                    Case{"wino_c32_uint8_weights", 1, 32, 8, 7, 16, 3, 3, 1, 1, 1, 1, false, true},
                    Case{"wino_c16_pad2", 1, 16, 4, 5, 24, 3, 3, 1, 2, 1, 1},
                    Case{"wino_c300_deep", 1, 300, 4, 4, 40, 3, 3, 1, 1, 1, 1},
                    // The implicit GEMM: stride 2 with pads on a batch, kernel rows dilated along H
                    // only (segments 2 padded rows apart), an unpadded stride-2 5x5 on int8 (the
                    // flipped copy without pads).
                    Case{"k3_s2_c12_batch2", 2, 12, 11, 13, 72, 3, 3, 2, 1, 1, 1},
                    // AMX tiles (AVX512-VNNI with AMX): kernel rows of whole 64-byte chunks, output
                    // rows long enough for tiles read in place (16 pixels evenly spaced) beside
                    // tiles that cross rows (gathered), 16-row tails, 1-4 vectors of columns,
                    // stride 2, a residual, int8 activations, unpadded (X read in place).
                    Case{"amx_k3_c64_wide_residual", 1, 64, 5, 37, 72, 3, 3, 1, 1, 1, 1, false, false, true},
                    Case{"amx_k3_s2_c128_batch2", 2, 128, 9, 40, 112, 3, 3, 2, 1, 1, 1},
                    Case{"amx_k1_c192_signed", 1, 192, 6, 23, 40, 1, 1, 1, 0, 1, 1, true},
                    Case{"amx_k2_c32_unpadded", 1, 32, 7, 35, 48, 2, 2, 1, 0, 1, 1},
                    Case{"k3_dilated_h_only", 1, 8, 10, 9, 40, 3, 3, 1, 2, 1, 1, false, false, false, 2},
                    Case{"k5_s2_unpadded_signed_residual", 1, 16, 13, 12, 64, 5, 5, 2, 0, 1, 1, true, false, true},
                    Case{"k5_s2_uint8_weights", 1, 12, 12, 13, 40, 5, 5, 2, 2, 1, 1, false, true},
                    Case{"k1_inplace", 1, 32, 6, 7, 48, 1, 1, 1, 0, 1, 1},
                    Case{"k1_s2", 1, 24, 9, 9, 40, 1, 1, 2, 0, 1, 1},
                    Case{"k1_residual_signed", 1, 16, 5, 5, 20, 1, 1, 1, 0, 1, 1, true, false, true},
                    Case{"grouped", 1, 16, 8, 8, 24, 3, 3, 1, 1, 1, 4},
                    Case{"depthwise", 1, 40, 9, 8, 40, 3, 3, 1, 1, 1, 40},
                    Case{"depthwise_s2_wide", 2, 144, 9, 9, 144, 3, 3, 2, 1, 1, 144},
                    Case{"depthwise_5x5_signed_residual", 1, 72, 7, 7, 72, 5, 5, 1, 2, 1, 72, true, false, true},
                    Case{"depthwise_uint8_weights", 1, 33, 6, 5, 33, 3, 3, 1, 1, 1, 33, false, true},
                    // Rows long enough for the pixel tiles (8 and 4 pixels) plus single-pixel tails.
                    Case{"depthwise_wide_rows", 1, 24, 4, 31, 24, 3, 3, 1, 1, 1, 24},
                    Case{"depthwise_wide_rows_c56", 1, 56, 3, 22, 56, 3, 3, 1, 1, 1, 56},
                    Case{"depthwise_wide_s2_dilated_signed", 2, 40, 9, 37, 40, 3, 3, 2, 2, 2, 40, true},
                    Case{"depthwise_wide_unpadded_residual", 1, 64, 5, 26, 64, 3, 3, 1, 0, 1, 64, false, false, true},
                    // Four taps per vpdpbusd (AVX512-VNNI): blocks of 64 channels and a tail of 32 or 16,
                    // a kernel row wider than 4 taps, a 1-row kernel, stride 2 on int8.
                    Case{"depthwise4_c96_wide", 1, 96, 6, 30, 96, 3, 3, 1, 1, 1, 96},
                    Case{"depthwise4_c16_s2_signed", 1, 16, 11, 13, 16, 3, 3, 2, 1, 1, 16, true},
                    Case{"depthwise4_7x7_c200_residual", 2, 200, 9, 10, 200, 7, 7, 1, 3, 1, 200, false, false, true},
                    Case{"depthwise4_1x5_c144", 1, 144, 5, 17, 144, 1, 5, 1, 2, 1, 144},
                    // An empty batch: nothing to compute, nothing written (the row blocking
                    // divided by zero blocks).
                    Case{"k3_empty_batch", 0, 16, 6, 7, 32, 3, 3, 1, 1, 1, 1},
                    Case{"k3_empty_batch_signed", 0, 3, 9, 9, 16, 3, 3, 2, 1, 1, 1, true},
                    Case{"depthwise_empty_batch", 0, 32, 5, 5, 32, 3, 3, 1, 1, 1, 32}),
    [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

// The Winograd forms are exact only while their sums can be recovered (kernels/int8/qwinograd.h):
// F(4,3) while 255 * sum |w - wz| < 2^25 per output channel, F(2,3) while 4 * 255 * sum |w - wz|
// fits int32; past them the conv takes the next form, then the GEMM.
TEST(QConvWinogradTest, SumBoundsPickTheForm) {
  if (detect_int8_isa() < Int8Isa::Avx2) GTEST_SKIP() << "no AVX2";
  // Weights all -128: sum |g| = 9 * 128 * c.
  for (auto [c, tile] : {std::pair<int64_t, int>{64, 4}, {128, 2}, {512, 2}, {4096, 0}}) {
    QConvSpec spec;
    spec.out_c = 16, spec.in_c_per_group = c, spec.k_h = spec.k_w = 3, spec.group = 1, spec.unit_stride = true;
    std::vector<int8_t> w(static_cast<size_t>(16 * c * 9), -128);
    const float ws = 1.0f / 4096;
    QConvWeights qw(spec, w.data(), true, &ws, 1, nullptr, 0, nullptr, nullptr, 0, Int8Isa::Avx2);
    // 255 * 1152 * c: 18.8e6 at 64 channels (< 2^25 = 33.5e6), 37.6e6 at 128; 4 * that: 4.8e9 at 4096.
    EXPECT_EQ(qw.winograd_tile(), tile) << c;
  }
}

}  // namespace
}  // namespace fusor::int8
