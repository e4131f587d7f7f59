// Hand-checked cases for the reference kernels beyond the core list: windows, NonMaxSuppression,
// losses, GridSample, text and signal ops.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "tests/kernels/nn_harness.h"

namespace fusor::test {
namespace {

TEST(RefExtraOps, HannWindowPeriodicAndSymmetric) {
  Tensor n = Tensor::scalar<int64_t>(4);
  expect_near(run_op("HannWindow", {&n})[0], {0, 0.5, 1, 0.5});  // periodic: N1 = 4
  auto sym = run_op("HannWindow", {&n}, {Attribute::make_int("periodic", 0)});  // N1 = 3
  expect_near(sym[0], {0, 0.75, 0.75, 0});
}

TEST(RefExtraOps, NonMaxSuppressionSuppressesOverlaps) {
  // Box 1 overlaps box 0 (IoU 0.81 > 0.5) and scores lower; box 2 is disjoint.
  Tensor boxes = Tensor::from_vector<float>({1, 3, 4}, {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3});
  Tensor scores = Tensor::from_vector<float>({1, 1, 3}, {0.9f, 0.8f, 0.7f});
  Tensor max_out = Tensor::from_vector<int64_t>({1}, {3});
  Tensor iou = Tensor::from_vector<float>({1}, {0.5f});
  auto y = run_op("NonMaxSuppression", {&boxes, &scores, &max_out, &iou}, {}, 1, 11);
  EXPECT_EQ(y[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(y[0]), (std::vector<double>{0, 0, 0, 0, 0, 2}));
  Tensor thr = Tensor::from_vector<float>({1}, {0.75f});
  auto t = run_op("NonMaxSuppression", {&boxes, &scores, &max_out, &iou, &thr}, {}, 1, 11);
  EXPECT_EQ(values(t[0]), (std::vector<double>{0, 0, 0}));
}

TEST(RefExtraOps, NllAndSoftmaxCrossEntropy) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {-1, -2, -3, -4, -5, -6});
  Tensor t = Tensor::from_vector<int64_t>({2}, {2, 0});
  expect_near(run_op("NegativeLogLikelihoodLoss", {&x, &t}, {}, 1, 13)[0], {(3 + 4) / 2.0});
  auto none = run_op("NegativeLogLikelihoodLoss", {&x, &t}, {Attribute::make_string("reduction", "none")}, 1, 13);
  expect_near(none[0], {3, 4});
  Tensor wt = Tensor::from_vector<float>({3}, {1, 1, 3});
  // weighted mean: (3*3 + 4*1) / (3 + 1)
  expect_near(run_op("NegativeLogLikelihoodLoss", {&x, &t, &wt}, {}, 1, 13)[0], {13 / 4.0});
  expect_near(run_op("NegativeLogLikelihoodLoss", {&x, &t}, {Attribute::make_int("ignore_index", 0)}, 1, 13)[0], {3});
  Tensor logits = Tensor::from_vector<float>({1, 2}, {0, 0});
  Tensor lab = Tensor::from_vector<int64_t>({1}, {1});
  auto sce = run_op("SoftmaxCrossEntropyLoss", {&logits, &lab}, {}, 2, 13);
  expect_near(sce[0], {std::log(2.0)});
  expect_near(sce[1], {-std::log(2.0), -std::log(2.0)});
}

TEST(RefExtraOps, GridSampleIdentityGrid) {
  Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // align_corners=1: (-1,-1) and (1,1) hit the corners; (0,0) is the centre average.
  Tensor grid = Tensor::from_vector<float>({1, 1, 3, 2}, {-1, -1, 1, 1, 0, 0});
  auto y = run_op("GridSample", {&x, &grid}, {Attribute::make_int("align_corners", 1)}, 1, 16);
  expect_near(y[0], {1, 4, 2.5});
  Tensor outside = Tensor::from_vector<float>({1, 1, 1, 2}, {3, 3});
  expect_near(run_op("GridSample", {&x, &outside}, {}, 1, 16)[0], {0});  // zeros padding
  expect_near(run_op("GridSample", {&x, &outside}, {Attribute::make_string("padding_mode", "border")}, 1, 16)[0], {4});
}

TEST(RefExtraOps, StringNormalizerAndTfIdf) {
  Tensor s = Tensor::strings({3}, {"Hello", "the", "World"});
  auto y = run_op("StringNormalizer", {&s}, {Attribute::make_strings("stopwords", {"THE"}),
                                            Attribute::make_string("case_change_action", "LOWER")}, 1, 10);
  EXPECT_EQ(y[0].string_data(), (std::vector<std::string>{"hello", "world"}));
  Tensor tok = Tensor::from_vector<int64_t>({5}, {1, 2, 1, 2, 3});
  auto tf = run_op("TfIdfVectorizer", {&tok},
                   {Attribute::make_int("min_gram_length", 1), Attribute::make_int("max_gram_length", 2),
                    Attribute::make_int("max_skip_count", 0), Attribute::make_string("mode", "TF"),
                    Attribute::make_ints("ngram_counts", {0, 2}), Attribute::make_ints("ngram_indexes", {0, 1, 2}),
                    Attribute::make_ints("pool_int64s", {1, 3, 1, 2})},
                   1, 9);
  expect_near(tf[0], {2, 1, 2});  // unigram 1 twice, unigram 3 once, bigram (1,2) twice
}

TEST(RefExtraOps, DftOfImpulseAndConstant) {
  Tensor x = Tensor::from_vector<float>({1, 4, 1}, {1, 1, 1, 1});
  auto y = run_op("DFT", {&x}, {}, 1, 17);
  EXPECT_EQ(y[0].shape(), (Shape{1, 4, 2}));
  expect_near(y[0], {4, 0, 0, 0, 0, 0, 0, 0});
  Tensor imp = Tensor::from_vector<float>({1, 4, 2}, {0, 0, 1, 0, 0, 0, 0, 0});  // delta at n = 1
  auto z = run_op("DFT", {&imp}, {}, 1, 17);
  expect_near(z[0], {1, 0, 0, -1, -1, 0, 0, 1});  // e^{-i pi k / 2}
  auto back = run_op("DFT", {&z[0]}, {Attribute::make_int("inverse", 1)}, 1, 17);
  expect_near(back[0], values(imp));
}

TEST(RefExtraOps, MomentumStandardUpdate) {
  Tensor r = Tensor::scalar<float>(0.5f), t = Tensor::scalar<int64_t>(1);
  Tensor x = Tensor::from_vector<float>({1}, {2}), g = Tensor::from_vector<float>({1}, {1}), v = Tensor::from_vector<float>({1}, {4});
  OneNode one("Momentum", 5, 2, {Attribute::make_float("alpha", 0.5f), Attribute::make_float("beta", 2),
                                 Attribute::make_string("mode", "standard")});
  one.graph.node(one.id).op = OpType("ai.onnx.preview.training", "Momentum");
  auto y = run_kernel(KernelRegistry::global(), one.graph, one.node(), 1, {&r, &t, &x, &g, &v});
  expect_near(y[1], {0.5 * 4 + 2 * 1});      // V_new
  expect_near(y[0], {2 - 0.5 * (0.5 * 4 + 2)});  // X_new = X - R * V_new
}

}  // namespace
}  // namespace fusor::test
