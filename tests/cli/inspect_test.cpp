// `fusor inspect --json`: one test per key of the report (docs/cli.md), on a model whose counts are
// known by construction (nested_model.h), plus the bundled example checked against onnx in Python.
#include <gtest/gtest.h>

#include "tests/cli/cli_harness.h"
#include "tests/cli/nested_model.h"

namespace fusor::clitest {
namespace {

class InspectJson : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    save_proto(nested_model(), dir_->path("nested.onnx"));
    RunResult r = run_fusor({"inspect", dir_->path("nested.onnx"), "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    report_ = new json::Value(r.json());
  }
  static void TearDownTestSuite() {
    delete report_;
    delete dir_;
  }
  const json::Value& report() { return *report_; }
  static TempDir* dir_;
  static json::Value* report_;
};
TempDir* InspectJson::dir_ = nullptr;
json::Value* InspectJson::report_ = nullptr;

TEST_F(InspectJson, Model) { EXPECT_EQ(report()["model"].as_string(), dir_->path("nested.onnx")); }
TEST_F(InspectJson, IrVersion) { EXPECT_EQ(report()["ir_version"].as_int(), 8); }
TEST_F(InspectJson, Producer) { EXPECT_EQ(report()["producer"].as_string(), "fusor-cli-test 1"); }

TEST_F(InspectJson, Opsets) {
  const json::Value& o = report()["opsets"];
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o["ai.onnx"].as_int(), 13);
  EXPECT_EQ(o["com.example"].as_int(), 1);
}

TEST_F(InspectJson, NodesCountsTopLevelOnly) { EXPECT_EQ(report()["nodes"].as_int(), 5); }
TEST_F(InspectJson, SubgraphNodesCountsAllDepths) { EXPECT_EQ(report()["subgraph_nodes"].as_int(), 6); }
TEST_F(InspectJson, ConstantNodesCountsAllDepths) { EXPECT_EQ(report()["constant_nodes"].as_int(), 2); }

TEST_F(InspectJson, OpsHistogramAllDepthsWithDomains) {
  const json::Value& ops = report()["ops"];
  std::map<std::string, int64_t> want = {{"Add", 2}, {"Constant", 2}, {"If", 2}, {"Identity", 2},
                                         {"MatMul", 1}, {"Neg", 1}, {"com.example.Scale", 1}};
  ASSERT_EQ(ops.size(), want.size()) << ops.dump();
  for (const auto& [op, n] : want) {
    ASSERT_TRUE(ops.contains(op)) << op << " missing from " << ops.dump();
    EXPECT_EQ(ops[op].as_int(), n) << op;
  }
}

TEST_F(InspectJson, InputsExcludeInitializersAndKeepSymbolicDims) {
  const json::Value& in = report()["inputs"];
  ASSERT_EQ(in.size(), 2u) << in.dump();
  EXPECT_EQ(in[0]["name"].as_string(), "X");
  EXPECT_EQ(in[0]["type"].as_string(), "tensor(float)");
  ASSERT_EQ(in[0]["shape"].size(), 2u);
  EXPECT_EQ(in[0]["shape"][0].as_string(), "N");
  EXPECT_EQ(in[0]["shape"][1].as_int(), 4);
  EXPECT_EQ(in[1]["name"].as_string(), "cond");
  EXPECT_EQ(in[1]["type"].as_string(), "tensor(bool)");
  ASSERT_TRUE(in[1]["shape"].is_array());
  EXPECT_EQ(in[1]["shape"].size(), 0u);  // a scalar: rank 0, not unknown
}

TEST_F(InspectJson, Outputs) {
  const json::Value& out = report()["outputs"];
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["name"].as_string(), "z");
  EXPECT_EQ(out[0]["type"].as_string(), "tensor(float)");
  ASSERT_EQ(out[0]["shape"].size(), 2u);
  EXPECT_EQ(out[0]["shape"][0].as_string(), "N");
  EXPECT_EQ(out[0]["shape"][1].as_int(), 4);
}

TEST_F(InspectJson, Initializers) { EXPECT_EQ(report()["initializers"].as_int(), 2); }
TEST_F(InspectJson, InitializerBytes) { EXPECT_EQ(report()["initializer_bytes"].as_int(), 4 * 4 * 4 + 3 * 4); }

TEST(Inspect, DimOverrideReachesInputShapes) {
  RunResult r = run_fusor({"inspect", example_model(), "--json", "--dim", "N=3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::Value in = r.json()["inputs"];
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in[0]["shape"][0].as_int(), 3);
  json::Value out = r.json()["outputs"];
  EXPECT_EQ(out[0]["shape"][0].as_int(), 3) << "shape inference should carry N=3 to the output";
}

TEST(Inspect, ShapeOverrideReachesInputShapes) {
  RunResult r = run_fusor({"inspect", example_model(), "--json", "--shape=input=2x3x224x224"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::Value shape = r.json()["inputs"][0]["shape"];
  ASSERT_EQ(shape.size(), 4u);
  EXPECT_EQ(shape[0].as_int(), 2);
  EXPECT_EQ(shape[3].as_int(), 224);
}

// The bundled example, against the counts onnx itself reports in Python.
TEST(Inspect, ExampleMatchesOnnxInPython) {
  std::string ref = run_python(R"(
import collections, json, sys, onnx
from onnx import numpy_helper
m = onnx.load(sys.argv[1])
inits = {t.name for t in m.graph.initializer}
print(json.dumps({
  "nodes": len(m.graph.node),
  "ops": collections.Counter(n.op_type for n in m.graph.node),
  "initializer_bytes": sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer),
  "inputs": [i.name for i in m.graph.input if i.name not in inits],
  "outputs": [o.name for o in m.graph.output],
}))
)", {example_model()});
  json::Value want = json::parse(ref);
  RunResult r = run_fusor({"inspect", example_model(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::Value got = r.json();
  EXPECT_EQ(got["nodes"].as_int(), want["nodes"].as_int());
  EXPECT_EQ(got["subgraph_nodes"].as_int(), 0);
  EXPECT_EQ(got["initializer_bytes"].as_int(), want["initializer_bytes"].as_int());
  ASSERT_EQ(got["ops"].size(), want["ops"].size()) << got["ops"].dump();
  for (const auto& [op, n] : want["ops"].as_object()) {
    ASSERT_TRUE(got["ops"].contains(op)) << op;
    EXPECT_EQ(got["ops"][op].as_int(), n.as_int()) << op;
  }
  ASSERT_EQ(got["inputs"].size(), want["inputs"].size());
  for (size_t i = 0; i < want["inputs"].size(); ++i)
    EXPECT_EQ(got["inputs"][i]["name"].as_string(), want["inputs"][i].as_string());
  ASSERT_EQ(got["outputs"].size(), want["outputs"].size());
  EXPECT_EQ(got["outputs"][0]["name"].as_string(), want["outputs"][0].as_string());
}

TEST(Inspect, TextOutputShowsCountsAndHistogram) {
  RunResult r = run_fusor({"inspect", example_model()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nodes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tensor(float) [N,3,224,224]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fusor::clitest
