// Hostile input found by fuzzing (issue 21), each reproducer an ordinary test: wrapped shape
// arithmetic, a zero quantization scale, models too big for memory, files that are not regular
// files, external data escaping through a symlink, runs that never end (--timeout), megabyte rule
// lines, and a crash in the shape-inference child. Every case ends with exit 2 (or 5 for a
// cancelled run) and a short message naming the node or file, never a crash or a hang.
// The reproducers live in tests/fuzz/regressions, where they are also seeds of the fuzz targets
// and replayed by them (FuzzReplay_*, tests/fuzz/README.md).
// Suite names contain "BadInput" so the sanitizer CI job runs them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "tests/cli/cli_harness.h"
#include "tests/cli/endless_loop.h"

namespace fusor::clitest {
namespace {

std::string repro(const std::string& name) { return std::string(FUSOR_SOURCE_DIR) + "/tests/fuzz/regressions/" + name; }

void expect_exit2(const RunResult& r, const std::vector<std::string>& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (const std::string& m : mentions) EXPECT_NE(r.err.find(m), std::string::npos) << "missing '" << m << "' in: " << r.err;
  EXPECT_LT(r.err.size(), 1000u) << r.err;
  EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;  // UBSan
  EXPECT_EQ(r.err.find("AddressSanitizer"), std::string::npos) << r.err;
}

// ---- shape arithmetic that wrapped ----

TEST(CliRobustnessBadInput, ReshapeWhoseElementCountOverflowsNamesTheNode) {
  for (const char* model : {"reshape_wrap_far.onnx", "ub-reshape-overflow.min.onnx"}) {
    for (const char* level : {"disabled", "all"}) {
      RunResult r = run_fusor({"run", repro(model), "--level", level, "--no-cache"});
      expect_exit2(r, {"Reshape", "64-bit"});
    }
  }
}

TEST(CliRobustnessBadInput, NpyWhoseShapeProductWrapsNamesTheFile) {
  for (const char* npy : {"npy-shape-overflow.wrap.npy", "ub-npy-shape-overflow.min.npy"}) {
    RunResult r = run_fusor({"run", repro("slice_nm.onnx"), "--input", std::string("x=") + repro(npy), "--no-cache"});
    expect_exit2(r, {npy, "64-bit"});
  }
}

// ---- found by fuzz_model (2026-12-02): an Adam node whose state has another element type than
// X read it as X's type (a null pointer for a string state; UBSan: load of null pointer) ----

TEST(CliRobustnessBadInput, OptimizerStateOfAnotherTypeNamesTheNode) {
  for (const char* level : {"disabled", "all"}) {
    RunResult r = run_fusor({"run", repro("ub-optimizer-state-dtype.onnx"), "--level", level, "--no-cache"});
    expect_exit2(r, {"Adam", "element types differ"});
  }
}

// ---- QuantizeLinear with y_scale = 0: a defined result ----

TEST(CliRobustnessBadInput, QuantizeLinearWithAZeroScaleHasADefinedResult) {
  TempDir d;
  // x > 0: x / 0 = +inf saturates to 255; x = 0: 0 / 0 = NaN gives the zero point.
  for (const auto& [x, expect] : std::vector<std::pair<std::string, std::string>>{{"0.5", "255"}, {"0", "7"}}) {
    RunResult r = run_fusor({"run", repro("ub-quantize-nan-cast.onnx"), "--value", "y_scale=0", "--value",
                             "y_zero_point=7", "--value", "x=" + x, "--no-cache", "--output-dir", d.dir(),
                             "--output-format", "npy"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
    std::string y = run_python("import numpy, sys; print(' '.join(str(v) for v in numpy.load(sys.argv[1])))",
                               {d.path("out.y.npy")});
    EXPECT_EQ(y, expect + " " + expect + " " + expect + " " + expect + " " + expect + " " + expect + "\n") << "x=" << x;
  }
}

// ---- too big for memory: exit 2 naming the node and the bytes, before allocating ----

TEST(CliRobustnessBadInput, AnInputTooBigForMemoryIsRefusedBeforeAllocating) {
  RunResult r = run_fusor_env({"run", repro("huge_input.onnx"), "--no-cache"}, {"FUSOR_MEMORY_LIMIT_MB=4096"});
  expect_exit2(r, {"input 'x'", "8589934592 bytes", "4294967296 bytes", "FUSOR_MEMORY_LIMIT_MB"});
}

onnx::ModelProto constant_of_shape(bool shape_is_input) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  if (shape_is_input) {
    add_input(g, "s", onnx::TensorProto::INT64, {"1"});
  } else {
    auto* t = g->add_initializer();
    t->set_name("s");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(1);
    t->add_int64_data(int64_t{1} << 31);
  }
  add_node(g, "ConstantOfShape", {"s"}, {"y"}, "make_big");
  add_output(g, "y", onnx::TensorProto::FLOAT, {"N"});
  return m;
}

TEST(CliRobustnessBadInput, AConstantOfShapeTooBigForMemoryNamesTheNode) {
  TempDir d;
  save_proto(constant_of_shape(false), d.path("known.onnx"));
  save_proto(constant_of_shape(true), d.path("runtime.onnx"));
  for (const char* level : {"disabled", "all"}) {
    // The size known from shapes: refused when planning.
    RunResult known = run_fusor_env({"run", d.path("known.onnx"), "--level", level, "--no-cache"},
                                    {"FUSOR_MEMORY_LIMIT_MB=1024"});
    expect_exit2(known, {"make_big", "ConstantOfShape", "8589934592 bytes"});
    // Known only when it runs: refused at the allocation, naming the node.
    RunResult runtime = run_fusor_env(
        {"run", d.path("runtime.onnx"), "--level", level, "--no-cache", "--value", "s=2147483648"},
        {"FUSOR_MEMORY_LIMIT_MB=1024"});
    expect_exit2(runtime, {"make_big", "ConstantOfShape", "8589934592 bytes"});
  }
}

// `ulimit -v` is a limit too. (Not in the sanitizer job: AddressSanitizer cannot start under it.)
TEST(CliMemoryLimit, AnAddressSpaceLimitIsHonoured) {
  std::string out = run_python(
      "import os, resource, subprocess, sys\n"
      "lim = 4 << 30\n"
      "p = subprocess.run([sys.argv[2], 'run', sys.argv[1], '--no-cache'], capture_output=True, text=True,\n"
      "                   preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (lim, lim)))\n"
      "print(p.returncode)\n"
      "print(p.stderr)\n",
      {repro("huge_input.onnx"), std::getenv("FUSOR_BIN") ? std::getenv("FUSOR_BIN") : FUSOR_BINARY_DIR "/bin/fusor"});
  EXPECT_EQ(out.substr(0, 2), "2\n") << out;
  EXPECT_NE(out.find("input 'x'"), std::string::npos) << out;
  EXPECT_NE(out.find("RLIMIT_AS"), std::string::npos) << out;
}

// ---- files that are not regular files ----

TEST(CliRobustnessBadInput, DevZeroAsARuleFileOrImportIsRefused) {
  RunResult r = run_fusor({"rules", "check", repro("import_devzero.rules")});
  expect_exit2(r, {"/dev/zero", "not a regular file"});
  RunResult direct = run_fusor({"rules", "check", "/dev/zero"});
  expect_exit2(direct, {"/dev/zero", "not a regular file (a character device)"});
  RunResult opt = run_fusor({"optimize", example_model(), "--rules", "/dev/zero", "-o", "/dev/null"});
  EXPECT_EQ(opt.exit_code, 2) << opt.err;
}

TEST(CliRobustnessBadInput, AFifoAsModelRuleOrInputFileIsRefusedWithoutBlocking) {
  TempDir d;
  std::string fifo = d.path("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  expect_exit2(run_fusor({"inspect", fifo}), {fifo, "not a regular file (a FIFO)"});
  expect_exit2(run_fusor({"run", fifo}), {fifo, "FIFO"});
  expect_exit2(run_fusor({"rules", "check", fifo}), {fifo, "FIFO"});
  expect_exit2(run_fusor({"run", repro("slice_nm.onnx"), "--input", "x=" + fifo, "--no-cache"}), {fifo, "FIFO"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

TEST(CliRobustnessBadInput, ARuleFileOverTheSizeCapIsRefused) {
  TempDir d;
  std::string big = "fusor-rules 1\n" + std::string(9 << 20, '#') + "\n";
  write_file(d.path("big.rules"), big);
  expect_exit2(run_fusor({"rules", "check", d.path("big.rules")}), {"big.rules", "limit"});
}

// ---- external data through a symlink ----

void save_with_external_weights(const std::string& path, const std::string& location) {
  onnx::ModelProto m = new_model(13);
  auto* g = m.mutable_graph();
  add_input(g, "x", onnx::TensorProto::FLOAT, {"4"});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  add_node(g, "Add", {"x", "w"}, {"y"}, "add_w");
  add_output(g, "y", onnx::TensorProto::FLOAT, {"4"});
  save_proto(m, path);
}

TEST(CliRobustnessBadInput, ExternalDataThroughASymlinkOutOfTheModelFolderIsRefused) {
  TempDir outside, d;
  write_file(outside.path("secret.bin"), std::string(16, 'S'));
  ASSERT_EQ(symlink(outside.path("secret.bin").c_str(), d.path("w.bin").c_str()), 0);
  save_with_external_weights(d.path("m.onnx"), "w.bin");
  expect_exit2(run_fusor({"inspect", d.path("m.onnx")}), {"w.bin", "outside the model's directory"});
  expect_exit2(run_fusor({"run", d.path("m.onnx"), "--no-cache"}), {"w.bin", "outside the model's directory"});
  // A symlink to a file inside the folder is fine.
  TempDir ok;
  write_file(ok.path("real.bin"), std::string(16, '\0'));
  ASSERT_EQ(symlink("real.bin", ok.path("w.bin").c_str()), 0);
  save_with_external_weights(ok.path("m.onnx"), "w.bin");
  RunResult r = run_fusor({"run", ok.path("m.onnx"), "--no-cache"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // The model's folder reached through a symlinked path works too.
  TempDir via;
  ASSERT_EQ(symlink(ok.dir().c_str(), via.path("link").c_str()), 0);
  RunResult r2 = run_fusor({"run", via.path("link/m.onnx"), "--no-cache"});
  EXPECT_EQ(r2.exit_code, 0) << r2.err;
}

// ---- a run that never ends: --timeout ----

TEST(CliRobustnessBadInput, TimeoutCancelsAnEndlessLoopWithExitFive) {
  TempDir d;
  save_proto(endless_loop(), d.path("loop.onnx"));
  for (const char* cmd : {"run", "bench"}) {
    auto start = std::chrono::steady_clock::now();
    RunResult r = run_fusor({cmd, d.path("loop.onnx"), "--timeout", "0.5", "--no-cache", "--level", "disabled"});
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(r.exit_code, 5) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("cancelled"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--timeout 0.5 s"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("forever"), std::string::npos) << r.err;  // the node it stopped in
    EXPECT_LT(s, 30.0) << cmd;
  }
  RunResult bad = run_fusor({"run", d.path("loop.onnx"), "--timeout", "soon"});
  EXPECT_EQ(bad.exit_code, 1) << bad.err;  // a usage error
}

// ---- diagnostics ----

TEST(CliRobustnessBadInput, AMegabyteRuleLineIsShownAsAWindowAroundTheColumn) {
  TempDir d;
  std::string line = "rule r match { y = Relu(x) } rewrite { y = x } " + std::string(1 << 20, ' ') + "@";
  write_file(d.path("long.rules"), "fusor-rules 1\n" + line + "\n");
  RunResult r = run_fusor({"rules", "check", d.path("long.rules")});
  EXPECT_EQ(r.exit_code, 2) << r.err.substr(0, 2000);
  EXPECT_LT(r.err.size(), 2000u) << r.err.size();
  EXPECT_NE(r.err.find("long.rules:2:" + std::to_string(line.size())), std::string::npos) << r.err;
  // The line is shown from "..." (cut on the left) to its end, the '@'; the caret sits under it.
  size_t at_line = r.err.find("\n...");
  ASSERT_NE(at_line, std::string::npos) << r.err;
  ++at_line;
  std::string shown = r.err.substr(at_line, r.err.find('\n', at_line) - at_line);
  EXPECT_EQ(shown.back(), '@') << shown;
  EXPECT_LT(shown.size(), 200u);
  size_t caret_start = r.err.find('\n', at_line) + 1;
  std::string caret = r.err.substr(caret_start, r.err.find('\n', caret_start) - caret_start);
  EXPECT_EQ(caret.size(), shown.size()) << "[" << shown << "]\n[" << caret << "]";
  EXPECT_EQ(caret.back(), '^');
}

TEST(CliRobustnessBadInput, ACrashOfTheShapeInferenceChildIsLogged) {
  RunResult r = run_fusor_env({"inspect", example_model()}, {"FUSOR_TEST_INFER_CRASH=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ONNX shape inference"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("child process"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fusor::clitest
