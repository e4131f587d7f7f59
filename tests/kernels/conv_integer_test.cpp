// fusor.ConvIntegerToFloat's fast kernel (the int8 conv's GEMM paths with per-call channel
// constants and a float epilogue, X and Y transposed around the NHWC core) against its reference
// (ConvInteger, Cast, Mul by XScale * WScale, Add, activation: the quantize_dynamic group op for
// op), on every int8 path this machine runs (one thread: the harness's; the GEMM paths' thread
// split is QConvWeights::run's, tested in qconv_test). Without a bias or activation
// both compute the exact int32 sum times the same float product, so they must agree to the bit;
// with a bias the fast kernel's multiply-add rounds once where Mul then Add round twice (one float
// rounding, checked relatively). Shapes: odd channel counts (K not a multiple of 4), strides, pads,
// dilations, groups, a depthwise conv (the depthwise kernels with a float epilogue), 1x1 convs
// read in place, 1-D convs; per-tensor and per-channel scales and zero points; int8 and uint8
// weights; X's zero point and scale changing from call to call. fusor.NhwcConvIntegerToFloat
// (the same on NHWC data, the layout level's form) must give the NCHW reference's result, permuted.
// QConvWeights::run_float is also run directly on one and two threads (small maps with many
// channels: tasks split by weight panels, the float output addressed at their columns; a
// depthwise conv over two blocks of 64 channels, the second partial, split by rows).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/int8/qconv.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/int8_isas.h"

namespace fusor::test {
namespace {

// FUSOR_INT8_ISA for the scope's lifetime.
struct Int8IsaScope : int8::Int8EnvScope {
  explicit Int8IsaScope(Int8Isa isa) : Int8EnvScope("FUSOR_INT8_ISA", int8_isa_name(isa)) {}
};

struct ConvCase {
  std::string name;
  Shape x, w;  // NCHW (or NCW), OIHW (or OIW)
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  bool w_signed, per_channel, w_zero, bias;
  std::string act;
};

std::vector<Attribute> conv_attrs(const ConvCase& c) {
  std::vector<Attribute> a = {Attribute::make_int("group", c.group)};
  if (!c.strides.empty()) a.push_back(Attribute::make_ints("strides", c.strides));
  if (!c.pads.empty()) a.push_back(Attribute::make_ints("pads", c.pads));
  if (!c.dilations.empty()) a.push_back(Attribute::make_ints("dilations", c.dilations));
  if (!c.act.empty()) a.push_back(Attribute::make_string("activation", c.act));
  return a;
}

void expect_fast_matches_reference(const ConvCase& c, uint8_t x_zero, float x_scale) {
  const int64_t oc = c.w[0];
  const DataType wt = c.w_signed ? DataType::Int8 : DataType::UInt8;
  Shape per{oc};
  for (size_t d = 2; d < c.x.size(); ++d) per.push_back(1);  // [C_out, 1, 1], as quantize_dynamic shapes it
  const Tensor x = random_bytes(c.x, DataType::UInt8, 1), w = random_bytes(c.w, wt, 2);
  const Tensor ws = c.per_channel ? rnd(per, 3, 0.001f, 0.01f) : rnd({}, 3, 0.001f, 0.01f);
  const Tensor wz = c.w_zero ? random_bytes(c.per_channel ? Shape{oc} : Shape{}, wt, 4) : Tensor();
  const Tensor b = c.bias ? rnd({1, oc, 1, 1}, 5).reshaped(c.x.size() == 4 ? Shape{1, oc, 1, 1} : Shape{1, oc, 1}) : Tensor();
  const std::vector<Tensor> ins = {x, w, scalar(x_scale), ws, Tensor::scalar<uint8_t>(x_zero), wz, b};
  const std::vector<bool> constant = {false, true, false, true, false, true, true};
  const std::vector<Attribute> attrs = conv_attrs(c);
  const Tensor ref = fused("ConvIntegerToFloat", ins, attrs, "reference", constant);
  const bool exact = !c.bias && c.act.empty();
  for (Int8Isa isa : int8::runnable_int8_isas()) {
    Int8IsaScope scope(isa);
    SCOPED_TRACE(c.name + " " + int8_isa_name(isa) + " x_zero " + std::to_string(x_zero));
    // Bit for bit (tolerance 0) where exact, else to a float rounding.
    auto expect_same = [&](const Tensor& want, const Tensor& got, const char* what) {
      EXPECT_TRUE(near(got, want, exact ? 0.0 : 2e-6)) << what;
    };
    expect_same(ref, fused("ConvIntegerToFloat", ins, attrs, "fast", constant), "NCHW");
    if (c.x.size() == 4) {
      std::vector<Tensor> nhwc = ins;
      nhwc[0] = transpose(x, {0, 2, 3, 1});
      const Tensor want = transpose(ref, {0, 2, 3, 1});
      expect_same(want, fused("NhwcConvIntegerToFloat", nhwc, attrs, "fast", constant), "NHWC fast");
      expect_same(want, fused("NhwcConvIntegerToFloat", nhwc, attrs, "reference", constant), "NHWC reference");
    }
  }
}

TEST(ConvIntegerToFloatFast, MatchesTheReference) {
  const std::vector<ConvCase> cases = {
      // name, x, w, strides, pads, dilations, group, w_signed, per_channel, w_zero, bias, act
      {"3x3_pad", {1, 16, 9, 11}, {24, 16, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, false, false, false, ""},
      {"3x3_pad_per_channel", {2, 8, 10, 7}, {20, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, true, false, false, ""},
      {"stem_7x7s2_c3", {1, 3, 23, 21}, {16, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {}, 1, true, true, false, true, "Relu"},
      {"1x1_in_place", {1, 32, 7, 9}, {40, 32, 1, 1}, {}, {}, {}, 1, true, true, false, false, ""},
      {"1x1s2", {1, 12, 9, 9}, {10, 12, 1, 1}, {2, 2}, {}, {}, 1, true, false, false, true, ""},
      {"odd_c_uint8", {1, 5, 8, 6}, {7, 5, 3, 3}, {1, 2}, {0, 1, 2, 1}, {}, 1, false, false, true, false, ""},
      {"uint8_zero_128", {1, 16, 8, 8}, {9, 16, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, false, true, true, true, "Relu"},
      {"signed_zero_points", {1, 8, 6, 6}, {6, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, true, true, false, ""},
      {"dilated", {1, 8, 12, 12}, {8, 8, 3, 3}, {}, {2, 2, 2, 2}, {2, 2}, 1, true, false, false, false, ""},
      {"groups", {1, 12, 7, 7}, {18, 4, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 3, true, true, false, true, ""},
      {"depthwise", {1, 16, 9, 9}, {16, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 16, true, true, false, false, ""},
      {"conv1d", {2, 6, 30}, {5, 6, 5}, {2}, {2, 1}, {}, 1, true, true, false, true, "Clip"},
      {"gelu", {1, 8, 5, 5}, {8, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, false, false, true, "Gelu"},
  };
  for (const ConvCase& c : cases) expect_fast_matches_reference(c, 131, 0.0123f);
}

TEST(ConvIntegerToFloatFast, RuntimeZeroPointAndScaleAreRead) {
  // X's zero point is also the value of padded taps: 0, 255 and one in between.
  const ConvCase c{"runtime", {1, 8, 7, 7}, {12, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 1, true, true, false, false, ""};
  for (uint8_t z : {0, 77, 255})
    for (float s : {0.5f, 0.031f}) expect_fast_matches_reference(c, z, s);
}

TEST(ConvIntegerToFloatRunFloat, OneAndTwoThreadsMatchTheReference) {
  struct T {
    const char* name;
    int64_t c, h, w, oc, k, pad, stride, group;
  };
  // Each large enough for threads_for to pick two threads (a few million multiply-adds).
  for (const T& t : {T{"7x7_map_200_channels", 64, 7, 7, 200, 3, 1, 1, 1}, T{"odd_c_im2col", 13, 21, 21, 200, 3, 1, 2, 1},
                     T{"groups", 64, 14, 14, 128, 3, 1, 1, 2}, T{"1x1", 48, 14, 14, 400, 1, 0, 1, 1},
                     T{"depthwise_72_channels", 72, 56, 56, 72, 3, 1, 2, 72}}) {
    const int64_t oh = (t.h + 2 * t.pad - t.k) / t.stride + 1, ow = (t.w + 2 * t.pad - t.k) / t.stride + 1;
    const Tensor x = random_bytes({1, t.h, t.w, t.c}, DataType::UInt8, 11);  // NHWC
    const Tensor w = random_bytes({t.oc, t.c / t.group, t.k, t.k}, DataType::Int8, 12);
    const Tensor ws = rnd({t.oc}, 13, 0.001f, 0.01f), b = rnd({t.oc}, 14);
    const uint8_t x_zero = 119;
    const float x_scale = 0.017f;
    std::vector<Attribute> attrs = {Attribute::make_int("group", t.group), Attribute::make_ints("pads", {t.pad, t.pad, t.pad, t.pad}),
                                    Attribute::make_ints("strides", {t.stride, t.stride}), Attribute::make_string("activation", "Relu")};
    const Tensor want = fused("NhwcConvIntegerToFloat",
                              {x, w, scalar(x_scale), ws, Tensor::scalar<uint8_t>(x_zero), Tensor(), b}, attrs,
                              "reference", {false, true, false, true, false, true, true});
    Conv2dShape s;
    s.in_c = t.c, s.in_h = t.h, s.in_w = t.w, s.out_c = t.oc, s.out_h = oh, s.out_w = ow, s.k_h = t.k, s.k_w = t.k;
    s.stride_h = s.stride_w = t.stride;
    s.pad_t = s.pad_l = s.pad_b = s.pad_r = t.pad;
    s.group = t.group;
    int8::QConvSpec spec;
    spec.dynamic = true;
    spec.out_c = t.oc, spec.in_c_per_group = t.c / t.group, spec.k_h = spec.k_w = t.k, spec.group = t.group;
    const ActivationSpec relu = ActivationSpec::relu();
    for (Int8Isa isa : int8::runnable_int8_isas()) {
      const int8::QConvWeights qw(spec, w.raw(), true, ws.data<float>(), t.oc, nullptr, 0, nullptr, nullptr, 0, isa);
      for (int threads : {1, 2}) {
        SCOPED_TRACE(std::string(t.name) + " " + int8_isa_name(isa) + " threads " + std::to_string(threads));
        ThreadPool pool(threads);
        std::vector<std::vector<uint8_t>> blocks;
        auto scratch = [&](size_t bytes) -> void* {
          blocks.emplace_back(bytes + 64, 0xcd);  // garbage, as an arena's would be
          return blocks.back().data();
        };
        Tensor got(DataType::Float, want.shape());
        qw.run_float(s, x.data<uint8_t>(), x_zero, x_scale, b.data<float>(), relu, got.data<float>(),
                     threads > 1 ? &pool : nullptr, scratch);
        EXPECT_TRUE(near(got, want, 2e-6));
      }
    }
  }
}

TEST(ConvIntegerToFloatFast, EmptyBatch) {
  const std::vector<Tensor> ins = {Tensor(DataType::UInt8, {0, 4, 5, 5}), random_bytes({6, 4, 3, 3}, DataType::Int8, 9),
                                   scalar(0.1f), scalar(0.2f), Tensor::scalar<uint8_t>(3), Tensor(), Tensor()};
  const Tensor y = fused("ConvIntegerToFloat", ins, {}, "fast", {false, true, false, true, false, true, true});
  EXPECT_EQ(y.shape(), (Shape{0, 6, 3, 3}));
}

}  // namespace
}  // namespace fusor::test
