// Import: types from shape inference, tensors from every TensorProto field, attributes,
// subgraph captures, ordering, custom ops, and what the IR does not model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <atomic>
#include <map>
#include <thread>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "proto_builder.h"
#include "proto_compare.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::unique_ptr<Model> load_proto(const onnx::ModelProto& m, const LoadOptions& o = {}) {
  return load_model_from_bytes(m.SerializeAsString(), o, "mem.onnx");
}

const Value& value_named(const Graph& g, const std::string& n) {
  ValueId v = g.find_value(n);
  EXPECT_NE(v, kNoValue) << n;
  return g.value(v);
}

// x[N,3] -> MatMul(W[3,4]) -> Add(b[4]) -> Relu -> y
onnx::ModelProto mlp() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  add_vi(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {}, false);
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = 0.5f * static_cast<float>(i) - 1.0f;
  add_float_init(g, "W", {3, 4}, w);
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(4);
  for (float v : {1.0f, -2.0f, 3.5f, 0.25f}) b->add_float_data(v);
  add_node(g, "MatMul", {"x", "W"}, {"h"}, "mm");
  add_node(g, "Add", {"h", "b"}, {"z"}, "add");
  add_node(g, "Relu", {"z"}, {"y"}, "relu");
  return m;
}

}  // namespace

TEST(Import, InfersTypesWithSymbolicDims) {
  auto model = load_proto(mlp());
  const Graph& g = *model->graph;
  g.verify();
  EXPECT_EQ(g.num_nodes(), 3u);
  EXPECT_EQ(value_named(g, "h").type.str(), "float[N,4]");
  EXPECT_EQ(value_named(g, "z").type.str(), "float[N,4]");
  EXPECT_EQ(value_named(g, "y").type.str(), "float[N,4]");
  EXPECT_EQ(value_named(g, "W").type.str(), "float[3,4]");
  EXPECT_EQ(model->opset(""), 17);
  EXPECT_EQ(model->producer_name, "fusor-test");
}

TEST(Import, WithoutInferenceKeepsDeclaredTypesOnly) {
  LoadOptions o;
  o.infer_shapes = false;
  auto model = load_proto(mlp(), o);
  EXPECT_EQ(value_named(*model->graph, "h").type.elem, DataType::Undefined);
  EXPECT_EQ(value_named(*model->graph, "x").type.str(), "float[N,3]");
}

TEST(Import, InitializersFromRawAndTypedFields) {
  auto model = load_proto(mlp());
  const Graph& g = *model->graph;
  const Tensor& w = *value_named(g, "W").constant;
  ASSERT_EQ(w.shape(), (Shape{3, 4}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(w.data<float>()[i], 0.5f * static_cast<float>(i) - 1.0f);
  const Tensor& b = *value_named(g, "b").constant;
  EXPECT_EQ(b.data<float>()[2], 3.5f);
  EXPECT_TRUE(value_named(g, "W").is_constant_initializer());
}

TEST(Import, EveryTypedDataField) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto add = [&](const std::string& name, int type, std::vector<int64_t> dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    for (auto d : dims) t->add_dims(d);
    add_vi(g->mutable_output(), name, 0, {});
    return t;
  };
  auto* i64 = add("i64", onnx::TensorProto::INT64, {2});
  i64->add_int64_data(-5);
  i64->add_int64_data(int64_t{1} << 40);
  auto* i8 = add("i8", onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127}) i8->add_int32_data(v);
  auto* bl = add("bool", onnx::TensorProto::BOOL, {2});
  bl->add_int32_data(1);
  bl->add_int32_data(0);
  auto* f16 = add("f16", onnx::TensorProto::FLOAT16, {1});
  f16->add_int32_data(0x3c00);  // 1.0 in half precision
  auto* dbl = add("dbl", onnx::TensorProto::DOUBLE, {1});
  dbl->add_double_data(2.5);
  auto* u64 = add("u64", onnx::TensorProto::UINT64, {1});
  u64->add_uint64_data(~uint64_t{0});
  auto* u32 = add("u32", onnx::TensorProto::UINT32, {1});
  u32->add_uint64_data(4000000000u);
  auto* s = add("str", onnx::TensorProto::STRING, {2});
  s->add_string_data("hello");
  s->add_string_data(std::string("a\0b", 3));
  auto* c64 = add("c64", onnx::TensorProto::COMPLEX64, {1});
  c64->add_float_data(1.5f);
  c64->add_float_data(-2.0f);
  auto* scalar = add("scalar", onnx::TensorProto::INT32, {});
  scalar->add_int32_data(7);

  auto model = load_proto(m);
  const Graph& gr = *model->graph;
  auto t = [&](const char* n) -> const Tensor& { return *value_named(gr, n).constant; };
  EXPECT_EQ(t("i64").data<int64_t>()[0], -5);
  EXPECT_EQ(t("i64").data<int64_t>()[1], int64_t{1} << 40);
  EXPECT_EQ(t("i8").data<int8_t>()[0], -128);
  EXPECT_EQ(t("i8").data<int8_t>()[2], 127);
  EXPECT_EQ(t("bool").data<uint8_t>()[0], 1);
  EXPECT_EQ(t("bool").data<uint8_t>()[1], 0);
  EXPECT_EQ(t("f16").data<uint16_t>()[0], 0x3c00);
  EXPECT_EQ(t("dbl").data<double>()[0], 2.5);
  EXPECT_EQ(t("u64").data<uint64_t>()[0], ~uint64_t{0});
  EXPECT_EQ(t("u32").data<uint32_t>()[0], 4000000000u);
  EXPECT_EQ(t("str").string_data()[1], std::string("a\0b", 3));
  EXPECT_EQ(t("c64").data<float>()[1], -2.0f);
  EXPECT_EQ(t("scalar").rank(), 0);
  EXPECT_EQ(t("scalar").data<int32_t>()[0], 7);

  // Saved as raw_data (strings as string_data), the values come back identical.
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
  for (const auto& init : saved.graph().initializer())
    EXPECT_EQ(init.has_raw_data(), init.data_type() != onnx::TensorProto::STRING) << init.name();
}

TEST(Import, AttributesOfEveryKind) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {int64_t{2}});
  add_vi(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {}, false);
  auto* n = add_node(g, "Custom", {"x"}, {"y"}, "c");
  n->set_domain("com.example");
  n->set_doc_string("a custom op");
  auto attr = [&](const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  };
  attr("f", onnx::AttributeProto::FLOAT)->set_f(-0.0f);
  attr("i", onnx::AttributeProto::INT)->set_i(-3);
  attr("s", onnx::AttributeProto::STRING)->set_s("text");
  auto* fs = attr("fs", onnx::AttributeProto::FLOATS);
  fs->add_floats(1.25f);
  fs->add_floats(std::numeric_limits<float>::infinity());
  auto* is = attr("is", onnx::AttributeProto::INTS);
  is->add_ints(1);
  is->add_ints(-1);
  auto* ss = attr("ss", onnx::AttributeProto::STRINGS);
  ss->add_strings("p");
  ss->add_strings("q");
  auto* t = attr("t", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(1);
  t->add_int64_data(42);
  auto* ts = attr("ts", onnx::AttributeProto::TENSORS);
  ts->add_tensors()->CopyFrom(*t);
  auto* tp = attr("tp", onnx::AttributeProto::TYPE_PROTO)->mutable_tp();
  set_tensor_type(tp, onnx::TensorProto::FLOAT, {int64_t{3}});
  auto* sp = attr("sp", onnx::AttributeProto::SPARSE_TENSOR)->mutable_sparse_tensor();
  sp->add_dims(4);
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(1);
  sp->mutable_values()->add_float_data(9);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(2);
  auto* untyped = n->add_attribute();  // old models leave the type unset
  untyped->set_name("untyped");
  untyped->set_i(5);

  auto model = load_proto(m);
  const Graph& gr = *model->graph;
  const Node& node = gr.node(gr.first());
  EXPECT_EQ(node.op, OpType("com.example", "Custom"));
  EXPECT_EQ(node.domain, "com.example");
  EXPECT_EQ(node.doc_string, "a custom op");
  EXPECT_TRUE(std::signbit(node.attr("f")->f));
  EXPECT_EQ(node.attr_int("i", 0), -3);
  EXPECT_EQ(node.attr_string("s", ""), "text");
  EXPECT_EQ(node.attr_floats("fs")[0], 1.25f);
  EXPECT_EQ(node.attr_ints("is"), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(node.attr("ss")->strings, (std::vector<std::string>{"p", "q"}));
  EXPECT_EQ(node.attr("t")->t->data<int64_t>()[0], 42);
  EXPECT_EQ(node.attr("ts")->tensors.size(), 1u);
  EXPECT_EQ(node.attr("tp")->kind, AttrKind::Opaque);
  EXPECT_EQ(node.attr("sp")->kind, AttrKind::Opaque);
  EXPECT_EQ(node.attr_int("untyped", 0), 5);

  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
  EXPECT_EQ(saved.graph().node(0).attribute(10).type(), onnx::AttributeProto::INT);
}

TEST(Import, DomainAsWrittenAndCanonicalOpType) {
  auto m = mlp();
  m.mutable_graph()->mutable_node(2)->set_domain("ai.onnx");
  auto model = load_proto(m);
  const Graph& g = *model->graph;
  NodeId relu = g.order()[2];
  EXPECT_EQ(g.node(relu).op, OpType::onnx("Relu"));
  EXPECT_EQ(g.node(relu).domain, "ai.onnx");
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(saved.graph().node(2).domain(), "ai.onnx");
}

TEST(Import, UnsortedNodesAreSortedStably) {
  auto m = mlp();
  auto* nodes = m.mutable_graph()->mutable_node();
  nodes->SwapElements(0, 2);  // relu, add, mm
  auto model = load_proto(m);
  const Graph& g = *model->graph;
  std::vector<std::string> names;
  for (NodeId n : g.order()) names.push_back(g.node(n).name);
  EXPECT_EQ(names, (std::vector<std::string>{"mm", "add", "relu"}));
  g.verify();
}

// If whose branches read outer values, one of them through a nested If (two capture levels).
TEST(Import, SubgraphsCaptureOuterValues) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  add_vi(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {int64_t{2}});
  add_vi(g->mutable_output(), "out", onnx::TensorProto::FLOAT, {}, false);
  add_node(g, "Neg", {"a"}, {"na"}, "neg");
  auto* iff = add_node(g, "If", {"cond"}, {"out"}, "if");
  auto* then_attr = iff->add_attribute();
  then_attr->set_name("then_branch");
  then_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* tg = then_attr->mutable_g();
  tg->set_name("then");
  add_node(tg, "Relu", {"na"}, {"t_out"}, "t_relu");
  add_vi(tg->mutable_output(), "t_out", onnx::TensorProto::FLOAT, {}, false);
  auto* else_attr = iff->add_attribute();
  else_attr->set_name("else_branch");
  else_attr->set_type(onnx::AttributeProto::GRAPH);
  auto* eg = else_attr->mutable_g();
  eg->set_name("else");
  auto* inner = add_node(eg, "If", {"cond"}, {"e_out"}, "inner_if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* at = inner->add_attribute();
    at->set_name(branch);
    at->set_type(onnx::AttributeProto::GRAPH);
    auto* ig = at->mutable_g();
    ig->set_name(std::string("inner_") + branch);
    add_node(ig, "Abs", {"a"}, {std::string("i_") + branch}, std::string("abs_") + branch);
    add_vi(ig->mutable_output(), std::string("i_") + branch, onnx::TensorProto::FLOAT, {}, false);
  }
  add_vi(eg->mutable_output(), "e_out", onnx::TensorProto::FLOAT, {}, false);

  auto model = load_proto(m);
  Graph& main = *model->graph;
  main.verify();
  NodeId if_id = main.order()[1];
  const Node& ifn = main.node(if_id);
  ASSERT_EQ(main.subgraphs(if_id).size(), 2u);
  Graph* then_g = main.subgraphs(if_id)[0];
  Graph* else_g = main.subgraphs(if_id)[1];
  EXPECT_EQ(then_g->parent(), &main);
  // then reads na; else (through its nested If) reads a; cond is an explicit input.
  std::vector<std::string> implicit;
  for (ValueId v : ifn.implicit_inputs) implicit.push_back(main.value(v).name);
  std::sort(implicit.begin(), implicit.end());
  EXPECT_EQ(implicit, (std::vector<std::string>{"a", "cond", "na"}));
  ValueId cap = then_g->find_value("na");
  ASSERT_NE(cap, kNoValue);
  EXPECT_EQ(then_g->value(cap).captured_from, main.find_value("na"));
  // Two levels: the nested branch captures else's capture, which captures main's a.
  NodeId inner_id = else_g->first();
  Graph* inner_then = else_g->subgraphs(inner_id)[0];
  ValueId ia = inner_then->find_value("a");
  ASSERT_NE(ia, kNoValue);
  ValueId ea = inner_then->value(ia).captured_from;
  EXPECT_EQ(else_g->value(ea).name, "a");
  EXPECT_EQ(else_g->value(ea).captured_from, main.find_value("a"));
  EXPECT_EQ(inner_then->value(ia).type.str(), "float[2]");
  // Values inside the branches are typed by inference too.
  EXPECT_EQ(then_g->value(then_g->find_value("t_out")).type.str(), "float[2]");
  EXPECT_EQ(inner_then->value(inner_then->find_value("i_then_branch")).type.str(), "float[2]");
  // Output type of the If comes from inference over the branches.
  EXPECT_EQ(value_named(main, "out").type.elem, DataType::Float);

  // infer_shapes re-types values inside subgraphs after a rewrite forgot them.
  then_g->value(then_g->find_value("t_out")).type = ValueType{};
  main.value(main.find_value("out")).type = ValueType{};
  infer_shapes(*model);
  EXPECT_EQ(then_g->value(then_g->find_value("t_out")).type.str(), "float[2]");
  EXPECT_EQ(value_named(main, "out").type.elem, DataType::Float);

  // A rename of the outer value is what the subgraph exports.
  main.rename_value(main.find_value("na"), "negated");
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(saved.graph().node(1).attribute(0).g().node(0).input(0), "negated");
  main.rename_value(main.find_value("negated"), "na");
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, SubgraphOutputMayBeAnOuterValue) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  add_vi(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {int64_t{2}});
  add_vi(g->mutable_output(), "out", onnx::TensorProto::FLOAT, {}, false);
  auto* iff = add_node(g, "If", {"cond"}, {"out"}, "if");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* at = iff->add_attribute();
    at->set_name(branch);
    at->set_type(onnx::AttributeProto::GRAPH);
    at->mutable_g()->set_name(branch);
    add_vi(at->mutable_g()->mutable_output(), "a", onnx::TensorProto::FLOAT, {int64_t{2}});
  }
  auto model = load_proto(m);
  model->graph->verify();
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, CustomOpsWithoutSchemasLoadAndRoundTrip) {
  auto m = mlp();
  auto* op = m.add_opset_import();
  op->set_domain("com.microsoft");
  op->set_version(1);
  auto* n = m.mutable_graph()->mutable_node(2);
  n->set_op_type("FusedThing");
  n->set_domain("com.microsoft");
  auto model = load_proto(m);
  EXPECT_EQ(model->opset("com.microsoft"), 1);
  // Inference still typed what precedes the unknown op.
  EXPECT_EQ(value_named(*model->graph, "z").type.str(), "float[N,4]");
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, UnmodeledFieldsRoundTrip) {
  auto m = mlp();
  m.set_doc_string("model doc");
  m.set_domain("org.test");
  m.set_model_version(3);
  m.set_producer_version("1.2");
  auto* md = m.add_metadata_props();
  md->set_key("author");
  md->set_value("me");
  auto* fn = m.add_functions();
  fn->set_name("MyFn");
  fn->set_domain("local");
  fn->add_input("u");
  fn->add_output("v");
  auto* fnode = fn->add_node();
  fnode->set_op_type("Relu");
  fnode->add_input("u");
  fnode->add_output("v");
  fn->add_opset_import()->set_version(17);
  auto* ti = m.add_training_info();
  ti->mutable_algorithm()->set_name("train");
  auto* g = m.mutable_graph();
  g->set_doc_string("graph doc");
  g->mutable_input(0)->set_doc_string("the input");
  auto* sp = g->add_sparse_initializer();
  sp->add_dims(8);
  sp->mutable_values()->set_name("S");
  sp->mutable_values()->set_data_type(onnx::TensorProto::FLOAT);
  sp->mutable_values()->add_dims(1);
  sp->mutable_values()->add_float_data(4);
  sp->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sp->mutable_indices()->add_dims(1);
  sp->mutable_indices()->add_int64_data(3);
  add_node(g, "Identity", {"S"}, {"s_copy"}, "use_sparse");
  add_vi(g->mutable_output(), "s_copy", onnx::TensorProto::FLOAT, {}, false);
  auto* qa = g->add_quantization_annotation();
  qa->set_tensor_name("W");
  auto* q = qa->add_quant_parameter_tensor_names();
  q->set_key("SCALE_TENSOR");
  q->set_value("b");

  auto model = load_proto(m);
  EXPECT_FALSE(model->opaque_extras.empty());
  EXPECT_FALSE(model->graph->opaque_extras.empty());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
  EXPECT_EQ(saved.graph().input(0).doc_string(), "the input");
}

TEST(Import, SequenceTypesAreModelledAndRoundTrip) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("seq");
  set_tensor_type(in->mutable_type()->mutable_sequence_type()->mutable_elem_type(), onnx::TensorProto::FLOAT,
                  {std::string("K")});
  add_vi(g->mutable_output(), "n", onnx::TensorProto::INT64, {}, false);
  add_node(g, "SequenceLength", {"seq"}, {"n"}, "len");
  auto model = load_proto(m);
  const Value& seq = value_named(*model->graph, "seq");
  EXPECT_FALSE(seq.type.is_tensor());
  ASSERT_TRUE(seq.type.is_sequence());
  ASSERT_TRUE(seq.type.element);
  EXPECT_EQ(seq.type.element->dims.at(0).param, "K");
  EXPECT_EQ(seq.type.str(), "seq(float[K])");
  EXPECT_EQ(value_named(*model->graph, "n").type.str(), "int64[]");
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, OptionalOfSequenceIsModelled) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("opt");
  set_tensor_type(in->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()
                      ->mutable_elem_type(),
                  onnx::TensorProto::INT64, {int64_t{3}});
  add_vi(g->mutable_output(), "has", onnx::TensorProto::BOOL, {}, false);
  add_node(g, "OptionalHasElement", {"opt"}, {"has"}, "h");
  auto model = load_proto(m);
  const Value& opt = value_named(*model->graph, "opt");
  ASSERT_TRUE(opt.type.is_optional());
  EXPECT_EQ(opt.type.str(), "optional(seq(int64[3]))");
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, MapTypesStayOpaque) {
  auto m = make_model();
  auto* g = m.mutable_graph();
  auto* in = g->add_input();
  in->set_name("map");
  auto* mt = in->mutable_type()->mutable_map_type();
  mt->set_key_type(onnx::TensorProto::INT64);
  set_tensor_type(mt->mutable_value_type(), onnx::TensorProto::FLOAT, {});
  add_vi(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {int64_t{2}});
  add_vi(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {int64_t{2}});
  add_node(g, "Identity", {"x"}, {"y"}, "id");
  auto model = load_proto(m);
  const Value& map = value_named(*model->graph, "map");
  EXPECT_EQ(map.type.kind, TypeKind::Opaque);
  onnx::TypeProto back;
  ASSERT_TRUE(back.ParseFromString(map.type.opaque));
  EXPECT_EQ(back.map_type().key_type(), onnx::TensorProto::INT64);
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, InitializerThatIsAlsoAnInput) {
  auto m = mlp();
  m.set_ir_version(3);
  add_vi(m.mutable_graph()->mutable_input(), "W", onnx::TensorProto::FLOAT, {int64_t{3}, int64_t{4}});
  auto model = load_proto(m);
  const Value& w = value_named(*model->graph, "W");
  EXPECT_TRUE(w.is_graph_input);
  EXPECT_TRUE(w.is_initializer());
  EXPECT_FALSE(w.is_constant_initializer());
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(compare_models(m, saved), "");
}

TEST(Import, InferShapesAfterARewrite) {
  auto model = load_proto(mlp());
  Graph& g = *model->graph;
  // Append Transpose(y) as a new output and forget every intermediate type.
  ValueId y = g.find_value("y");
  NodeId t = g.create_node(OpType::onnx("Transpose"), {y}, 1, {}, "tr");
  ValueId yt = g.node(t).outputs[0];
  g.add_output(yt);
  for (const char* n : {"h", "z"}) g.value(g.find_value(n)).type = ValueType{};
  infer_shapes(*model);
  EXPECT_EQ(g.value(yt).type.str(), "float[4,N]");
  EXPECT_EQ(value_named(g, "h").type.str(), "float[N,4]");
  // With a dim override the symbol becomes a number everywhere downstream.
  ShapeOverrides ov;
  ov.dims.push_back({"N", 8});
  infer_shapes(*model, ov);
  EXPECT_EQ(g.value(yt).type.str(), "float[4,8]");
  EXPECT_EQ(value_named(g, "x").type.str(), "float[8,3]");
}

TEST(Overrides, ParseDimAndShape) {
  EXPECT_EQ(parse_dim_override("batch=4"), (std::pair<std::string, int64_t>{"batch", 4}));
  auto s = parse_shape_override("input=1x3x224x224");
  EXPECT_EQ(s.first, "input");
  EXPECT_EQ(s.second, (Shape{1, 3, 224, 224}));
  EXPECT_EQ(parse_shape_override("a:0=2,5").second, (Shape{2, 5}));
  EXPECT_EQ(parse_shape_override("x=scalar").second, Shape{});
  for (const char* bad : {"batch", "=4", "batch=", "batch=-1", "batch=x", "batch=1.5"}) {
    try {
      parse_dim_override(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
    }
  }
  for (const char* bad : {"x", "x=", "=1x2", "x=1xx2", "x=1x-2", "x=ax2"}) {
    try {
      parse_shape_override(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
    }
  }
}

TEST(Overrides, AppliedBeforeInference) {
  LoadOptions o;
  o.overrides.dims.push_back({"N", 2});
  auto model = load_proto(mlp(), o);
  EXPECT_EQ(value_named(*model->graph, "x").type.str(), "float[2,3]");
  EXPECT_EQ(value_named(*model->graph, "y").type.str(), "float[2,4]");

  LoadOptions s;
  s.overrides.shapes.push_back({"x", {7, 3}});
  model = load_proto(mlp(), s);
  EXPECT_EQ(value_named(*model->graph, "y").type.str(), "float[7,4]");
}

TEST(Overrides, UnknownNamesAreUsageErrors) {
  LoadOptions o;
  o.overrides.shapes.push_back({"nope", {1, 3}});
  try {
    load_proto(mlp(), o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("nope"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("inputs: x"), std::string::npos) << e.what();
  }
  LoadOptions d;
  d.overrides.dims.push_back({"M", 1});
  try {
    load_proto(mlp(), d);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("symbolic dims: N"), std::string::npos) << e.what();
  }
  LoadOptions r;
  r.overrides.shapes.push_back({"x", {1, 3, 5}});
  try {
    load_proto(mlp(), r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos) << e.what();
  }
}

TEST(Export, ValueInfoOnRequest) {
  auto model = load_proto(mlp());
  TempDir d;
  SaveOptions so;
  so.value_info = true;
  save_model(*model, d.file("vi.onnx"), so);
  onnx::ModelProto saved;
  std::ifstream f(d.file("vi.onnx"), std::ios::binary);
  ASSERT_TRUE(saved.ParseFromIstream(&f));
  std::map<std::string, std::string> vi;
  for (const auto& v : saved.graph().value_info())
    vi[v.name()] = std::to_string(v.type().tensor_type().elem_type()) + ":" +
                   v.type().tensor_type().shape().dim(0).dim_param() + "x" +
                   std::to_string(v.type().tensor_type().shape().dim(1).dim_value());
  EXPECT_EQ(vi, (std::map<std::string, std::string>{{"h", "1:Nx4"}, {"z", "1:Nx4"}}));
  // Without the option, no value_info is written.
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(saved.graph().value_info_size(), 0);
}

// Loads (each forking a child for shape inference) from several threads at once.
TEST(Import, ConcurrentLoadsFromThreads) {
  std::string bytes = mlp().SerializeAsString();
  std::atomic<int> typed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto m = load_model_from_bytes(bytes, {}, "mem.onnx");
        typed += m->graph->value(m->graph->find_value("y")).type.str() == "float[N,4]";
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(typed.load(), 100);
}
