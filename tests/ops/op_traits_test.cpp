// The op-traits table (core/ops/op_traits.h) and the named op constants (op_names.h).
#include "core/ops/op_traits.h"

#include <gtest/gtest.h>

#include "core/ops/fusor_ops.h"
#include "core/ops/op_names.h"

namespace fusor {
namespace {

TEST(OpTraits, CommutativeAndNary) {
  for (OpType t : {op::Add, op::Mul, op::Equal, op::And, op::BitwiseXor}) {
    EXPECT_TRUE(op_traits(t).commutative) << t.name();
    EXPECT_FALSE(op_traits(t).nary_set) << t.name();
  }
  for (OpType t : {op::Sum, op::Max, op::Min, op::Mean}) {
    EXPECT_TRUE(op_traits(t).commutative) << t.name();
    EXPECT_TRUE(op_traits(t).nary_set) << t.name();
  }
  EXPECT_FALSE(op_traits(OpType::onnx("Sub")).commutative);
  EXPECT_FALSE(op_traits(OpType::onnx("Div")).commutative);
}

TEST(OpTraits, WindowedDeterministicAxes) {
  for (OpType t : {op::Conv, op::ConvTranspose, op::MaxPool, fop::FusedConv, fop::NhwcMaxPool, fop::NhwcAveragePool})
    EXPECT_TRUE(op_traits(t).windowed) << t.qualified();
  EXPECT_FALSE(op_traits(fop::NhwcGlobalAveragePool).windowed);
  EXPECT_FALSE(op_traits(op::Gemm).windowed);
  for (OpType t : {op::RandomNormal, op::RandomUniformLike, op::Multinomial, op::Bernoulli})
    EXPECT_FALSE(op_traits(t).deterministic) << t.name();
  EXPECT_TRUE(op_traits(op::Add).deterministic);
  EXPECT_TRUE(op_traits(op::Unsqueeze).axes_of_output);
  EXPECT_FALSE(op_traits(op::Squeeze).axes_of_output);
  EXPECT_TRUE(op_traits(op::Clip).bounds_as_params);
}

TEST(OpTraits, UnknownOpsHaveTheDefaults) {
  const OpTraits& t = op_traits(OpType("com.example", "Frobnicate"));
  EXPECT_FALSE(t.commutative || t.nary_set || t.windowed || t.axes_of_output || t.bounds_as_params);
  EXPECT_TRUE(t.deterministic);
  EXPECT_TRUE(t.lifted.empty());
  EXPECT_FALSE(op_traits(OpType()).commutative);
}

TEST(OpTraits, LiftedInputs) {
  EXPECT_EQ(lifted_input_attr(op::Clip, 1), "min");
  EXPECT_EQ(lifted_input_attr(op::Clip, 2), "max");
  EXPECT_FALSE(lifted_input_attr(op::Clip, 0));
  EXPECT_EQ(lifted_input_attr(op::Unsqueeze, 1), "axes");
  EXPECT_EQ(lifted_input_attr(op::ReduceLogSumExp, 1), "axes");
  EXPECT_FALSE(lifted_input_attr(op::Reshape, 1));
  EXPECT_FALSE(lifted_input_attr(OpType(kFusorDomain, "Clip"), 1));  // another domain's op
  EXPECT_FALSE(lifted_as_input(op::Clip, "min", 6));
  EXPECT_TRUE(lifted_as_input(op::Clip, "max", 11));
  EXPECT_FALSE(lifted_as_input(op::Squeeze, "axes", 12));
  EXPECT_TRUE(lifted_as_input(op::Squeeze, "axes", 13));
  EXPECT_TRUE(lifted_as_input(op::ReduceSum, "axes", 13));
  EXPECT_FALSE(lifted_as_input(op::ReduceMean, "axes", 17));
  EXPECT_TRUE(lifted_as_input(op::ReduceMean, "axes", 18));
}

TEST(OpNames, AreTheInternedOps) {
  EXPECT_EQ(op::Conv, OpType::onnx("Conv"));
  EXPECT_EQ(op::Conv, OpType("ai.onnx", "Conv"));
  EXPECT_EQ(fop::FusedConv, OpType(kFusorDomain, "FusedConv"));
  EXPECT_NE(fop::Gelu, OpType::onnx("Gelu"));
}

TEST(OpNames, FusorNamesAreInTheCatalog) {
  for (OpType t : {fop::Attention, fop::BiasGelu, fop::FusedConv, fop::FusedGemm, fop::FusedMatMul, fop::Gelu,
                   fop::LayerNorm, fop::NhwcAveragePool, fop::NhwcConv, fop::NhwcConvTranspose,
                   fop::NhwcGlobalAveragePool, fop::NhwcGlobalMaxPool, fop::NhwcMaxPool, fop::QuickGelu, fop::RMSNorm,
                   fop::Silu, fop::SkipLayerNorm})
    EXPECT_NE(find_fusor_op_signature(t.name()), nullptr) << t.name();
}

TEST(FusorCatalog, ShapeRules) {
  EXPECT_EQ(find_fusor_op_signature("FusedConv")->shape, "as Conv");
  EXPECT_EQ(find_fusor_op_signature("NhwcMaxPool")->shape, "nhwc MaxPool");
  EXPECT_EQ(find_fusor_op_signature("Gelu")->shape, "");
}

}  // namespace
}  // namespace fusor
