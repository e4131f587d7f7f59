// `fusor optimize --json`: one test per key of the report (docs/cli.md), and the saved model.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_harness.h"
#include "tests/cli/nested_model.h"

namespace fusor::clitest {
namespace {

class OptimizeJson : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    save_proto(nested_model(), dir_->path("nested.onnx"));
    RunResult r = run_fusor({"optimize", dir_->path("nested.onnx"), "-o", dir_->path("out.onnx"), "--level",
                             "disabled", "--json"});
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
TempDir* OptimizeJson::dir_ = nullptr;
json::Value* OptimizeJson::report_ = nullptr;

TEST_F(OptimizeJson, Model) { EXPECT_EQ(report()["model"].as_string(), dir_->path("nested.onnx")); }
TEST_F(OptimizeJson, Output) { EXPECT_EQ(report()["output"].as_string(), dir_->path("out.onnx")); }
TEST_F(OptimizeJson, Level) { EXPECT_EQ(report()["level"].as_string(), "disabled"); }
TEST_F(OptimizeJson, Providers) { EXPECT_EQ(report()["providers"].as_string(), "cpu"); }
TEST_F(OptimizeJson, NodesBeforeIsTopLevelCount) { EXPECT_EQ(report()["nodes_before"].as_int(), 5); }
TEST_F(OptimizeJson, NodesAfterAtLevelDisabledIsUnchanged) { EXPECT_EQ(report()["nodes_after"].as_int(), 5); }

TEST_F(OptimizeJson, OpsBeforeAndAfterCountAllDepths) {
  for (const char* key : {"ops_before", "ops_after"}) {
    const json::Value& ops = report()[key];
    EXPECT_EQ(ops.size(), 7u) << key << ": " << ops.dump();
    EXPECT_EQ(ops["If"].as_int(), 2) << key;
    EXPECT_EQ(ops["Identity"].as_int(), 2) << key;
    EXPECT_EQ(ops["com.example.Scale"].as_int(), 1) << key;
  }
}

// No rewrite rule exists yet: nothing may claim to have fired.
TEST_F(OptimizeJson, RulesFiredIsAnEmptyObject) {
  ASSERT_TRUE(report()["rules_fired"].is_object());
  EXPECT_EQ(report()["rules_fired"].size(), 0u);
}

TEST_F(OptimizeJson, TimingsAreNonNegativeMilliseconds) {
  for (const char* key : {"load_ms", "optimize_ms", "save_ms"}) {
    ASSERT_TRUE(report()[key].is_number()) << key;
    EXPECT_GE(report()[key].as_double(), 0.0) << key;
    EXPECT_LT(report()[key].as_double(), 60000.0) << key;
  }
}

TEST_F(OptimizeJson, SavedModelInspectsTheSame) {
  RunResult before = run_fusor({"inspect", dir_->path("nested.onnx"), "--json"});
  RunResult after = run_fusor({"inspect", dir_->path("out.onnx"), "--json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  for (const char* key : {"nodes", "subgraph_nodes", "constant_nodes", "ops", "inputs", "outputs", "opsets",
                          "initializer_bytes"})
    EXPECT_EQ(after.json()[key].dump(), before.json()[key].dump()) << key;
}

TEST(Optimize, ExampleAtEveryLevelSavesACheckerValidModel) {
  TempDir dir;
  for (const char* level : {"disabled", "basic", "extended", "layout", "all"}) {
    std::string out = dir.path(std::string(level) + ".onnx");
    RunResult r = run_fusor({"optimize", example_model(), "-o", out, "--level=" + std::string(level), "--json"});
    ASSERT_EQ(r.exit_code, 0) << level << ": " << r.err;
    json::Value j = r.json();
    EXPECT_EQ(j["level"].as_string(), level);
    EXPECT_GT(j["nodes_before"].as_int(), 0);
    std::string checked = run_python(
        "import sys, onnx\nm = onnx.load(sys.argv[1])\nonnx.checker.check_model(m)\nprint(len(m.graph.node))", {out});
    EXPECT_EQ(std::stoll(checked), j["nodes_after"].as_int()) << level;
  }
}

TEST(Optimize, ProviderListAndDimAreAccepted) {
  TempDir dir;
  RunResult r = run_fusor({"optimize", example_model(), "-o", dir.path("o.onnx"), "--provider", "cpu", "--dim",
                           "N=1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.json()["providers"].as_string(), "cpu");
}

TEST(Optimize, TextOutputShowsNodeCountsAndHistogram) {
  TempDir dir;
  RunResult r = run_fusor({"optimize", example_model(), "-o", dir.path("o.onnx"), "--level", "disabled"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nodes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("before"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Conv"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.path("o.onnx")));
}

// Issue 18: `optimize MODEL --rules F --json` without -o is a dry run: the report of what fires,
// nothing written.
TEST(OptimizeDryRun, WithoutOutputReportsAndWritesNothing) {
  TempDir d;
  save_proto(nested_model(), d.path("nested.onnx"));
  write_file(d.path("r.rules"), "fusor-rules 1\nrule relu_twice\n  match { y = Relu(Relu(x)) }\n  rewrite { y = Relu(x) }\n");
  RunResult r = run_fusor({"optimize", example_model(), "--rules", d.path("r.rules"), "--level", "basic", "--json",
                           "--no-cache"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json::Value v = r.json();
  EXPECT_TRUE(v["output"].is_null()) << v.dump();
  EXPECT_TRUE(v["rules_fired"].is_object());
  EXPECT_GT(v["rules_fired"].as_object().size(), 0u) << v.dump();
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(d.dir())) files.push_back(e.path().filename().string());
  EXPECT_EQ(files.size(), 2u);  // the model and the rules only
  RunResult text = run_fusor({"optimize", d.path("nested.onnx"), "--no-cache"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("dry run"), std::string::npos) << text.out;
}

// Issue 18: a rule set that never reaches a fixed point is bad input naming the model and each
// rule involved with its FILE:LINE.
TEST(OptimizeErrors, ARuleSetThatLoopsNamesTheModelAndTheRules) {
  TempDir d;
  write_file(d.path("loop.rules"),
             "fusor-rules 1\n\nrule relu_to_abs\n  match { y = Relu(x) }\n  rewrite { y = Abs(x) }\n\n"
             "rule abs_to_relu\n  match { y = Abs(x) }\n  rewrite { y = Relu(x) }\n");
  RunResult r = run_fusor({"optimize", example_model(), "--rules", d.path("loop.rules"), "--level", "basic",
                           "--no-cache", "-o", d.path("o.onnx")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(example_model() + ": rewriting"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("relu_to_abs (" + d.path("loop.rules") + ":3)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("abs_to_relu (" + d.path("loop.rules") + ":7)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.path("o.onnx")));
}

// Issue 18: the CLI prints a rule file's diagnostics once, inside the error (no "see above").
TEST(OptimizeErrors, ARuleFileErrorShowsItsDiagnosticsInTheError) {
  TempDir d;
  write_file(d.path("bad.rules"), "fusor-rules 1\n\nrule broken\n  match { y = NoSuchOp(x) }\n  rewrite { y = x }\n");
  RunResult r = run_fusor({"optimize", example_model(), "--rules", d.path("bad.rules"), "--no-cache"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: rules: 1 error(s) in rule files:\n" + d.path("bad.rules") + ":4:15: error: unknown op"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("see above"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("unknown op"), r.err.rfind("unknown op")) << "printed twice: " << r.err;
}

}  // namespace
}  // namespace fusor::clitest
