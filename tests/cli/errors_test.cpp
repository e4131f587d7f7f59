// Exit codes and messages for bad flags (1) and bad input (2). Every bad-input case must end with
// a one-line message naming the file, never a crash (a signal would show as exit >= 128).
// The suite names contain "Error" so the AddressSanitizer CI job selects them.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/cli/cli_harness.h"
#include "tests/cli/nested_model.h"

namespace fusor::clitest {
namespace {

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n + (!s.empty() && s.back() != '\n');
}

// ---- usage errors: exit 1 ----

void expect_usage(const std::vector<std::string>& args, const std::string& must_mention) {
  RunResult r = run_fusor(args);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find(must_mention), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliUsageErrors, UnknownFlag) { expect_usage({"optimize", example_model(), "-o", "/tmp/x.onnx", "--frobnicate"}, "--frobnicate"); }
TEST(CliUsageErrors, UnknownFlagSuggestsNearest) { expect_usage({"inspect", example_model(), "--jsn"}, "--json"); }
TEST(CliUsageErrors, UnknownGlobalFlag) { expect_usage({"--frobnicate"}, "--frobnicate"); }
TEST(CliUsageErrors, UnknownCommand) { expect_usage({"frobnicate"}, "unknown command 'frobnicate'"); }
TEST(CliUsageErrors, UnknownCommandSuggestsNearest) {
  expect_usage({"optimze", example_model()}, "unknown command 'optimze'; did you mean 'optimize'?");
  expect_usage({"inspcet", example_model()}, "did you mean 'inspect'?");  // a swap is one edit
}

TEST(CliUsageErrors, UnknownLevelListsLevels) {
  expect_usage({"optimize", example_model(), "-o", "/tmp/x.onnx", "--level", "max"}, "disabled, basic, extended, layout, all");
}
TEST(CliUsageErrors, UnknownProviderListsProviders) {
  expect_usage({"optimize", example_model(), "-o", "/tmp/x.onnx", "--provider", "cuda"}, "unknown provider 'cuda' (known: cpu, xnnpack)");
}
TEST(CliUsageErrors, UnknownProviderInList) {
  expect_usage({"optimize", example_model(), "-o", "/tmp/x.onnx", "--provider=cpu,tpu"}, "'tpu'");
}
TEST(CliUsageErrors, MissingModel) { expect_usage({"inspect"}, "MODEL"); }
TEST(CliUsageErrors, ExtraPositional) { expect_usage({"inspect", example_model(), "extra"}, "'extra'"); }
TEST(CliUsageErrors, FlagWithoutValue) { expect_usage({"inspect", example_model(), "--dim"}, "--dim"); }
TEST(CliUsageErrors, SwitchWithValue) { expect_usage({"inspect", example_model(), "--json=yes"}, "--json"); }
TEST(CliUsageErrors, NonRepeatableFlagTwice) {
  expect_usage({"optimize", example_model(), "-o", "/tmp/x.onnx", "--level", "basic", "--level", "all"}, "--level");
}
TEST(CliUsageErrors, BadDimText) { expect_usage({"inspect", example_model(), "--dim", "N"}, "N"); }
TEST(CliUsageErrors, BadShapeText) { expect_usage({"inspect", example_model(), "--shape", "input=1xAx3"}, "input"); }
TEST(CliUsageErrors, UnknownLogLevel) { expect_usage({"--log-level", "loud", "inspect", example_model()}, "loud"); }

// ---- bad input: exit 2, one line naming the file ----

void expect_bad_input(const std::string& path, const std::string& must_mention = {}) {
  for (const char* cmd : {"inspect", "optimize"}) {
    std::vector<std::string> args = {cmd, path};
    if (std::string(cmd) == "optimize") args.insert(args.end(), {"-o", path + ".out.onnx"});
    RunResult r = run_fusor(args);
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << cmd << ": message should name the file: " << r.err;
    if (!must_mention.empty()) {
      EXPECT_NE(r.err.find(must_mention), std::string::npos) << cmd << ": " << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(CliInputErrors, MissingFile) {
  TempDir d;
  expect_bad_input(d.path("does-not-exist.onnx"));
}

TEST(CliInputErrors, Directory) {
  TempDir d;
  expect_bad_input(d.dir());
}

TEST(CliInputErrors, GarbageFile) {
  TempDir d;
  write_file(d.path("garbage.onnx"), std::string(4096, '\xff'));
  expect_bad_input(d.path("garbage.onnx"));
}

TEST(CliInputErrors, TextFile) {
  TempDir d;
  write_file(d.path("text.onnx"), "this is not an ONNX model\n");
  expect_bad_input(d.path("text.onnx"));
}

TEST(CliInputErrors, EmptyFile) {
  TempDir d;
  write_file(d.path("empty.onnx"), "");
  expect_bad_input(d.path("empty.onnx"), "empty file");
}

TEST(CliInputErrors, TruncatedFile) {
  TempDir d;
  std::string bytes = read_file(example_model());
  ASSERT_GT(bytes.size(), 1000u);
  for (double frac : {0.5, 0.9, 0.999}) {
    std::string path = d.path("truncated" + std::to_string(static_cast<int>(frac * 1000)) + ".onnx");
    write_file(path, bytes.substr(0, static_cast<size_t>(static_cast<double>(bytes.size()) * frac)));
    expect_bad_input(path);
  }
}

TEST(CliInputErrors, Cycle) {
  TempDir d;
  onnx::ModelProto m = new_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
  add_node(g, "Add", {"x", "b"}, {"a"}, "add_a");
  add_node(g, "Relu", {"a"}, {"b"}, "relu_b");
  add_output(g, "a", onnx::TensorProto::FLOAT, {"4"});
  save_proto(m, d.path("cycle.onnx"));
  expect_bad_input(d.path("cycle.onnx"), "cycle");
}

TEST(CliInputErrors, DanglingInput) {
  TempDir d;
  onnx::ModelProto m = new_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
  add_node(g, "Add", {"x", "nowhere"}, {"y"}, "add_dangling");
  add_output(g, "y", onnx::TensorProto::FLOAT, {"4"});
  save_proto(m, d.path("dangling.onnx"));
  expect_bad_input(d.path("dangling.onnx"), "add_dangling");
}

TEST(CliInputErrors, TensorWithWrongDataSize) {
  TempDir d;
  onnx::ModelProto m = new_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
  auto* w = add_float_initializer(g, "w", {4});
  w->set_raw_data(std::string(8, '\0'));  // 2 floats for a shape of 4
  add_node(g, "Add", {"x", "w"}, {"y"});
  add_output(g, "y", onnx::TensorProto::FLOAT, {"4"});
  save_proto(m, d.path("short_tensor.onnx"));
  expect_bad_input(d.path("short_tensor.onnx"), "'w'");
}

TEST(CliInputErrors, MissingExternalData) {
  TempDir d;
  onnx::ModelProto m = new_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* loc = w->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  add_node(g, "Add", {"x", "w"}, {"y"});
  add_output(g, "y", onnx::TensorProto::FLOAT, {"4"});
  save_proto(m, d.path("external.onnx"));
  expect_bad_input(d.path("external.onnx"), "weights.bin");
}

TEST(CliInputErrors, UnwritableOutputIsBadInput) {
  TempDir d;
  RunResult r = run_fusor({"optimize", example_model(), "-o", d.path("no/such/dir/out.onnx")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find("no/such/dir/out.onnx"), std::string::npos) << r.err;
}

TEST(CliInputErrors, LoopingRuleSetNamesTheModelAndTheRules) {
  // Two rules undoing each other: exit 2, nothing written, and the one-line message names the
  // model and FILE:LINE of the rules involved (issue 18).
  TempDir d;
  write_file(d.path("loop.rules"), R"(fusor-rules 1

rule relu_to_abs
  match { y = Relu(x) }
  rewrite { y = Abs(x) }

rule abs_to_relu
  match { y = Abs(x) }
  rewrite { y = Relu(x) }
)");
  onnx::ModelProto m = new_model();
  auto* g = m.mutable_graph();
  add_input(g, "x", 1, {"4"});
  add_node(g, "Relu", {"x"}, {"r"}, "relu");
  add_node(g, "Neg", {"r"}, {"y"}, "neg");
  add_output(g, "y", 1, {"4"});
  save_proto(m, d.path("m.onnx"));
  RunResult r = run_fusor({"optimize", d.path("m.onnx"), "-o", d.path("out.onnx"), "--no-default-rules", "--rules",
                           d.path("loop.rules"), "--level", "basic"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  const std::string model = d.path("m.onnx"), rules = d.path("loop.rules");
  EXPECT_NE(r.err.find(model + ": rewriting does not terminate"), std::string::npos) << r.err;
  std::string abs_to_relu = "abs_to_relu (", relu_to_abs = "relu_to_abs (";
  abs_to_relu.append(rules).append(":7)");
  relu_to_abs.append(rules).append(":3)");
  EXPECT_NE(r.err.find(abs_to_relu), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(relu_to_abs), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(d.path("out.onnx")));
}

}  // namespace
}  // namespace fusor::clitest
