// Helpers shared by the cache tests: temp dirs, raw SQLite access to damage a cache on purpose,
// and a small ONNX model built with libonnx's protobuf classes.
#pragma once
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fusor::cachetest {

namespace fs = std::filesystem;

class Dir {
 public:
  Dir() {
    std::string tmpl = (fs::temp_directory_path() / "fusor-cache-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  const std::string& dir() const { return dir_; }
  // Files in the directory whose name starts with `prefix`.
  std::vector<std::string> files_starting(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
    return out;
  }

 private:
  std::string dir_;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs SQL on the cache file directly (to damage it); fails the test on an SQLite error.
inline void raw_sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  std::string msg = err ? err : "";
  sqlite3_free(err);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << msg;
}

// y = Relu(Identity(x) + (c1 + c2)) with x: float[N, 16]: the basic level removes the Identity and
// folds c1 + c2, so an optimized model differs from the original. `weight_elems` sizes c1 and
// c2 (payload size), `tag` goes into doc_string to make distinct model bytes.
inline onnx::ModelProto small_model(int64_t weight_elems = 16, const std::string& tag = "") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("fusor-cache-test");
  m.set_doc_string(tag);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("small");
  auto add_init = [&](const std::string& name, float v) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(weight_elems);
    for (int64_t i = 0; i < weight_elems; ++i) t->add_float_data(v + 0.001f * static_cast<float>(i % 97));
  };
  add_init("c1", 0.25f);
  add_init("c2", -0.5f);
  auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + out);
    for (const auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Identity", {"x"}, "xi");
  node("Add", {"c1", "c2"}, "c");
  node("Add", {"xi", "c"}, "s");
  node("Relu", {"s"}, "y");
  auto io = [&](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_param("N");
    tt->mutable_shape()->add_dim()->set_dim_value(weight_elems);
  };
  io(g->add_input(), "x");
  io(g->add_output(), "y");
  return m;
}

inline void save_model_proto(const onnx::ModelProto& m, const std::string& path) {
  std::string bytes;
  ASSERT_TRUE(m.SerializeToString(&bytes));
  write_bytes(path, bytes);
}

}  // namespace fusor::cachetest
