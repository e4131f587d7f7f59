// fusor inspect on optimized models: fused nodes with rule and originals, the memory plan
// (--arena), and the drawings (--dot, --compare, --svg).
#include <algorithm>

#include "tests/cli/cli_harness.h"
#include "tests/session/session_test_util.h"

namespace fusor::sessiontest {
namespace {

using clitest::run_fusor;

// squeezenet optimized at extended with only the test rule, once for the whole suite.
class InspectCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    auto r = run_fusor({"optimize", squeezenet(), "-o", opt(), "--level", "extended", "--no-default-rules", "--rules", conv_relu_rules()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string opt() { return dir_->path("sq.opt.onnx"); }
  static TempDir* dir_;
};
TempDir* InspectCli::dir_ = nullptr;

TEST_F(InspectCli, JsonListsFusedNodesWithRuleAndOriginals) {
  auto r = run_fusor({"inspect", opt(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::Value v = r.json();
  EXPECT_EQ(v["opsets"]["fusor"].as_int(), 1);
  EXPECT_EQ(v["optimized"]["provider"].as_string(), "cpu");
  EXPECT_EQ(v["optimized"]["level"].as_string(), "extended");
  EXPECT_EQ(v["optimized"]["rule_set_hash"].as_string().size(), 16u);
  const json::Value& fused = v["fused_nodes"];
  ASSERT_EQ(fused.size(), 26u);
  for (const json::Value& f : fused.as_array()) {
    EXPECT_EQ(f["op"].as_string(), "fusor.FusedConv");
    EXPECT_EQ(f["rule"].as_string(), "test_conv_relu");
    ASSERT_EQ(f["replaced"].size(), 2u);
    EXPECT_NE(f["replaced"][0].as_string().find("/Conv"), std::string::npos);
    EXPECT_EQ(f["depth"].as_int(), 0);
  }
  // The original model: no stamp, no fused nodes.
  auto o = run_fusor({"inspect", squeezenet(), "--json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.json()["optimized"].is_null());
  EXPECT_EQ(o.json()["fused_nodes"].size(), 0u);
}

TEST_F(InspectCli, TextNamesTheRules) {
  auto r = run_fusor({"inspect", opt()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fused nodes (26)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule test_conv_relu <- /features/features.0/Conv /features/features.1/Relu"), std::string::npos)
      << r.out;
}

TEST_F(InspectCli, ArenaPlanIsConsistent) {
  auto r = run_fusor({"inspect", opt(), "--json", "--arena", "--dim", "N=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json::Value& a = r.json()["arena"];
  int64_t peak = a["peak_bytes"].as_int(), naive = a["no_reuse_bytes"].as_int();
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, naive);  // reuse on a chain of convolutions
  EXPECT_NEAR(a["reuse_ratio"].as_double(), static_cast<double>(peak) / static_cast<double>(naive), 1e-9);
  EXPECT_EQ(a["steps"].as_int(), 39);  // the optimized model's nodes
  const auto& ts = a["tensors"].as_array();
  ASSERT_GT(ts.size(), 20u);
  int64_t sum = 0;
  for (const json::Value& t : ts) {
    EXPECT_LE(t["def"].as_int(), t["last"].as_int());
    EXPECT_LE(t["offset"].as_int() + t["bytes"].as_int(), peak) << t["name"].as_string();
    if (t["placement"].as_string() == "buffer") sum += t["bytes"].as_int();
  }
  EXPECT_LE(sum, naive);
  // Independent check of the plan: tensors alive at the same time in different buffers never
  // overlap in memory.
  for (size_t i = 0; i < ts.size(); ++i)
    for (size_t j = i + 1; j < ts.size(); ++j) {
      const json::Value &p = ts[i], &q = ts[j];
      if (p["buffer"].as_int() == q["buffer"].as_int()) continue;
      bool live_together = p["def"].as_int() <= q["last"].as_int() && q["def"].as_int() <= p["last"].as_int();
      bool overlap = p["offset"].as_int() < q["offset"].as_int() + q["bytes"].as_int() &&
                     q["offset"].as_int() < p["offset"].as_int() + p["bytes"].as_int();
      EXPECT_FALSE(live_together && overlap) << p["name"].as_string() << " and " << q["name"].as_string();
    }
  // Sizes: from a run when inference left some unknown, else from shapes (the original model
  // with N=1 is fully inferred).
  std::string from = a["sizes_from"].as_string();
  EXPECT_TRUE(from == "run" || from == "shapes") << from;
  auto orig = run_fusor({"inspect", squeezenet(), "--json", "--arena", "--dim", "N=1"});
  ASSERT_EQ(orig.exit_code, 0) << orig.err;
  EXPECT_EQ(orig.json()["arena"]["sizes_from"].as_string(), "shapes");
  EXPECT_GT(orig.json()["arena"]["no_reuse_bytes"].as_int(), orig.json()["arena"]["peak_bytes"].as_int());
  // Text mode prints the summary.
  auto t = run_fusor({"inspect", opt(), "--arena", "--dim", "N=1"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("without reuse"), std::string::npos) << t.out;
}

TEST_F(InspectCli, DotHighlightsFusedNodes) {
  std::string dot = dir_->path("g.dot");
  auto r = run_fusor({"inspect", opt(), "--dot", dot});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = read_file_text(dot);
  ASSERT_EQ(text.rfind("digraph", 0), 0u) << text.substr(0, 100);
  size_t fused = 0;
  for (size_t at = text.find("fusor.FusedConv"); at != std::string::npos; at = text.find("fusor.FusedConv", at + 1)) ++fused;
  EXPECT_EQ(fused, 26u);
  EXPECT_NE(text.find("fillcolor=\"#ffb347\""), std::string::npos);
  EXPECT_NE(text.find("rule test_conv_relu replaced /features/features.0/Conv"), std::string::npos);
  EXPECT_EQ(std::count(text.begin(), text.end(), '{'), std::count(text.begin(), text.end(), '}'));
}

TEST_F(InspectCli, CompareDrawsTwoClusters) {
  std::string dot = dir_->path("cmp.dot");
  auto r = run_fusor({"inspect", opt(), "--compare", squeezenet(), "--dot", dot});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string text = read_file_text(dot);
  EXPECT_NE(text.find("subgraph cluster_before_"), std::string::npos);
  EXPECT_NE(text.find("subgraph cluster_after_"), std::string::npos);
  EXPECT_NE(text.find("(83 nodes)"), std::string::npos);
  EXPECT_NE(text.find("(39 nodes)"), std::string::npos);
  auto bad = run_fusor({"inspect", opt(), "--compare", squeezenet()});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;  // --compare alone draws nothing
}

TEST_F(InspectCli, SvgRendersOrSaysHowToInstallGraphviz) {
  std::string svg = dir_->path("g.svg");
  auto r = run_fusor({"inspect", opt(), "--svg", svg});
  bool have_dot = std::system("command -v dot >/dev/null 2>&1") == 0;
  if (have_dot) {
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(read_file_text(svg).find("<svg"), std::string::npos);
  } else {
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("apt-get install graphviz"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fusor::sessiontest
