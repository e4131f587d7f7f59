// The fusor-domain ONNX schemas: a model with each fused op passes onnx::checker::check_model
// (with the fusor opset import), ONNX shape inference infers its output shape (checked against
// shapes worked out by hand in fused_models.h), fusor's own load path records it, and the schemas
// really check (a bad attribute or a missing input is rejected).
#include <gtest/gtest.h>

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/onnx/fusor_schemas.h"
#include "core/onnx/onnx_io.h"
#include "core/ops/fusor_ops.h"
#include "tests/onnx/fused_models.h"

namespace fusor::test {
namespace {

std::vector<int64_t> output_shape(const onnx::ModelProto& m, int i = 0) {
  std::vector<int64_t> out;
  const auto& t = m.graph().output(i).type().tensor_type();
  if (!t.has_shape()) return {-100};
  for (const auto& d : t.shape().dim()) out.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return out;
}

class FusorSchemas : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_fusor_schemas(); }
};

TEST_F(FusorSchemas, EveryCatalogOpHasASchemaAndACase) {
  std::set<std::string> cased;
  for (const auto& c : fused_cases()) cased.insert(c.op);
  for (const auto& sig : fusor_op_signatures()) {
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(sig.name, kFusorOpsetVersion, "fusor");
    ASSERT_NE(s, nullptr) << sig.name;
    EXPECT_EQ(s->inputs().size(), sig.inputs.size()) << sig.name;
    EXPECT_EQ(s->outputs().size(), sig.outputs.size()) << sig.name;
    EXPECT_EQ(s->attributes().size(), sig.attrs.size()) << sig.name;
    EXPECT_TRUE(cased.count(sig.name)) << sig.name << " has no schema test case";
  }
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  ASSERT_TRUE(ranges.count("fusor"));
  EXPECT_EQ(ranges.at("fusor").second, kFusorOpsetVersion);
}

TEST_F(FusorSchemas, DefaultsComeFromTheCatalog) {
  const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema("LayerNorm", 1, "fusor");
  ASSERT_NE(s, nullptr);
  EXPECT_FLOAT_EQ(s->attributes().at("epsilon").default_value.f(), 1e-5f);
  EXPECT_EQ(s->attributes().at("axis").default_value.i(), -1);
  const onnx::OpSchema* p = onnx::OpSchemaRegistry::Schema("NhwcMaxPool", 1, "fusor");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->attributes().at("kernel_shape").required);
}

TEST_F(FusorSchemas, CheckerAcceptsAndInferenceShapesEachFusedOp) {
  for (const auto& c : fused_cases()) {
    onnx::ModelProto m = fused_model(c);
    EXPECT_NO_THROW(onnx::checker::check_model(m)) << c.op;
    onnx::ShapeInferenceOptions strict(true, 1, false);  // type checks on, errors thrown
    EXPECT_NO_THROW(onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), strict)) << c.op;
    for (int i = 0; i < c.num_outputs; ++i) {
      EXPECT_EQ(output_shape(m, i), c.expected) << c.op << " output " << i;
      EXPECT_EQ(m.graph().output(i).type().tensor_type().elem_type(), c.out_elem) << c.op;
    }
  }
}

TEST_F(FusorSchemas, FusorsLoadPathRecordsTheInferredShapes) {
  TempDir dir;
  for (const auto& c : fused_cases()) {
    const std::string path = write_model(dir, c.op + ".onnx", fused_model(c));
    auto model = load_model(path);  // inference in a forked child, schemas registered before
    const Graph& g = *model->graph;
    const ValueType& y = g.value(g.outputs()[0]).type;
    ASSERT_TRUE(y.has_shape) << c.op;
    std::vector<int64_t> dims;
    for (const auto& d : y.dims) dims.push_back(d.value);
    EXPECT_EQ(dims, c.expected) << c.op;
  }
}

TEST_F(FusorSchemas, CheckerRejectsWhatTheSchemaForbids) {
  const auto cases = fused_cases();
  // An attribute the op does not have.
  onnx::ModelProto bad_attr = fused_model(cases[0]);
  *bad_attr.mutable_graph()->mutable_node(0)->add_attribute() = attr_i("not_an_attr", 1);
  EXPECT_THROW(onnx::checker::check_model(bad_attr), onnx::checker::ValidationError);
  // A required input left out (LayerNorm without Scale).
  onnx::ModelProto missing = fused_model(cases[7]);
  ASSERT_EQ(missing.graph().node(0).op_type(), "LayerNorm");
  missing.mutable_graph()->mutable_node(0)->mutable_input()->DeleteSubrange(1, 2);
  EXPECT_THROW(onnx::checker::check_model(missing), onnx::checker::ValidationError);
  // A type outside the constraint (int64 X for Silu).
  onnx::ModelProto bad_type = fused_model(cases[6]);
  ASSERT_EQ(bad_type.graph().node(0).op_type(), "Silu");
  bad_type.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  onnx::ShapeInferenceOptions strict(true, 1, false);
  EXPECT_ANY_THROW(onnx::shape_inference::InferShapes(bad_type, onnx::OpSchemaRegistry::Instance(), strict));
}

TEST_F(FusorSchemas, NhwcConvSameUpperAndSymbolicBatch) {
  FusedCase c{"NhwcConv", {{1, 9, 7, 6}, {8, 3, 3, 3}}, {"X", "W"}, 1, {1, 5, 4, 8},
              {attr_s("auto_pad", "SAME_UPPER"), attr_ints("strides", {2, 2}), attr_i("group", 2)}};
  onnx::ModelProto m = fused_model(c);
  // Batch as a symbol: it must survive the channels-first round trip.
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("N");
  // The declared output dims carry nothing (no value, no name): what inference gives stands.
  for (auto& d : *m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim())
    d.clear_dim_param();
  onnx::checker::check_model(m);
  onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(true, 1, false));
  const auto& shape = m.graph().output(0).type().tensor_type().shape();
  ASSERT_EQ(shape.dim_size(), 4);
  EXPECT_EQ(shape.dim(0).dim_param(), "N");
  EXPECT_EQ(shape.dim(1).dim_value(), 5);  // ceil(9 / 2)
  EXPECT_EQ(shape.dim(2).dim_value(), 4);  // ceil(7 / 2)
  EXPECT_EQ(shape.dim(3).dim_value(), 8);
}

TEST(FusorSchemasRegistration, IdempotentAndThreadSafe) {
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i) ts.emplace_back([] { register_fusor_schemas(); register_fusor_schemas(); });
  for (auto& t : ts) t.join();
  EXPECT_NE(onnx::OpSchemaRegistry::Schema("Attention", 1, "fusor"), nullptr);
}

}  // namespace
}  // namespace fusor::test

namespace fusor::test {
namespace {

// A rule that fuses a Relu writes activation_params = [] (Relu has no parameters). The checker
// rejects an empty list attribute, so fusor-domain nodes leave it out on save (the schema default
// is the empty list): found by the Python package's saved-model test.
TEST_F(FusorSchemas, EmptyListAttributeOfAFusedOpIsLeftOutOnSave) {
  for (const auto& c : fused_cases()) {
    if (c.op != "FusedConv") continue;
    std::string bytes;
    ASSERT_TRUE(fused_model(c).SerializeToString(&bytes));
    auto model = load_model_from_bytes(bytes);
    Graph& g = *model->graph;
    Node& n = g.node(g.order().front());
    n.set_attr(Attribute::make_string("activation", "Relu"));
    n.set_attr(Attribute::make_floats("activation_params", {}));
    onnx::ModelProto saved;
    ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
    EXPECT_NO_THROW(onnx::checker::check_model(saved));
    bool has_params = false;
    for (const auto& a : saved.graph().node(0).attribute()) has_params |= a.name() == "activation_params";
    EXPECT_FALSE(has_params);
    return;
  }
  FAIL() << "no FusedConv case in fused_cases()";
}

}  // namespace
}  // namespace fusor::test
