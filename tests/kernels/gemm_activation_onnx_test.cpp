// ONNX spellings of the epilogue activations (kernels/gemm/activation_onnx.h).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/gemm/activation_onnx.h"

namespace fusor {
namespace {

TEST(ActivationOnnx, FromNameAndParams) {
  EXPECT_EQ(activation_from_name("Relu")->kind, Activation::Relu);
  EXPECT_EQ(activation_from_name("")->kind, Activation::None);
  const auto clip = activation_from_name("Clip", {0.0f, 6.0f});
  ASSERT_TRUE(clip);
  EXPECT_EQ(clip->kind, Activation::Clip);
  EXPECT_EQ(clip->alpha, 0.0f);
  EXPECT_EQ(clip->beta, 6.0f);
  EXPECT_FALSE(activation_from_name("Clip", {1.0f}));
  EXPECT_FALSE(activation_from_name("Relu", {1.0f}));
  EXPECT_FALSE(activation_from_name("Softplus"));
  EXPECT_EQ(activation_from_name("LeakyRelu")->alpha, 0.01f);
  EXPECT_EQ(activation_from_name("HardSigmoid", {0.3f, 0.4f})->beta, 0.4f);
}

TEST(ActivationOnnx, OfNode) {
  Graph g;
  auto node_of = [&](const char* domain, const char* op, std::vector<Attribute> attrs) -> const Node& {
    ValueId in = g.add_value(g.unique_name("x"));
    NodeId n = g.create_node(OpType(domain, op), {in}, 1, std::move(attrs));
    return g.node(n);
  };
  EXPECT_EQ(activation_of_node(node_of("", "Relu", {}))->kind, Activation::Relu);
  EXPECT_EQ(activation_of_node(node_of("", "LeakyRelu", {Attribute::make_float("alpha", 0.2f)}))->alpha, 0.2f);
  EXPECT_EQ(activation_of_node(node_of("com.microsoft", "Gelu", {}))->kind, Activation::Gelu);
  EXPECT_EQ(activation_of_node(node_of("", "Gelu", {Attribute::make_string("approximate", "tanh")}))->kind,
            Activation::GeluTanh);
  EXPECT_FALSE(activation_of_node(node_of("", "Add", {})));
  const auto c = activation_of_node(node_of("", "Clip", {}), 0.0f, std::nullopt);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->alpha, 0.0f);
  EXPECT_TRUE(std::isinf(c->beta));
  EXPECT_EQ(activation_of_node(node_of("", "Clip", {Attribute::make_float("min", -1), Attribute::make_float("max", 1)}))->alpha, -1.0f);
}

}  // namespace
}  // namespace fusor
