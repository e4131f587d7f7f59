// Bad input: each case is a one-line BadInput naming the file and, where there is one, the node.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "proto_builder.h"

using namespace fusor;
using namespace fusor::test;

namespace {

// a -> Relu(r1) -> b -> Neg(n1) -> c
onnx::ModelProto chain() {
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "a", onnx::TensorProto::FLOAT, {int64_t{4}});
  add_vi(g->mutable_output(), "c", onnx::TensorProto::FLOAT, {int64_t{4}});
  add_node(g, "Relu", {"a"}, {"b"}, "r1");
  add_node(g, "Neg", {"b"}, {"c"}, "n1");
  return m;
}

// Loads the file and returns the BadInput message; fails the test on success or another error.
std::string bad_input_message(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "message is not one line: " << msg;
    EXPECT_EQ(msg.rfind(path, 0), 0u) << "message does not start with the file: " << msg;
    return msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a fusor::Error: " << e.what();
    return {};
  }
  ADD_FAILURE() << path << " loaded";
  return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST(BadInput, MissingFile) {
  TempDir d;
  std::string msg = bad_input_message(d.file("nope.onnx"));
  EXPECT_TRUE(contains(msg, "No such file")) << msg;
}

TEST(BadInput, Directory) {
  TempDir d;
  bad_input_message(d.path.string());
}

TEST(BadInput, TruncatedFileAtEveryTenthOfItsLength) {
  TempDir d;
  auto m = chain();
  add_float_init(m.mutable_graph(), "unused", {64}, std::vector<float>(64, 1.0f));
  std::string bytes = m.SerializeAsString();
  for (int k = 1; k < 10; ++k) {
    std::string p = d.file("trunc" + std::to_string(k) + ".onnx");
    write_bytes(p, bytes.substr(0, bytes.size() * static_cast<size_t>(k) / 10));
    bad_input_message(p);
  }
  // Cut one byte short.
  std::string p = d.file("short.onnx");
  write_bytes(p, bytes.substr(0, bytes.size() - 1));
  std::string msg = bad_input_message(p);
  EXPECT_TRUE(contains(msg, "truncated")) << msg;
}

TEST(BadInput, GarbageAndEmptyFiles) {
  TempDir d;
  std::string text = d.file("text.onnx");
  write_bytes(text, "this is not an ONNX model at all\n");
  EXPECT_TRUE(contains(bad_input_message(text), "not a valid ONNX model"));
  std::string empty = d.file("empty.onnx");
  write_bytes(empty, "");
  EXPECT_TRUE(contains(bad_input_message(empty), "empty file (0 bytes), not an ONNX model"));
  std::string noise = d.file("noise.onnx");
  std::string bytes;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1664525u + 1013904223u;
    bytes += static_cast<char>(x >> 24);
  }
  write_bytes(noise, bytes);
  bad_input_message(noise);
  // A valid protobuf of another message kind (a TensorProto) is not a model either.
  onnx::TensorProto t;
  t.set_data_type(1);
  t.add_dims(1);
  t.add_float_data(1);
  std::string tensor = d.file("tensor.onnx");
  write_bytes(tensor, t.SerializeAsString());
  bad_input_message(tensor);
}

TEST(BadInput, CycleNamesANodeOnIt) {
  TempDir d;
  auto m = chain();
  // r1 now reads c, which n1 produces from r1's output.
  m.mutable_graph()->mutable_node(0)->set_input(0, "c");
  add_node(m.mutable_graph(), "Identity", {"a"}, {"unrelated"}, "ok");
  std::string msg = bad_input_message(write_model(d, "cycle.onnx", m));
  EXPECT_TRUE(contains(msg, "cycle")) << msg;
  EXPECT_TRUE(contains(msg, "node 'r1' (Relu)") || contains(msg, "node 'n1' (Neg)")) << msg;

  // Unnamed nodes are named by an output.
  m.mutable_graph()->mutable_node(0)->clear_name();
  m.mutable_graph()->mutable_node(1)->clear_name();
  msg = bad_input_message(write_model(d, "cycle2.onnx", m));
  EXPECT_TRUE(contains(msg, "producing 'b'") || contains(msg, "producing 'c'")) << msg;
}

TEST(BadInput, DanglingInput) {
  TempDir d;
  auto m = chain();
  m.mutable_graph()->mutable_node(1)->add_input("ghost");
  std::string msg = bad_input_message(write_model(d, "dangling.onnx", m));
  EXPECT_TRUE(contains(msg, "node 'n1' (Neg)")) << msg;
  EXPECT_TRUE(contains(msg, "'ghost'")) << msg;
}

TEST(BadInput, DanglingInputInsideASubgraph) {
  TempDir d;
  auto m = chain();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "cond", onnx::TensorProto::BOOL, {});
  auto* iff = add_node(g, "If", {"cond"}, {"d"}, "branch");
  for (const char* b : {"then_branch", "else_branch"}) {
    auto* at = iff->add_attribute();
    at->set_name(b);
    at->set_type(onnx::AttributeProto::GRAPH);
    add_node(at->mutable_g(), "Abs", {"phantom"}, {std::string("o_") + b}, std::string("abs_") + b);
    add_vi(at->mutable_g()->mutable_output(), std::string("o_") + b, onnx::TensorProto::FLOAT, {}, false);
  }
  add_vi(g->mutable_output(), "d", onnx::TensorProto::FLOAT, {}, false);
  std::string msg = bad_input_message(write_model(d, "sub.onnx", m));
  EXPECT_TRUE(contains(msg, "node 'branch' (If)")) << msg;
  EXPECT_TRUE(contains(msg, "node 'abs_then_branch' (Abs)")) << msg;
  EXPECT_TRUE(contains(msg, "'phantom'")) << msg;
}

TEST(BadInput, UndefinedGraphOutput) {
  TempDir d;
  auto m = chain();
  add_vi(m.mutable_graph()->mutable_output(), "nowhere", onnx::TensorProto::FLOAT, {}, false);
  EXPECT_TRUE(contains(bad_input_message(write_model(d, "out.onnx", m)), "'nowhere'"));
}

TEST(BadInput, TwoProducersOfOneValue) {
  TempDir d;
  auto m = chain();
  add_node(m.mutable_graph(), "Abs", {"a"}, {"b"}, "dup");
  std::string msg = bad_input_message(write_model(d, "dup.onnx", m));
  EXPECT_TRUE(contains(msg, "'b'")) << msg;
  EXPECT_TRUE(contains(msg, "node 'dup' (Abs)")) << msg;
}

TEST(BadInput, InitializerDataSizeMismatch) {
  TempDir d;
  auto m = chain();
  auto* t = add_float_init(m.mutable_graph(), "weights", {2, 3}, std::vector<float>(5, 1.0f));
  std::string msg = bad_input_message(write_model(d, "raw.onnx", m));
  EXPECT_TRUE(contains(msg, "initializer 'weights'")) << msg;
  EXPECT_TRUE(contains(msg, "24 bytes")) << msg;
  EXPECT_TRUE(contains(msg, "20")) << msg;

  t->clear_raw_data();
  for (int i = 0; i < 7; ++i) t->add_float_data(1.0f);
  msg = bad_input_message(write_model(d, "typed.onnx", m));
  EXPECT_TRUE(contains(msg, "initializer 'weights'")) << msg;
  EXPECT_TRUE(contains(msg, "float_data")) << msg;
}

TEST(BadInput, ConstantTensorSizeMismatch) {
  TempDir d;
  auto m = chain();
  auto* n = add_node(m.mutable_graph(), "Constant", {}, {"k"}, "konst");
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(3);
  a->mutable_t()->add_int64_data(1);
  std::string msg = bad_input_message(write_model(d, "const.onnx", m));
  EXPECT_TRUE(contains(msg, "node 'konst' (Constant)")) << msg;
  EXPECT_TRUE(contains(msg, "attribute 'value'")) << msg;
  EXPECT_TRUE(contains(msg, "int64_data has 1")) << msg;
}

TEST(BadInput, UnsupportedDataTypeAndNegativeDims) {
  TempDir d;
  auto m = chain();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("odd");
  t->set_data_type(99);
  EXPECT_TRUE(contains(bad_input_message(write_model(d, "dtype.onnx", m)), "data type 99"));
  t->set_data_type(1);
  t->add_dims(-2);
  EXPECT_TRUE(contains(bad_input_message(write_model(d, "neg.onnx", m)), "negative"));
}

TEST(BadInput, FromBytesNamesTheGivenName) {
  try {
    load_model_from_bytes("garbage!", {}, "stdin.onnx");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_EQ(std::string(e.what()).rfind("stdin.onnx: ", 0), 0u) << e.what();
  }
}
