// The int8 depthwise convolution (kernels/int8/qdepthwise.h, run through QConvWeights) on every
// int8 path the machine runs against the scalar path, exactly: the scales are powers of two, so
// the epilogue's float steps are exact whether or not a path fuses its multiply-add, and every
// output byte (or float) must be equal. Cases: uint8 and int8 activations, int8 weights and uint8
// weights with zero points (|w - zero| up to 255), weights and inputs at their extremes (where a
// 16-bit pair sum, vpmaddubsw's, would saturate), strides 1 and 2, pads, dilation, 3x3, 5x5 and
// 1x5 kernels, channel counts that are not multiples of 16 (20, 72, and 8 below one vector),
// rows of tiles and leftovers, the residual epilogue, the float output of dynamic quantization,
// batches, one and two threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/int8/qconv.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/int8_isas.h"

namespace fusor::int8 {
namespace {

struct DwCase {
  const char* name;
  int64_t batch, c, h, w, kh, kw, stride, pad, dil;
  bool signed_act = false, uint8_weights = false, residual = false, f32 = false, extreme = false;
};

void PrintTo(const DwCase& c, std::ostream* os) { *os << c.name; }

class QDepthwiseTest : public testing::TestWithParam<DwCase> {};

TEST_P(QDepthwiseTest, PathsMatchScalarExactly) {
  const DwCase t = GetParam();
  Conv2dShape s;
  s.batch = t.batch, s.in_c = t.c, s.in_h = t.h, s.in_w = t.w, s.out_c = t.c, s.k_h = t.kh, s.k_w = t.kw;
  s.stride_h = s.stride_w = t.stride, s.dil_h = s.dil_w = t.dil, s.group = t.c;
  s.pad_t = s.pad_l = s.pad_b = s.pad_r = t.pad;
  s.out_h = (t.h + 2 * t.pad - t.dil * (t.kh - 1) - 1) / t.stride + 1;
  s.out_w = (t.w + 2 * t.pad - t.dil * (t.kw - 1) - 1) / t.stride + 1;
  const int64_t taps = t.kh * t.kw, out_n = t.batch * s.out_h * s.out_w * t.c;
  std::mt19937 rng(static_cast<uint32_t>(t.c * 7919 + t.kh * 13 + t.stride));
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> x(static_cast<size_t>(t.batch * t.h * t.w * t.c)), w(static_cast<size_t>(t.c * taps));
  std::vector<uint8_t> z(static_cast<size_t>(out_n));
  for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : w) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : z) v = static_cast<uint8_t>(byte(rng));
  if (t.extreme) {
    // Inputs at the far end of their range, weights at +-max: every pair of products near the
    // 16-bit limit twice over.
    for (auto& v : x) v = t.signed_act ? (byte(rng) % 8 ? 0x80 : 0x7f) : (byte(rng) % 8 ? 255 : 0);
    for (auto& v : w) v = t.uint8_weights ? (byte(rng) % 2 ? 255 : 0) : (byte(rng) % 2 ? 0x80 : 0x7f);
  }
  // Powers of two: x.scale * w_scale / y.scale and the residual's factors are exact in float.
  std::vector<float> ws(static_cast<size_t>(t.c)), bs(static_cast<size_t>(t.c)), fbias(static_cast<size_t>(t.c));
  std::vector<int32_t> wz(static_cast<size_t>(t.c)), bias(static_cast<size_t>(t.c));
  QConvSpec spec;
  spec.out_c = t.c, spec.in_c_per_group = 1, spec.k_h = t.kh, spec.k_w = t.kw, spec.group = t.c;
  spec.signed_act = t.signed_act;
  spec.dynamic = t.f32;
  spec.x = {0.125f, t.signed_act ? -5 : 131};
  spec.y = {2.0f, t.signed_act ? 3 : 17};
  spec.act_lo = 0;  // Relu
  spec.residual = t.residual;
  spec.conv = {1.0f, t.signed_act ? -2 : 120};
  spec.z = {0.5f, t.signed_act ? 1 : 110};
  for (int64_t o = 0; o < t.c; ++o) {
    ws[o] = std::ldexp(1.0f, -static_cast<int>(o % 3) - (taps > 9 ? 5 : 4));
    wz[o] = t.uint8_weights ? (t.extreme ? (o % 2 ? 0 : 255) : 120 + byte(rng) % 16) : 0;
    bias[o] = byte(rng) * 40 - 5000;
    bs[o] = o % 3 ? spec.x.scale * ws[o] : 0.25f;  // some in the integer domain, some added in float
    fbias[o] = static_cast<float>(byte(rng) - 128) * 0.25f;
  }
  auto make = [&](Int8Isa isa) {
    return QConvWeights(spec, w.data(), !t.uint8_weights, ws.data(), t.c, t.uint8_weights ? wz.data() : nullptr,
                        t.uint8_weights ? t.c : 0, t.f32 ? nullptr : bias.data(), bs.data(), t.c, isa);
  };
  const size_t out_bytes = static_cast<size_t>(out_n) * (t.f32 ? 4 : 1);
  auto run = [&](const QConvWeights& qw, int threads) {
    ThreadPool pool(threads);
    std::vector<uint8_t> scratch;
    auto get = [&](size_t bytes) -> void* {
      scratch.assign(bytes + 64, 0xcd);  // garbage, as an arena's would be
      return scratch.data();
    };
    std::vector<uint8_t> y(out_bytes, 0xee);
    ThreadPool* p = threads > 1 ? &pool : nullptr;
    if (t.f32) {
      qw.run_float(s, x.data(), 113, 0.0625f, fbias.data(), ActivationSpec::relu(), reinterpret_cast<float*>(y.data()), p,
                   get);
    } else {
      qw.run(s, x.data(), t.residual ? z.data() : nullptr, y.data(), p, get);
    }
    return y;
  };
  const std::vector<uint8_t> want = run(make(Int8Isa::Scalar), 1);
  // The definition's values reach far enough to be worth comparing (not all clamped to one end).
  if (!t.f32 && !t.extreme && out_n > 0) {
    int64_t distinct = 0;
    std::vector<bool> seen(256);
    for (uint8_t v : want) distinct += !seen[v], seen[v] = true;
    EXPECT_GT(distinct, 8);
  }
  for (Int8Isa isa : runnable_int8_isas()) {
    if (isa == Int8Isa::Scalar) continue;
    SCOPED_TRACE(int8_isa_name(isa));
    const QConvWeights qw = make(isa);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(threads);
      const std::vector<uint8_t> got = run(qw, threads);
      for (int64_t i = 0; i < out_n; ++i) {
        if (t.f32) {
          float a, b;
          std::memcpy(&a, want.data() + 4 * i, 4);
          std::memcpy(&b, got.data() + 4 * i, 4);
          ASSERT_EQ(a, b) << "element " << i;
        } else {
          ASSERT_EQ(static_cast<int>(want[static_cast<size_t>(i)]), static_cast<int>(got[static_cast<size_t>(i)]))
              << "element " << i;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, QDepthwiseTest,
    testing::Values(DwCase{"c32_3x3", 1, 32, 13, 14, 3, 3, 1, 1, 1},
                    DwCase{"c32_3x3_signed", 1, 32, 9, 11, 3, 3, 1, 1, 1, true},
                    DwCase{"c20_s2_signed", 1, 20, 11, 13, 3, 3, 2, 1, 1, true},
                    DwCase{"c20_s2", 2, 20, 12, 9, 3, 3, 2, 1, 1},
                    DwCase{"c72_5x5_residual", 1, 72, 9, 10, 5, 5, 1, 2, 1, false, false, true},
                    DwCase{"c72_5x5_s2_signed_residual", 1, 72, 11, 11, 5, 5, 2, 2, 1, true, false, true},
                    DwCase{"c8_3x3", 1, 8, 7, 9, 3, 3, 1, 1, 1},
                    DwCase{"c8_3x3_signed_residual", 1, 8, 6, 6, 3, 3, 1, 1, 1, true, false, true},
                    DwCase{"c24_dilated", 1, 24, 10, 11, 3, 3, 1, 2, 2},
                    DwCase{"c40_1x5_unpadded", 1, 40, 5, 17, 1, 5, 1, 0, 1},
                    DwCase{"c96_wide_rows_uint8_weights", 1, 96, 4, 31, 3, 3, 1, 1, 1, false, true},
                    DwCase{"c144_s2_uint8_weights_signed", 1, 144, 9, 9, 3, 3, 2, 1, 1, true, true},
                    DwCase{"c48_f32", 1, 48, 7, 8, 3, 3, 1, 1, 1, false, false, false, true},
                    DwCase{"c20_f32_s2_uint8_weights", 2, 20, 9, 9, 3, 3, 2, 1, 1, false, true, false, true},
                    DwCase{"c72_5x5_f32", 1, 72, 8, 9, 5, 5, 1, 2, 1, false, false, false, true},
                    DwCase{"c32_extreme", 1, 32, 6, 7, 3, 3, 1, 1, 1, false, false, false, false, true},
                    DwCase{"c20_extreme_signed", 1, 20, 6, 7, 3, 3, 1, 1, 1, true, false, false, false, true},
                    DwCase{"c72_extreme_uint8_weights", 1, 72, 5, 6, 5, 5, 1, 2, 1, false, true, false, false, true},
                    DwCase{"c36_extreme_f32", 1, 36, 5, 6, 3, 3, 1, 1, 1, false, true, false, true, true},
                    DwCase{"empty_batch", 0, 32, 5, 5, 3, 3, 1, 1, 1}),
    [](const testing::TestParamInfo<DwCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace fusor::int8
