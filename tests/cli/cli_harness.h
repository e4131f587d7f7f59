// Test harness for the CLI: runs build/bin/fusor (FUSOR_BIN, set by tests/CMakeLists.txt) as a
// child process and captures its exit code, stdout and stderr; builds small ONNX models with
// libonnx's protobuf classes so each test states the structure it counts.
#pragma once
#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/util/json.h"

namespace fusor::clitest {

struct RunResult {
  int exit_code = -1;
  std::string out, err;
  // Parses stdout as JSON (fails the test with the text when it is not JSON).
  json::Value json() const;
};

// Runs `fusor ARGS...` with no shell interpretation of the arguments. XDG_CACHE_HOME points to a
// fresh temp dir per run, so the default optimized-session cache is empty (a miss) and the
// user's own cache is never written; cache tests name theirs with --cache FILE.
RunResult run_fusor(const std::vector<std::string>& args);
// The same with extra environment variables ("NAME=VALUE"), which win over the test's own.
RunResult run_fusor_env(const std::vector<std::string>& args, const std::vector<std::string>& env);
// Runs /usr/bin/python3 -c CODE ARGS...; returns stdout; the test fails on a non-zero exit.
std::string run_python(const std::string& code, const std::vector<std::string>& args = {});

// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

void write_file(const std::string& path, const std::string& bytes);
std::string read_file(const std::string& path);
void save_proto(const onnx::ModelProto& m, const std::string& path);

// The committed example model (examples/models/squeezenet1_1.onnx).
std::string example_model();

// ---- model builders ----
onnx::ModelProto new_model(int64_t opset = 13);
onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out, const std::string& name = {},
                          const std::string& domain = {});
// A typed graph input/output: dims are numbers ("4") or symbols ("N").
onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name, int elem,
                                const std::vector<std::string>& dims);
onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name, int elem,
                                 const std::vector<std::string>& dims);
// A float initializer of the given shape filled with 0.5, as raw_data.
onnx::TensorProto* add_float_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims);
// A Constant node producing a float scalar.
onnx::NodeProto* add_constant(onnx::GraphProto* g, const std::string& out, float value);

}  // namespace fusor::clitest
