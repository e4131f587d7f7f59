// Helpers for building ONNX models in tests with the protobuf API (fixtures are generated, not
// committed).
#pragma once
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <variant>
#include <vector>

namespace fusor::test {

using DimSpec = std::variant<int64_t, std::string>;

inline void set_tensor_type(onnx::TypeProto* t, int elem, const std::vector<DimSpec>& dims, bool has_shape = true) {
  auto* tt = t->mutable_tensor_type();
  tt->set_elem_type(elem);
  if (!has_shape) return;
  auto* sh = tt->mutable_shape();
  for (const auto& d : dims) {
    if (std::holds_alternative<int64_t>(d)) sh->add_dim()->set_dim_value(std::get<int64_t>(d));
    else sh->add_dim()->set_dim_param(std::get<std::string>(d));
  }
}

inline onnx::ValueInfoProto* add_vi(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                                    int elem, const std::vector<DimSpec>& dims, bool has_shape = true) {
  auto* vi = list->Add();
  vi->set_name(name);
  if (elem) set_tensor_type(vi->mutable_type(), elem, dims, has_shape);
  return vi;
}

inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> ins,
                                 std::vector<std::string> outs, const std::string& name = {}) {
  auto* n = g->add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

inline onnx::TensorProto* add_float_init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims,
                                         const std::vector<float>& vals) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->set_raw_data(std::string(reinterpret_cast<const char*>(vals.data()), vals.size() * sizeof(float)));
  return t;
}

inline onnx::ModelProto make_model(int opset = 17) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("fusor-test");
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("test");
  return m;
}

// A fresh directory under the system temp dir, removed on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() /
           ("fusor_onnx_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string write_model(const TempDir& d, const std::string& name, const onnx::ModelProto& m) {
  std::string p = d.file(name);
  write_bytes(p, m.SerializeAsString());
  return p;
}

}  // namespace fusor::test
