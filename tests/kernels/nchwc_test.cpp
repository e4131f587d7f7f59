// The blocked-layout (NCHWc) kernels: the reference kernels against the ONNX ops they stand for
// (reordered), the fast kernels against the reference ones on every path (dense, grouped,
// depthwise, NCHW input; padding, strides, dilation, odd channel counts, batch 2, rows longer and
// shorter than a tile, each ISA), reorders and pools.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/gemm/gemm.h"
#include "kernels/nchwc/conv.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/nchwc/reorder.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/nchwc_test_util.h"

namespace fusor::test {
namespace {

TEST(NchwcFormat, OffsetsAndBlocks) {
  const NchwcShape s{2, 20, 3, 5, 16};
  EXPECT_EQ(s.cb(), 2);
  EXPECT_EQ(s.numel(), 2 * 2 * 3 * 5 * 16);
  EXPECT_EQ(s.offset(1, 17, 2, 4), (((1 * 2 + 1) * 3 + 2) * 5 + 4) * 16 + 1);
  EXPECT_EQ(nchwc_blocks(16, 16), 1);
  EXPECT_EQ(nchwc_blocks(17, 8), 3);
}

TEST(NchwcReorder, RoundTripAndZeroPadding) {
  ThreadPool two(2);
  for (const auto& [H, W] : std::vector<std::pair<int64_t, int64_t>>{{3, 4}, {3, 5}, {29, 31}})
    for (int64_t block : {8, 16})
      for (int64_t c : {1, 5, 16, 20, 33}) {
        const Tensor x = rnd({2, c, H, W}, static_cast<uint32_t>(c));
        const Tensor b = to_blocked(x, block);
        ASSERT_EQ(b.shape(), (Shape{2, nchwc_blocks(c, block), H, W, block}));
        const NchwcShape s{2, c, H, W, block};
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < s.cb() * block; ++ch)
            for (int64_t h = 0; h < H; ++h)
              for (int64_t w = 0; w < W; ++w) {
                const float want = ch < c ? x.data<float>()[((n * c + ch) * H + h) * W + w] : 0.0f;
                ASSERT_EQ(b.data<float>()[s.offset(n, ch, h, w)], want) << "c " << c << " channel " << ch;
              }
        EXPECT_TRUE(near(to_plain(b, c), x, 0));
        const Tensor fb = fused("ReorderToNchwc", {x}, {Attribute::make_int("block", block)}, "fast");
        EXPECT_TRUE(near(fb, b, 0)) << "block " << block << " c " << c;
        EXPECT_TRUE(near(fused("ReorderFromNchwc", {b}, {Attribute::make_int("channels", c)}, "fast"), x, 0));
        // Split over two threads: the same bits (tasks of rows).
        Tensor b2(DataType::Float, b.shape()), x2(DataType::Float, x.shape());
        std::memset(b2.data<float>(), 0xff, static_cast<size_t>(b2.numel()) * sizeof(float));
        reorder_to_nchwc(x.data<float>(), s, b2.data<float>(), &two);
        EXPECT_EQ(std::memcmp(b2.data<float>(), b.data<float>(), static_cast<size_t>(b.numel()) * sizeof(float)), 0);
        reorder_from_nchwc(b.data<float>(), s, x2.data<float>(), &two);
        EXPECT_EQ(std::memcmp(x2.data<float>(), x.data<float>(), static_cast<size_t>(x.numel()) * sizeof(float)), 0);
      }
}

TEST(NchwcReorder, BadShapesAreBadInput) {
  const Tensor x = rnd({1, 20, 3, 3}, 1);
  const Tensor b = to_blocked(x);
  EXPECT_THROW(to_plain(b, 40), Error);  // 40 channels are 3 blocks, not 2
  EXPECT_THROW(fused("ReorderFromNchwc", {x}, {Attribute::make_int("channels", 20)}, "fast"), Error);
  EXPECT_THROW(fused("ReorderToNchwc", {b}, {}, "fast"), Error);
  EXPECT_THROW(fused("ReorderToNchwc", {x}, {Attribute::make_int("block", 4)}, "reference"), Error);
}

struct ConvCase {
  const char* what;
  Shape x, w;  // NCHW x, OIHW w
  int64_t group;
  std::vector<int64_t> pads, strides, dilations;
};

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 pad 1, 20 -> 36 channels, batch 2", {2, 20, 9, 7}, {36, 20, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"3x3 stride 2, asymmetric pads", {1, 16, 11, 13}, {32, 16, 3, 3}, 1, {1, 0, 2, 1}, {2, 2}, {1, 1}},
      {"1x1, flattened rows", {1, 24, 10, 9}, {40, 24, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}},
      {"1x1 stride 2", {2, 32, 9, 9}, {64, 32, 1, 1}, 1, {0, 0, 0, 0}, {2, 2}, {1, 1}},
      {"3x3 dilation 2, wide rows", {1, 17, 6, 37}, {70, 17, 3, 3}, 1, {2, 2, 2, 2}, {1, 1}, {2, 2}},
      {"5x3 kernel, stride 3 (generic tile)", {1, 16, 12, 14}, {16, 16, 5, 3}, 1, {2, 1, 2, 1}, {3, 3}, {1, 1}},
      {"kernel larger than the image", {1, 8, 2, 3}, {20, 8, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"7x7 rows, 64 -> 80 (late layer)", {1, 64, 7, 7}, {80, 64, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"groups 2 of 16", {1, 32, 6, 6}, {48, 16, 3, 3}, 2, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"groups of 8 (inside a block)", {2, 40, 7, 5}, {40, 8, 3, 3}, 5, {1, 1, 1, 1}, {2, 1}, {1, 1}},
      // Groups inside block halves (AVX2's half-block tiles): RegNet's width 8, and width 4 and 2.
      {"groups of 8, 48 ch, stride 2, batch 2", {2, 48, 13, 15}, {48, 8, 3, 3}, 6, {1, 1, 1, 1}, {2, 2}, {1, 1}},
      {"groups of 8, 104 ch (6.5 blocks), 14 wide", {1, 104, 5, 14}, {104, 8, 3, 3}, 13, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"groups of 8, 24 ch, pads 0/2, 23 wide", {2, 24, 6, 23}, {24, 8, 3, 3}, 3, {0, 2, 2, 0}, {1, 1}, {1, 1}},
      {"groups of 8, 1x1 and 5x5 dilation 2", {1, 32, 9, 10}, {32, 8, 5, 5}, 4, {4, 4, 4, 4}, {1, 2}, {2, 2}},
      {"groups of 4, 40 ch", {1, 40, 7, 9}, {40, 4, 3, 3}, 10, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"groups of 2, 20 ch, stride 2", {1, 20, 8, 11}, {20, 2, 3, 3}, 10, {1, 1, 1, 1}, {2, 2}, {1, 1}},
      {"groups of 8, 1x1 (flattened rows)", {1, 24, 5, 5}, {24, 8, 1, 1}, 3, {0, 0, 0, 0}, {1, 1}, {1, 1}},
      {"groups of 24 (across blocks)", {1, 48, 5, 6}, {72, 24, 3, 3}, 2, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"depthwise 3x3, 20 channels", {2, 20, 8, 30}, {20, 1, 3, 3}, 20, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"depthwise 5x5 stride 2", {1, 32, 11, 11}, {32, 1, 5, 5}, 32, {2, 2, 2, 2}, {2, 2}, {1, 1}},
      {"depthwise 3x3 dilation 2", {1, 16, 9, 9}, {16, 1, 3, 3}, 16, {2, 2, 2, 2}, {1, 1}, {2, 2}},
      {"depthwise multiplier 2", {1, 8, 6, 6}, {16, 1, 3, 3}, 8, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"NCHW input, 7x7 stride 2 pad 3 (stem)", {1, 3, 23, 21}, {20, 3, 7, 7}, 1, {3, 3, 3, 3}, {2, 2}, {1, 1}},
      {"NCHW input, 3x3 stride 1", {2, 3, 7, 19}, {16, 3, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"NCHW input, 4x4 stride 4 (patchify)", {1, 3, 16, 16}, {24, 3, 4, 4}, 1, {0, 0, 0, 0}, {4, 4}, {1, 1}},
      {"bigger: threads split", {1, 64, 28, 28}, {64, 64, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      // Half blocks (AVX2's half-last tiles, 8 of 16 output lanes; 8 input lanes read of 16).
      {"3x3, 24 -> 24", {1, 24, 9, 13}, {24, 24, 3, 3}, 1, {1, 1, 1, 1}, {1, 1}, {1, 1}},
      {"3x3 stride 2, 168 -> 8 (input chunks)", {1, 168, 9, 30}, {8, 168, 3, 3}, 1, {1, 1, 1, 1}, {2, 2}, {1, 1}},
      {"1x1, 96 -> 56, batch 2 (second pack group)", {2, 96, 7, 11}, {56, 96, 1, 1}, 1, {0, 0, 0, 0}, {1, 1}, {1, 1}},
  };
}

std::vector<Attribute> conv_attrs(const ConvCase& c) {
  return {Attribute::make_int("group", c.group), Attribute::make_ints("pads", c.pads),
          Attribute::make_ints("strides", c.strides), Attribute::make_ints("dilations", c.dilations)};
}

bool plain_input(const ConvCase& c) { return c.x[1] < 8; }

// The real channels of a blocked result, as NCHW.
Tensor plain_out(const Tensor& y, int64_t channels) { return to_plain(y, channels); }

TEST(NchwcConv, ReferenceMatchesOnnxConvAddActivation) {
  uint32_t seed = 1;
  for (const auto& c : conv_cases()) {
    const Tensor x = rnd(c.x, seed++), w = rnd(c.w, seed++), b = rnd({c.w[0]}, seed++);
    const Tensor conv = onnx_op("Conv", {x, w, b}, conv_attrs(c));
    const Tensor z = rnd(conv.shape(), seed++);
    const Tensor xb = plain_input(c) ? x : to_blocked(x);
    for (const auto& act : {act_cases()[0], act_cases()[1], act_cases()[4]}) {
      auto attrs = conv_attrs(c);
      for (auto& a : act_attrs(act)) attrs.push_back(a);
      const Tensor want = onnx_activation(act.name, act.params, onnx_op("Add", {conv, z}));
      const Tensor got = fused("NchwcConv", {xb, w, b, to_blocked(z)}, attrs, "reference");
      EXPECT_TRUE(near(plain_out(got, c.w[0]), want, 1e-5)) << c.what << " '" << act.name << "'";
    }
  }
}

TEST(NchwcConv, FastMatchesReferenceOnEveryIsa) {
  for (Isa isa : isas()) {
    IsaScope scope(isa);
    uint32_t seed = 50;
    for (const auto& c : conv_cases()) {
      const Tensor x = rnd(c.x, seed++), w = rnd(c.w, seed++), b = rnd({c.w[0]}, seed++);
      const Tensor xb = plain_input(c) ? x : to_blocked(x);
      const Tensor ref0 = fused("NchwcConv", {xb, w, b}, conv_attrs(c), "reference");
      const Tensor z = rnd(ref0.shape(), seed++);
      for (const auto& act : act_cases()) {
        auto attrs = conv_attrs(c);
        for (auto& a : act_attrs(act)) attrs.push_back(a);
        const std::string what = std::string(c.what) + " '" + act.name + "' isa " + isa_name(isa);
        const Tensor ref = plain_out(fused("NchwcConv", {xb, w, b, z}, attrs, "reference"), c.w[0]);
        for (bool constant : {false, true}) {
          const Tensor got = fused("NchwcConv", {xb, w, b, z}, attrs, "fast", {false, constant, constant, false});
          EXPECT_TRUE(near(plain_out(got, c.w[0]), ref, 1e-4)) << what << (constant ? " (packed at creation)" : "");
        }
        const Tensor ref_nb = plain_out(fused("NchwcConv", {xb, w}, attrs, "reference"), c.w[0]);
        EXPECT_TRUE(near(plain_out(fused("NchwcConv", {xb, w}, attrs, "fast", {false, true}), c.w[0]), ref_nb, 1e-4))
            << what << " no bias";
      }
    }
  }
}

// The padding lanes of a fast conv's output are finite (the format's promise) and its real lanes
// do not depend on the input's padding lanes, whatever finite values they hold.
// Cases: 20 -> 36 channels, and 24 -> 24 (half-last tiles on AVX2, which skip both padding halves).
TEST(NchwcConv, PaddingLanesFiniteAndIgnored) {
  for (const ConvCase& c : {conv_cases()[0], conv_cases()[conv_cases().size() - 3]}) {
    const Tensor x = rnd(c.x, 7), w = rnd(c.w, 8), b = rnd({c.w[0]}, 9);
    Tensor xb = to_blocked(x);
    const int64_t blocks = xb.dim(1), plane = xb.dim(2) * xb.dim(3);
    const Tensor clean = fused("NchwcConv", {xb, w, b}, conv_attrs(c), "fast", {false, true, true});
    for (int64_t n = 0; n < xb.dim(0); ++n)
      for (int64_t p = 0; p < plane; ++p)
        for (int64_t l = c.x[1] % 16; l < 16; ++l)
          xb.data<float>()[((n * blocks + blocks - 1) * plane + p) * 16 + l] = 1e30f;
    const Tensor dirty = fused("NchwcConv", {xb, w, b}, conv_attrs(c), "fast", {false, true, true});
    EXPECT_TRUE(near(plain_out(dirty, c.w[0]), plain_out(clean, c.w[0]), 0)) << c.what;
    for (int64_t i = 0; i < dirty.numel(); ++i) ASSERT_TRUE(std::isfinite(dirty.data<float>()[i])) << c.what << " " << i;
  }
}

TEST(NchwcConv, BadInputIsReported) {
  const Tensor x = rnd({1, 20, 5, 5}, 1), w = rnd({16, 20, 3, 3}, 2);
  const Tensor xb = to_blocked(x);
  const Tensor w_wrong = rnd({16, 40, 3, 3}, 3);  // 40 input channels: 3 blocks, X has 2
  EXPECT_THROW(fused("NchwcConv", {xb, w_wrong}, {}, "fast"), Error);
  EXPECT_THROW(fused("NchwcConv", {xb, w_wrong}, {}, "reference"), Error);
  const Tensor z_wrong = rnd({1, 2, 3, 3, 16}, 4);  // 16 output channels are 1 block
  EXPECT_THROW(fused("NchwcConv", {xb, w, Tensor(), z_wrong}, {}, "fast"), Error);
  EXPECT_THROW(fused("NchwcConv", {xb, w, rnd({5}, 5)}, {}, "fast"), Error);
}

TEST(NchwcPool, FastMatchesReferenceAndOnnx) {
  struct PoolCase {
    const char* op;
    Shape x;
    std::vector<Attribute> attrs;
  };
  const std::vector<PoolCase> cases = {
      {"MaxPool", {2, 20, 9, 9}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("strides", {2, 2}),
                                  Attribute::make_ints("pads", {1, 1, 1, 1})}},
      {"MaxPool", {1, 16, 8, 7}, {Attribute::make_ints("kernel_shape", {2, 2}), Attribute::make_ints("strides", {2, 2}),
                                  Attribute::make_int("ceil_mode", 1)}},
      {"AveragePool", {1, 33, 7, 7}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("pads", {1, 1, 1, 1})}},
      {"AveragePool", {1, 24, 6, 6}, {Attribute::make_ints("kernel_shape", {3, 3}), Attribute::make_ints("pads", {1, 1, 1, 1}),
                                      Attribute::make_int("count_include_pad", 1), Attribute::make_ints("strides", {2, 2})}},
      {"GlobalAveragePool", {2, 20, 5, 7}, {}},
      {"GlobalMaxPool", {1, 40, 3, 3}, {}},
  };
  uint32_t seed = 300;
  for (const auto& c : cases) {
    const Tensor x = rnd(c.x, seed++);
    const Tensor want = onnx_op(c.op, {x}, c.attrs);
    const std::string op = std::string("Nchwc") + c.op;
    const Tensor ref = fused(op, {to_blocked(x)}, c.attrs, "reference");
    EXPECT_TRUE(near(plain_out(ref, c.x[1]), want, 1e-6)) << op;
    const Tensor fast = fused(op, {to_blocked(x)}, c.attrs, "fast");
    EXPECT_TRUE(near(plain_out(fast, c.x[1]), want, 1e-5)) << op;
  }
}

}  // namespace
}  // namespace fusor::test

namespace fusor::test {
namespace {

// nchwc_conv split over 2 threads (ranges of tiles; small images too) gives
// the serial result bit for bit: each output element is summed in the same order either way.
TEST(NchwcConv, TwoThreadsEqualOneBitForBit) {
  struct Case {
    const char* what;
    int64_t c, k, hw, kernel;
  };
  const Case cases[] = {{"1x1 7x7 320 -> 1280 (output blocks split)", 320, 1280, 7, 1},
                        {"1x1 14x14 96 -> 576", 96, 576, 14, 1},
                        {"3x3 28x28 64 -> 64", 64, 64, 28, 3},
                        {"3x3 7x7 48 -> 40 (partial block)", 48, 40, 7, 3},
                        {"1x1 56x56 24 -> 144 (tiles split)", 24, 144, 56, 1}};
  ThreadPool two(2);
  uint32_t seed = 900;
  for (const Case& c : cases) {
    const int64_t pad = c.kernel / 2;
    const Tensor x = to_blocked(rnd({1, c.c, c.hw, c.hw}, seed++)), w = rnd({c.k, c.c, c.kernel, c.kernel}, seed++);
    const Tensor b = rnd({c.k}, seed++);
    NchwcConvWeights pw(w.data<float>(), c.k, c.c, c.kernel, c.kernel, 1, false, 16);
    Conv2dShape s;
    s.in_c = c.c, s.in_h = s.in_w = c.hw, s.out_c = c.k, s.out_h = s.out_w = c.hw;
    s.k_h = s.k_w = c.kernel, s.pad_t = s.pad_l = s.pad_b = s.pad_r = pad;
    const size_t out = static_cast<size_t>((c.k + 15) / 16 * 16 * c.hw * c.hw);
    for (Activation act : {Activation::None, Activation::Relu, Activation::Sigmoid}) {
      Epilogue ep;
      ep.bias = b.data<float>();
      ep.bias_axis = BiasAxis::PerRow;
      ep.act.kind = act;
      std::vector<float> serial(out), split(out);
      nchwc_conv(pw, s, x.data<float>(), serial.data(), ep);
      GemmRun run;
      run.pool = &two;
      nchwc_conv(pw, s, x.data<float>(), split.data(), ep, run);
      EXPECT_EQ(std::memcmp(serial.data(), split.data(), out * sizeof(float)), 0) << c.what;
    }
  }
}

}  // namespace
}  // namespace fusor::test

namespace fusor::test {
namespace {

// A "same" conv of one image: c -> k channels, hw x hw, square kernel, pads kernel / 2.
struct SameConv {
  const char* what;
  int64_t c, k, hw, kernel, group;
  Conv2dShape shape() const {
    Conv2dShape s;
    s.in_c = c, s.in_h = s.in_w = hw, s.out_c = k, s.out_h = s.out_w = hw, s.group = group;
    s.k_h = s.k_w = kernel, s.pad_t = s.pad_l = s.pad_b = s.pad_r = kernel / 2;
    return s;
  }
};

// A non-clamp activation runs as a pass over short ranges of tiles right after they are computed
// (dense and depthwise, images far larger than one range): the result equals the conv without
// activation followed by one pass of the same activation over the whole output, bit for bit.
TEST(NchwcConv, ActivationPassOverRangesEqualsOnePassAfter) {
  const SameConv cases[] = {{"1x1 56x56 24 -> 144", 24, 144, 56, 1, 1},
                        {"3x3 depthwise 112x112 x32", 32, 32, 112, 3, 32},
                        {"3x3 depthwise 57x57 x40 (partial block, short last tile)", 40, 40, 57, 3, 40},
                        {"3x3 30x30 32 -> 48", 32, 48, 30, 3, 1}};
  ThreadPool two(2);
  uint32_t seed = 1900;
  for (const SameConv& c : cases) {
    const int64_t icg = c.c / c.group;
    const Tensor x = to_blocked(rnd({1, c.c, c.hw, c.hw}, seed++)), w = rnd({c.k, icg, c.kernel, c.kernel}, seed++);
    const Tensor b = rnd({c.k}, seed++);
    NchwcConvWeights pw(w.data<float>(), c.k, icg, c.kernel, c.kernel, c.group, false, 16);
    const Conv2dShape s = c.shape();
    const int64_t blocks = (c.k + 15) / 16, plane = c.hw * c.hw * 16;
    const size_t out = static_cast<size_t>(blocks * plane);
    for (Activation act : {Activation::Sigmoid, Activation::SiLU, Activation::Gelu}) {
      Epilogue ep;
      ep.bias = b.data<float>();
      ep.bias_axis = BiasAxis::PerRow;
      std::vector<float> want(out), got(out), got2(out);
      nchwc_conv(pw, s, x.data<float>(), want.data(), ep);
      Epilogue post;
      post.act.kind = act;
      apply_epilogue(want.data(), plane, blocks, plane, post, pw.isa());
      ep.act.kind = act;
      nchwc_conv(pw, s, x.data<float>(), got.data(), ep);
      GemmRun run;
      run.pool = &two;
      nchwc_conv(pw, s, x.data<float>(), got2.data(), ep, run);
      EXPECT_EQ(std::memcmp(want.data(), got.data(), out * sizeof(float)), 0) << c.what;
      EXPECT_EQ(std::memcmp(want.data(), got2.data(), out * sizeof(float)), 0) << c.what << " (2 threads)";
    }
  }
}

// Weights scaled per input channel (a squeeze-excite scale folded into the next conv) compute the
// conv of the scaled input: dense and grouped, 1x1 and 3x3, a partial last input block (whose
// padding lanes of the scale hold garbage that must not reach the output).
TEST(NchwcConv, InputScaleFoldedIntoWeightsEqualsScaledInput) {
  const SameConv cases[] = {{"1x1 14x14 40 -> 24", 40, 24, 14, 1, 1},
                        {"3x3 9x9 32 -> 48", 32, 48, 9, 3, 1},
                        {"1x1 grouped 8x8 64 -> 64 (4 groups)", 64, 64, 8, 1, 4}};
  uint32_t seed = 2900;
  for (const SameConv& c : cases) {
    const int64_t icg = c.c / c.group, cb = (c.c + 15) / 16;
    const Tensor xp = rnd({1, c.c, c.hw, c.hw}, seed++), w = rnd({c.k, icg, c.kernel, c.kernel}, seed++);
    std::vector<float> scale(static_cast<size_t>(cb * 16), std::numeric_limits<float>::quiet_NaN());
    const Tensor sv = rnd({c.c}, seed++);
    for (int64_t i = 0; i < c.c; ++i) scale[i] = sv.data<float>()[i];
    Tensor xs = xp.clone();
    for (int64_t ch = 0; ch < c.c; ++ch)
      for (int64_t p = 0; p < c.hw * c.hw; ++p) xs.data<float>()[ch * c.hw * c.hw + p] *= scale[ch];
    NchwcConvWeights pw(w.data<float>(), c.k, icg, c.kernel, c.kernel, c.group, false, 16);
    const Conv2dShape s = c.shape();
    const size_t out = static_cast<size_t>((c.k + 15) / 16 * 16 * c.hw * c.hw);
    std::vector<float> want(out), got(out), packed(static_cast<size_t>(pw.packed_size()));
    nchwc_conv(pw, s, to_blocked(xs).data<float>(), want.data());
    const NchwcConvWeights scaled = pw.with_input_scale(scale.data(), packed.data());
    nchwc_conv(scaled, s, to_blocked(xp).data<float>(), got.data());
    for (size_t i = 0; i < out; ++i)
      ASSERT_NEAR(want[i], got[i], 1e-5f * (1.0f + std::abs(want[i]))) << c.what << " at " << i;
  }
}

}  // namespace
}  // namespace fusor::test
