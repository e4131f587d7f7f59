// fusor.NchwcAffine, the blocked per-channel affine map (kernels/nchwc/affine.h): the reference
// kernel against ONNX's BatchNormalization (+ the activation) on the reordered data, the fast kernel
// against the reference on every ISA, block 8 and 16, channel counts that do and do not fill the
// last block, batch 2, planes large enough to split, on 1 and 2 threads; padding lanes; bad input.
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/fused/activation.h"
#include "kernels/nchwc/affine.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/nchwc_test_util.h"

namespace fusor::test {
namespace {

// A BatchNormalization's constants and the Scale / Shift the layout rule folds them into.
struct Bn {
  Tensor scale, bias, mean, var, k, t;
  float eps;
};
Bn make_bn(int64_t c, uint32_t seed, float eps = 1e-5f) {
  Bn b{rnd({c}, seed, 0.5f, 1.5f), rnd({c}, seed + 1), rnd({c}, seed + 2), rnd({c}, seed + 3, 0.1f, 2.0f), {}, {}, eps};
  std::vector<float> k(c), t(c);
  for (int64_t i = 0; i < c; ++i) {
    k[i] = b.scale.data<float>()[i] / std::sqrt(b.var.data<float>()[i] + eps);
    t[i] = b.bias.data<float>()[i] - b.mean.data<float>()[i] * k[i];
  }
  b.k = Tensor::from_vector<float>({c}, k);
  b.t = Tensor::from_vector<float>({c}, t);
  return b;
}

TEST(NchwcAffine, ReferenceMatchesOnnxBatchNormalization) {
  uint32_t seed = 1;
  for (int64_t c : {5, 16, 20, 33})
    for (const auto& act : act_cases()) {
      const Tensor x = rnd({2, c, 3, 5}, seed++, -3.0f, 3.0f);
      const Bn bn = make_bn(c, seed += 4, 1e-3f);
      const Tensor want = onnx_activation(
          act.name, act.params,
          onnx_op("BatchNormalization", {x, bn.scale, bn.bias, bn.mean, bn.var}, {Attribute::make_float("epsilon", bn.eps)}));
      const Tensor got = fused("NchwcAffine", {to_blocked(x), bn.k, bn.t}, act_attrs(act), "reference");
      ASSERT_EQ(got.shape(), (Shape{2, nchwc_blocks(c, 16), 3, 5, 16}));
      EXPECT_TRUE(near(to_plain(got, c), want, 1e-5)) << c << " channels, '" << act.name << "'";
      const NchwcShape s{2, c, 3, 5, 16};
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t ch = c; ch < s.cb() * 16; ++ch) ASSERT_EQ(got.data<float>()[s.offset(n, ch, 2, 4)], 0.0f);
    }
}

struct Case {
  Shape x;  // NCHW
  int64_t block;
};

std::vector<Case> cases() {
  return {{{1, 20, 3, 4}, 16}, {{2, 33, 5, 7}, 16}, {{2, 64, 7, 7}, 16}, {{1, 5, 2, 3}, 16},  {{2, 20, 3, 5}, 8},
          {{1, 13, 4, 3}, 8},  {{1, 48, 56, 56}, 16} /* planes split in pieces */, {{3, 128, 9, 9}, 16}};
}

// The fast kernel (through the registry, constant and run-time Scale/Shift) equals the reference
// on the real lanes; the padding lanes hold act(0).
TEST(NchwcAffine, FastMatchesReferenceOnEveryIsa) {
  for (Isa isa : isas()) {
    IsaScope scope(isa);
    uint32_t seed = 100;
    for (const auto& c : cases())
      for (const auto& act : act_cases()) {
        const Tensor xb = to_blocked(rnd(c.x, seed++, -4.0f, 4.0f), c.block);
        const Bn bn = make_bn(c.x[1], seed += 4);
        const Tensor ref = fused("NchwcAffine", {xb, bn.k, bn.t}, act_attrs(act), "reference");
        for (bool constant : {false, true}) {
          const Tensor fast = fused("NchwcAffine", {xb, bn.k, bn.t}, act_attrs(act), "fast", {false, constant, constant});
          ASSERT_EQ(fast.shape(), xb.shape());
          EXPECT_TRUE(near(to_plain(fast, c.x[1]), to_plain(ref, c.x[1]), 2e-6))
              << isa_name(isa) << " " << shape_str(c.x) << " block " << c.block << " '" << act.name << "'";
          Node node;
          node.op = OpType("fusor", "NchwcAffine");
          node.attrs = act_attrs(act);
          const ActivationSpec spec = fused::activation_of(node);
          const float pad = fused::activate(spec, 0.0f);
          const NchwcShape s{c.x[0], c.x[1], c.x[2], c.x[3], c.block};
          for (int64_t ch = c.x[1]; ch < s.cb() * c.block; ++ch)
            ASSERT_NEAR(fast.data<float>()[s.offset(c.x[0] - 1, ch, 0, 0)], pad, 1e-6) << ch;
        }
      }
  }
}

// The kernel function itself on 1 and 2 threads: the same result, bit for bit, as the serial loop,
// in place too.
TEST(NchwcAffine, ThreadCountsAndInPlace) {
  ThreadPool one(1), two(2);
  uint32_t seed = 500;
  for (const auto& c : cases()) {
    const Tensor xb = to_blocked(rnd(c.x, seed++), c.block);
    const Bn bn = make_bn(c.x[1], seed += 4);
    const NchwcAffineParams p(bn.k.data<float>(), bn.t.data<float>(), c.x[1], c.block);
    const ActivationSpec act = ActivationSpec::relu();
    const int64_t px = c.x[2] * c.x[3];
    Tensor serial(DataType::Float, xb.shape()), y1(DataType::Float, xb.shape()), y2(DataType::Float, xb.shape());
    nchwc_affine(p, act, xb.data<float>(), serial.data<float>(), c.x[0], px, nullptr);
    nchwc_affine(p, act, xb.data<float>(), y1.data<float>(), c.x[0], px, &one);
    nchwc_affine(p, act, xb.data<float>(), y2.data<float>(), c.x[0], px, &two);
    EXPECT_TRUE(near(y1, serial, 0)) << shape_str(c.x);
    EXPECT_TRUE(near(y2, serial, 0)) << shape_str(c.x);
    Tensor inplace(DataType::Float, xb.shape());
    std::copy(xb.data<float>(), xb.data<float>() + xb.numel(), inplace.data<float>());
    nchwc_affine(p, act, inplace.data<float>(), inplace.data<float>(), c.x[0], px, &two);
    EXPECT_TRUE(near(inplace, serial, 0)) << shape_str(c.x);
    const Tensor ref = fused("NchwcAffine", {xb, bn.k, bn.t}, act_attrs({"Relu", {}}), "reference");
    EXPECT_TRUE(near(to_plain(y2, c.x[1]), to_plain(ref, c.x[1]), 1e-6)) << shape_str(c.x);
  }
}

TEST(NchwcAffine, BadInputIsReported) {
  const Tensor xb = to_blocked(rnd({1, 20, 3, 3}, 1));
  const Bn bn = make_bn(40, 2);  // 40 channels are 3 blocks, X has 2
  const Bn ok = make_bn(20, 7);
  for (const char* impl : {"reference", "fast"}) {
    EXPECT_THROW(fused("NchwcAffine", {xb, bn.k, bn.t}, {}, impl), Error) << impl;
    EXPECT_THROW(fused("NchwcAffine", {xb, ok.k, bn.t}, {}, impl), Error) << impl;  // lengths differ
    EXPECT_THROW(fused("NchwcAffine", {rnd({1, 20, 3, 3}, 3), ok.k, ok.t}, {}, impl), Error) << impl;  // not blocked
    EXPECT_THROW(fused("NchwcAffine", {xb, ok.k, ok.t}, {Attribute::make_string("activation", "Foo")}, impl), Error)
        << impl;
  }
}

}  // namespace
}  // namespace fusor::test
