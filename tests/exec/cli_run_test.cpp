// `fusor run` and `fusor bench` end to end, through the built binary ($FUSOR_BIN, set by ctest;
// default: bin/fusor in the build tree).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/ir/model.h"
#include "core/onnx/onnx_io.h"
#include "core/onnx/tensor_io.h"
#include "core/util/json.h"

namespace fusor {
namespace {

namespace fs = std::filesystem;
const std::string kNode = "/usr/share/libonnx-testdata/data/node/";

struct Result {
  int code = -1;
  std::string out, err;
};

std::string fusor_bin() {
  const char* b = std::getenv("FUSOR_BIN");
  return b ? b : std::string(FUSOR_BINARY_DIR) + "/bin/fusor";
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

struct TempDir {
  fs::path dir;
  TempDir() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("fusor-exec-cli-" + std::to_string(rd()));
    fs::create_directories(dir);
  }
  ~TempDir() { fs::remove_all(dir); }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

Result run_fusor(const std::vector<std::string>& args, const TempDir& tmp) {
  std::string cmd = "'" + fusor_bin() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  std::string out = tmp.path("stdout.txt"), err = tmp.path("stderr.txt");
  cmd += " >'" + out + "' 2>'" + err + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

class CliRun : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(fs::exists(fusor_bin())) << "no fusor binary at " << fusor_bin(); }
  TempDir tmp;
};

// x[N,8] -> Relu -> Neg -> Neg -> Relu -> y (= relu(x)): intermediates for the arena, a symbolic
// batch dim.
std::string write_chain_model(const TempDir& tmp) {
  Model m;
  m.opsets.push_back({"", 13});
  Graph& g = *m.graph;
  ValueType t = ValueType::tensor(DataType::Float);
  t.has_shape = true;
  t.dims = {Dim::symbol("N"), Dim::known(8)};
  ValueId x = g.add_value("x", t);
  g.add_input(x);
  ValueId cur = x;
  const char* ops[] = {"Relu", "Neg", "Neg", "Relu"};
  for (int i = 0; i < 4; ++i) {
    ValueId next = g.add_value(i == 3 ? "y" : "h" + std::to_string(i), t);
    g.add_node(OpType::onnx(ops[i]), {cur}, std::vector<ValueId>{next}, {}, "n" + std::to_string(i));
    cur = next;
  }
  g.add_output(cur);
  std::string p = tmp.path("chain.onnx");
  save_model(m, p);
  return p;
}

TEST_F(CliRun, WritesOutputsThatMatchTheBackendTestData) {
  std::string d = kNode + "test_add/test_data_set_0/";
  Result r = run_fusor({"run", kNode + "test_add/model.onnx", "--input", "x=" + d + "input_0.pb", "--input",
                        "y=" + d + "input_1.pb", "--output-dir", tmp.path("out")},
                       tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("sum"), std::string::npos) << r.out;
  Tensor got = read_tensor_file(tmp.path("out/output_0.pb"));
  Tensor want = read_tensor_file(d + "output_0.pb");
  EXPECT_TRUE(got.bit_equal(want));

  r = run_fusor({"run", kNode + "test_add/model.onnx", "--input", "x=" + d + "input_0.pb", "--input",
                 "y=" + d + "input_1.pb", "--output-dir", tmp.path("npy"), "--output-format", "npy"},
                tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read_tensor_file(tmp.path("npy/out.sum.npy")).bit_equal(want));
}

TEST_F(CliRun, RandomInputsAreSeededAndHonourTheFlags) {
  std::string model = write_chain_model(tmp);
  auto run = [&](std::vector<std::string> extra, const std::string& dir) {
    std::vector<std::string> args = {"run", model, "--output-dir", tmp.path(dir)};
    args.insert(args.end(), extra.begin(), extra.end());
    Result r = run_fusor(args, tmp);
    EXPECT_EQ(r.code, 0) << r.err;
    return r;
  };
  Result a = run({"--seed", "5", "--range", "-1,1"}, "a");
  EXPECT_NE(a.err.find("'N'"), std::string::npos) << "an unset symbolic dim is warned about: " << a.err;
  run({"--seed", "5", "--range", "-1,1"}, "b");
  run({"--seed", "6", "--range", "-1,1"}, "c");
  Tensor ya = read_tensor_file(tmp.path("a/output_0.pb")), yb = read_tensor_file(tmp.path("b/output_0.pb")),
         yc = read_tensor_file(tmp.path("c/output_0.pb"));
  EXPECT_EQ(ya.shape(), (Shape{1, 8}));
  EXPECT_TRUE(ya.bit_equal(yb));
  EXPECT_FALSE(ya.bit_equal(yc));
  // y = relu(x) with x uniform in [-1, 1): never negative, some positive, some zero.
  int positive = 0, zero = 0;
  for (int64_t i = 0; i < ya.numel(); ++i) {
    float y = ya.data<float>()[i];
    EXPECT_GE(y, 0.0f);
    EXPECT_LT(y, 1.0f);
    positive += y > 0;
    zero += y == 0;
  }
  EXPECT_GT(positive, 0);
  EXPECT_GT(zero, 0);
  Result v = run({"--value", "x=2", "--dim", "N=3"}, "v");
  Tensor yv = read_tensor_file(tmp.path("v/output_0.pb"));
  EXPECT_EQ(yv.shape(), (Shape{3, 8}));
  for (int64_t i = 0; i < yv.numel(); ++i) EXPECT_EQ(yv.data<float>()[i], 2.0f);
  EXPECT_EQ(v.err.find("warn"), std::string::npos) << v.err;
}

TEST_F(CliRun, BadInputsExitTwoNamingTheInputOrNode) {
  std::string d = kNode + "test_add/test_data_set_0/";
  std::string model = kNode + "test_add/model.onnx";
  // Wrong dtype.
  write_tensor_npy(tmp.path("x_int.npy"), Tensor(DataType::Int64, {3, 4, 5}));
  Result r = run_fusor({"run", model, "--input", "x=" + tmp.path("x_int.npy"), "--input", "y=" + d + "input_1.pb"}, tmp);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("'x'"), std::string::npos) << r.err;
  // Wrong shape.
  write_tensor_npy(tmp.path("x_bad.npy"), Tensor(DataType::Float, {3, 4, 6}));
  r = run_fusor({"run", model, "--input", "x=" + tmp.path("x_bad.npy"), "--input", "y=" + d + "input_1.pb"}, tmp);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("'x'"), std::string::npos) << r.err;
  // Not a tensor file.
  std::ofstream(tmp.path("junk.pb")) << "this is not a tensor";
  r = run_fusor({"run", model, "--input", "x=" + tmp.path("junk.pb")}, tmp);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("junk.pb"), std::string::npos) << r.err;
  // An input the model does not have.
  r = run_fusor({"run", model, "--input", "nope=" + d + "input_0.pb"}, tmp);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  // An op without a kernel.
  Model m;
  m.opsets.push_back({"", 13});
  m.opsets.push_back({"example.custom", 1});
  ValueType t = ValueType::tensor(DataType::Float);
  t.has_shape = true;
  t.dims = {Dim::known(2)};
  ValueId x = m.graph->add_value("x", t), y = m.graph->add_value("y", t);
  m.graph->add_input(x);
  m.graph->add_node(OpType("example.custom", "Frobnicate"), {x}, std::vector<ValueId>{y}, {}, "frob1");
  m.graph->node(m.graph->first()).domain = "example.custom";
  m.graph->add_output(y);
  save_model(m, tmp.path("custom.onnx"));
  r = run_fusor({"run", tmp.path("custom.onnx")}, tmp);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("frob1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Frobnicate"), std::string::npos) << r.err;
}

TEST_F(CliRun, BenchReportsArenaFiguresAndNoAllocationsInSteadyState) {
  std::string model = write_chain_model(tmp);
  std::string trace = tmp.path("trace.json");
  Result r = run_fusor({"bench", model, "--dim", "N=64", "--runs", "5", "--warmup", "2", "--json", "--threads", "1",
                        "--profile", trace},
                       tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* key : {"\"init_ms\"", "\"median_ms\"", "\"min_ms\"", "\"arena_bytes\"", "\"naive_bytes\"",
                          "\"allocs_per_run\": 0"})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
  // Three 64x8 float intermediates (h0, h1, h2), no reuse: 6144 bytes.
  EXPECT_NE(r.out.find("\"naive_bytes\": 6144"), std::string::npos) << r.out;
  // ONNX Runtime's profile layout, the one the Python package writes too: an array of events.
  json::Value t = json::parse(slurp(trace));
  ASSERT_TRUE(t.is_array());
  EXPECT_EQ(t[0]["name"].as_string(), "model_run");
  EXPECT_EQ(t[0]["cat"].as_string(), "Session");
  std::string names;
  for (const json::Value& e : t.as_array()) names += e["name"].as_string() + " ";
  for (const char* node : {"n0_kernel_time", "n1_kernel_time", "n2_kernel_time", "n3_kernel_time"})
    EXPECT_NE(names.find(node), std::string::npos) << node << " in " << names;
  EXPECT_EQ(t[1]["cat"].as_string(), "Node");
  EXPECT_TRUE(t[1]["args"]["op_name"].is_string());
}

}  // namespace
}  // namespace fusor
