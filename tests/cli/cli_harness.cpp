#include "tests/cli/cli_harness.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "core/util/error.h"

extern char** environ;

namespace fusor::clitest {

namespace fs = std::filesystem;

namespace {

// Runs argv[0] with argv, stdout and stderr redirected to files; returns the exit status.
// `env` entries (NAME=VALUE) replace or extend the test's environment.
int spawn_and_wait(const std::vector<std::string>& argv, const std::string& out_file, const std::string& err_file,
                   const std::vector<std::string>& env = {}) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> cargv;
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    bool replaced = false;
    for (const std::string& x : env)
      if (entry.substr(0, entry.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1)) replaced = true;
    if (!replaced) env_strings.emplace_back(entry);
  }
  env_strings.insert(env_strings.end(), env.begin(), env.end());
  std::vector<char*> cenv;
  for (std::string& e : env_strings) cenv.push_back(e.data());
  cenv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, cargv[0], &actions, nullptr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);  // a crash: never a valid fusor exit
  return WEXITSTATUS(status);
}

std::string fusor_bin() {
  const char* bin = std::getenv("FUSOR_BIN");
  if (bin && *bin) return bin;
  return std::string(FUSOR_BINARY_DIR) + "/bin/fusor";
}

}  // namespace

json::Value RunResult::json() const {
  try {
    return json::parse(out);
  } catch (const Error& e) {
    ADD_FAILURE() << "stdout is not JSON (" << e.what() << "):\n" << out << "\nstderr:\n" << err;
    return json::Value::object();
  }
}

RunResult run_fusor(const std::vector<std::string>& args) { return run_fusor_env(args, {}); }

RunResult run_fusor_env(const std::vector<std::string>& args, const std::vector<std::string>& env) {
  TempDir tmp;
  std::vector<std::string> argv = {fusor_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  // The default optimized-session cache goes to this run's temp dir: tests never touch the
  // user's cache, and every run without --cache optimizes afresh (a miss).
  std::vector<std::string> full_env = env;
  bool has_xdg = false;
  for (const std::string& e : env) has_xdg = has_xdg || e.rfind("XDG_CACHE_HOME=", 0) == 0;
  if (!has_xdg) full_env.push_back(std::string("XDG_CACHE_HOME=").append(tmp.dir()));
  RunResult r;
  r.exit_code = spawn_and_wait(argv, tmp.path("out"), tmp.path("err"), full_env);
  r.out = read_file(tmp.path("out"));
  r.err = read_file(tmp.path("err"));
  return r;
}

std::string run_python(const std::string& code, const std::vector<std::string>& args) {
  TempDir tmp;
  std::vector<std::string> argv = {"/usr/bin/python3", "-c", code};
  argv.insert(argv.end(), args.begin(), args.end());
  int rc = spawn_and_wait(argv, tmp.path("out"), tmp.path("err"));
  EXPECT_EQ(rc, 0) << "python failed:\n" << read_file(tmp.path("err"));
  return read_file(tmp.path("out"));
}

TempDir::TempDir() {
  std::string tmpl = (fs::temp_directory_path() / "fusor-cli-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void save_proto(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  write_file(path, bytes);
}

std::string example_model() { return std::string(FUSOR_SOURCE_DIR) + "/examples/models/squeezenet1_1.onnx"; }

onnx::ModelProto new_model(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("fusor-cli-test");
  m.set_producer_version("1");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, const std::vector<std::string>& in,
                          const std::vector<std::string>& out, const std::string& name, const std::string& domain) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name.empty() ? op + "_" + std::to_string(g->node_size()) : name);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : in) n->add_input(i);
  for (const auto& o : out) n->add_output(o);
  return n;
}

namespace {
void set_type(onnx::ValueInfoProto* v, const std::string& name, int elem, const std::vector<std::string>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem);
  auto* shape = t->mutable_shape();
  for (const std::string& d : dims) {
    auto* dim = shape->add_dim();
    if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
}
}  // namespace

onnx::ValueInfoProto* add_input(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<std::string>& dims) {
  auto* v = g->add_input();
  set_type(v, name, elem, dims);
  return v;
}

onnx::ValueInfoProto* add_output(onnx::GraphProto* g, const std::string& name, int elem, const std::vector<std::string>& dims) {
  auto* v = g->add_output();
  set_type(v, name, elem, dims);
  return v;
}

onnx::TensorProto* add_float_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  std::vector<float> data(static_cast<size_t>(n), 0.5f);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float)));
  return t;
}

onnx::NodeProto* add_constant(onnx::GraphProto* g, const std::string& out, float value) {
  auto* n = add_node(g, "Constant", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_float_data(value);
  return n;
}

}  // namespace fusor::clitest
