// Type refinement during rewriting (engine/rewrite/type_refine.h): a Reshape whose shape input
// was computed at run time gets its rank once the shape is known (or from the shape's length),
// and merging never loses knowledge.
#include <gtest/gtest.h>

#include "engine/rewrite/type_refine.h"
#include "test_util.h"

using namespace fusor;
using namespace fusor::test;

TEST(TypeRefine, MergeAddsKnowledgeAndNeverLosesIt) {
  ValueType old = ValueType::tensor(DataType::Float);
  old.has_shape = true;
  old.dims = {Dim::symbol("N"), Dim{}, Dim::known(64)};
  ValueType better = ValueType::tensor(DataType::Float, {1, 16, 64});
  ValueType merged;
  EXPECT_TRUE(merge_type(old, better, merged));
  // The symbol and the unknown dim become the values inference found.
  EXPECT_EQ(merged.dims[0].value, 1);
  EXPECT_EQ(merged.dims[1].value, 16);
  // A symbol is kept over an unknown dim.
  ValueType sym = ValueType::tensor(DataType::Float);
  sym.has_shape = true;
  sym.dims = {Dim::symbol("N"), Dim{}};
  ValueType vague = sym;
  vague.dims = {Dim{}, Dim::symbol("S")};
  ValueType m2;
  EXPECT_TRUE(merge_type(sym, vague, m2));
  EXPECT_EQ(m2.dims[0].param, "N");
  EXPECT_EQ(m2.dims[1].param, "S");
  // A weaker inference (no shape) gains nothing and keeps the old type.
  EXPECT_FALSE(merge_type(merged, ValueType::tensor(DataType::Float), merged));
  EXPECT_EQ(merged.rank(), 3);
  // Conflicts keep the old type.
  ValueType other = ValueType::tensor(DataType::Float, {1, 16, 32});
  ValueType kept;
  EXPECT_FALSE(merge_type(merged, other, kept));
  EXPECT_EQ(kept.dims[2].value, 64);
  EXPECT_FALSE(merge_type(merged, ValueType::tensor(DataType::Double, {1, 16, 64}), kept));
  EXPECT_EQ(kept.elem, DataType::Float);
}

TEST(TypeRefine, ReshapeWithAKnownShapeInputGetsItsShape) {
  GB b;
  ValueId x = b.input("x", {2, 12});
  ValueId shape = b.input("s", {3}, DataType::Int64);  // computed at run time: only its length is known
  ValueId r = b.node("Reshape", {x, shape}, "r");
  ValueId t = b.node("Transpose", {r}, "t", {Attribute::make_ints("perm", {2, 0, 1})});
  b.output(t);
  // What the model's own inference leaves: no shape downstream.
  b.g.value(r).type = ValueType::tensor(DataType::Float);
  b.g.value(t).type = ValueType::tensor(DataType::Float);
  std::vector<NodeId> consumers;
  ASSERT_TRUE(refine_node_types(b.g, b.find("r"), 17, consumers));
  EXPECT_EQ(b.g.value(r).type.rank(), 3);
  ASSERT_EQ(consumers.size(), 1u);
  EXPECT_EQ(consumers[0], b.find("t"));
  consumers.clear();
  ASSERT_TRUE(refine_node_types(b.g, b.find("t"), 17, consumers));
  EXPECT_EQ(b.g.value(t).type.rank(), 3);
  // Nothing more to learn: no change, no consumers.
  consumers.clear();
  EXPECT_FALSE(refine_node_types(b.g, b.find("t"), 17, consumers));
  EXPECT_TRUE(consumers.empty());
}

TEST(TypeRefine, ConstantShapeGivesStaticDims) {
  GB b;
  ValueId x = b.input("x", {2, 12});
  ValueId r = b.node("Reshape", {x, b.ivec("s", {4, 3, 2})}, "r");
  b.output(r);
  b.g.value(r).type = ValueType::tensor(DataType::Float);
  std::vector<NodeId> consumers;
  ASSERT_TRUE(refine_node_types(b.g, b.find("r"), 17, consumers));
  auto s = b.g.value(r).type.static_shape();
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(*s, (Shape{4, 3, 2}));
}
