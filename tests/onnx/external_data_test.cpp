// Weights in side files: loading references, rejecting bad ones, and saving with external data.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/util/error.h"
#include "core/onnx/onnx_io.h"
#include "proto_builder.h"
#include "proto_compare.h"

using namespace fusor;
using namespace fusor::test;

namespace {

std::string float_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

void set_external(onnx::TensorProto* t, const std::string& location, int64_t offset, int64_t length) {
  t->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  auto add = [&](const char* k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  if (offset >= 0) add("offset", std::to_string(offset));
  if (length >= 0) add("length", std::to_string(length));
}

// x[2,3] MatMul W[3,2] (external, at offset 64 of weights.bin) + B[2] (external, offset 0)
struct ExternalModel {
  onnx::ModelProto m = make_model();
  std::vector<float> w{1, 2, 3, 4, 5, 6}, b{0.5f, -0.5f};
  ExternalModel() {
    auto* g = m.mutable_graph();
    add_vi(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
    add_vi(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {}, false);
    for (auto [name, dims] : {std::pair<const char*, std::vector<int64_t>>{"W", {3, 2}}, {"B", {2}}}) {
      auto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (auto d : dims) t->add_dims(d);
    }
    set_external(g->mutable_initializer(0), "weights.bin", 64, 24);
    set_external(g->mutable_initializer(1), "weights.bin", 0, -1);
    add_node(g, "MatMul", {"x", "W"}, {"h"}, "mm");
    add_node(g, "Add", {"h", "B"}, {"y"}, "add");
  }
  std::string file_bytes() const { return float_bytes(b) + std::string(56, '\0') + float_bytes(w); }
  std::string write(const TempDir& d) const {
    write_bytes(d.file("weights.bin"), file_bytes());
    return write_model(d, "model.onnx", m);
  }
};

std::string bad_input(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "loaded";
  return {};
}

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

}  // namespace

TEST(ExternalData, LoadsRelativeToTheModel) {
  TempDir d;
  ExternalModel em;
  auto model = load_model(em.write(d));
  const Graph& g = *model->graph;
  const Tensor& w = *g.value(g.find_value("W")).constant;
  ASSERT_EQ(w.shape(), (Shape{3, 2}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(w.data<float>()[i], em.w[i]);
  EXPECT_EQ(g.value(g.find_value("B")).constant->data<float>()[1], -0.5f);
  EXPECT_EQ(g.value(g.find_value("y")).type.str(), "float[2,2]");

  // Saved without external data, the weights are inline and bit-exact.
  onnx::ModelProto saved;
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*model)));
  EXPECT_EQ(saved.graph().initializer(0).raw_data(), float_bytes(em.w));
  EXPECT_FALSE(saved.graph().initializer(0).has_data_location());
}

TEST(ExternalData, BadReferences) {
  TempDir d;
  struct Case {
    const char* location;
    int64_t offset, length;
    const char* expect;
  };
  for (const Case& c : {Case{"missing.bin", 0, 24, "missing.bin"}, Case{"weights.bin", 4096, -1, "offset 4096"},
                        Case{"weights.bin", 64, 20, "length 20"}, Case{"/etc/passwd", 0, -1, "relative"},
                        Case{"../weights.bin", 0, -1, "leaves"}, Case{"weights.bin", 70, -1, "needs 24 bytes"}}) {
    ExternalModel em;
    em.m.mutable_graph()->mutable_initializer(0)->clear_external_data();
    set_external(em.m.mutable_graph()->mutable_initializer(0), c.location, c.offset, c.length);
    std::string path = em.write(d);
    std::string msg = bad_input(path);
    EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    EXPECT_TRUE(contains(msg, "initializer 'W'")) << msg;
    EXPECT_TRUE(contains(msg, c.expect)) << msg;
  }
  ExternalModel em;
  em.m.mutable_graph()->mutable_initializer(0)->clear_external_data();
  em.m.mutable_graph()->mutable_initializer(0)->set_data_location(onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_TRUE(contains(bad_input(em.write(d)), "no 'location'"));
}

TEST(ExternalData, SavesWeightsBesideTheModel) {
  TempDir d;
  auto m = make_model();
  auto* g = m.mutable_graph();
  add_vi(g->mutable_input(), "x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{512}});
  add_vi(g->mutable_output(), "y", onnx::TensorProto::FLOAT, {}, false);
  std::vector<float> big(512 * 4), small{1, 2, 3, 4};
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.25f;
  add_float_init(g, "W", {512, 4}, big);
  add_float_init(g, "B", {4}, small);
  add_node(g, "MatMul", {"x", "W"}, {"h"}, "mm");
  add_node(g, "Add", {"h", "B"}, {"y"}, "add");
  auto model = load_model(write_model(d, "in.onnx", m));

  SaveOptions so;
  so.external_data = true;
  std::string out = d.file("out.onnx");
  save_model(*model, out, so);
  ASSERT_TRUE(std::filesystem::exists(out + ".data"));
  EXPECT_GE(std::filesystem::file_size(out + ".data"), big.size() * 4);
  onnx::ModelProto saved;
  {
    std::ifstream f(out, std::ios::binary);
    ASSERT_TRUE(saved.ParseFromIstream(&f));
  }
  EXPECT_EQ(saved.graph().initializer(0).data_location(), onnx::TensorProto_DataLocation_EXTERNAL);
  EXPECT_EQ(saved.graph().initializer(0).external_data(0).value(), "out.onnx.data");
  EXPECT_FALSE(saved.graph().initializer(1).has_data_location());  // small tensors stay inline

  auto back = load_model(out);
  const Graph& bg = *back->graph;
  EXPECT_TRUE(bg.value(bg.find_value("W")).constant->bit_equal(*model->graph->value(model->graph->find_value("W")).constant));
  ASSERT_TRUE(saved.ParseFromString(serialize_model(*back)));
  EXPECT_EQ(compare_models(m, saved), "");

  // Saving over the model whose side file is still mapped must not corrupt the weights.
  save_model(*back, out, so);
  auto again = load_model(out);
  const Tensor& w = *again->graph->value(again->graph->find_value("W")).constant;
  for (size_t i = 0; i < big.size(); ++i) ASSERT_EQ(w.data<float>()[i], big[i]);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  EXPECT_FALSE(std::filesystem::exists(out + ".data.tmp"));
}
