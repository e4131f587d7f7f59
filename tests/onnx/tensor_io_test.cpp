// Tensor files: TensorProto .pb and NumPy .npy, against hand-written bytes and ONNX's test data.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/util/error.h"
#include "core/onnx/tensor_io.h"
#include "proto_builder.h"

using namespace fusor;
using namespace fusor::test;
namespace fs = std::filesystem;

namespace {

Tensor sample(DataType dt, Shape shape) {
  Tensor t(dt, shape);
  auto* p = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 37 + 11);
  if (dt == DataType::Bool)
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  return t;
}

const DataType kNumeric[] = {DataType::Float, DataType::UInt8, DataType::Int8, DataType::UInt16, DataType::Int16,
                             DataType::Int32, DataType::Int64, DataType::Bool, DataType::Float16, DataType::Double,
                             DataType::UInt32, DataType::UInt64, DataType::Complex64, DataType::Complex128};

std::string npy_v1(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

std::string read_error(const std::string& path) {
  try {
    read_tensor_file(path);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_EQ(std::string(e.what()).rfind(path, 0), 0u) << e.what();
    return e.what();
  }
  ADD_FAILURE() << path << " was read";
  return {};
}

}  // namespace

TEST(TensorIo, PbRoundTripsEveryType) {
  TempDir d;
  for (DataType dt : kNumeric) {
    Tensor t = sample(dt, {2, 3});
    std::string p = d.file(std::string(dtype_name(dt)) + ".pb");
    write_tensor_pb(p, t, "x_" + std::string(dtype_name(dt)));
    std::string name;
    Tensor back = read_tensor_file(p, &name);
    EXPECT_TRUE(back.bit_equal(t)) << dtype_name(dt);
    EXPECT_EQ(name, "x_" + std::string(dtype_name(dt)));
  }
  Tensor s = Tensor::strings({3}, {"a", "", "longer string"});
  write_tensor_pb(d.file("s.pb"), s);
  EXPECT_TRUE(read_tensor_file(d.file("s.pb")).bit_equal(s));
  Tensor scalar = Tensor::scalar<int64_t>(-9);
  write_tensor_pb(d.file("scalar.pb"), scalar);
  EXPECT_TRUE(read_tensor_file(d.file("scalar.pb")).bit_equal(scalar));
  Tensor empty(DataType::Float, {0, 4});
  write_tensor_pb(d.file("empty.pb"), empty);
  EXPECT_TRUE(read_tensor_file(d.file("empty.pb")).bit_equal(empty));
}

TEST(TensorIo, NpyRoundTripsNumericTypes) {
  TempDir d;
  for (DataType dt : kNumeric) {
    Tensor t = sample(dt, {3, 1, 2});
    std::string p = d.file(std::string(dtype_name(dt)) + ".npy");
    write_tensor_npy(p, t);
    EXPECT_TRUE(read_tensor_file(p).bit_equal(t)) << dtype_name(dt);
  }
  Tensor scalar = Tensor::scalar<float>(1.5f);
  write_tensor_npy(d.file("s.npy"), scalar);
  EXPECT_TRUE(read_tensor_file(d.file("s.npy")).bit_equal(scalar));
  // The header is what numpy writes: version 1.0, 64-byte aligned data.
  std::ifstream f(d.file("s.npy"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((bytes.size() - 4) % 64, 0u);
  EXPECT_NE(bytes.find("'descr': '<f4', 'fortran_order': False, 'shape': (), }"), std::string::npos);
  EXPECT_THROW(write_tensor_npy(d.file("bf.npy"), sample(DataType::BFloat16, {2})), Error);
}

TEST(TensorIo, NpyFromHandWrittenBytes) {
  TempDir d;
  // C order float32 (2,3).
  std::vector<float> v{1, 2, 3, 4, 5, 6};
  write_bytes(d.file("c.npy"), npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                      std::string(reinterpret_cast<char*>(v.data()), 24)));
  Tensor c = read_tensor_file(d.file("c.npy"));
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.data<float>()[4], 5.0f);
  // Fortran order: memory holds columns; element [0][1] is the third value.
  write_bytes(d.file("f.npy"), npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                                      std::string(reinterpret_cast<char*>(v.data()), 24)));
  Tensor f = read_tensor_file(d.file("f.npy"));
  EXPECT_EQ(f.data<float>()[1], 3.0f);
  EXPECT_EQ(f.data<float>()[3], 2.0f);
  // Big-endian int32.
  write_bytes(d.file("be.npy"), npy_v1("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                                       std::string("\x00\x00\x01\x02\xff\xff\xff\xfe", 8)));
  Tensor be = read_tensor_file(d.file("be.npy"));
  EXPECT_EQ(be.data<int32_t>()[0], 0x0102);
  EXPECT_EQ(be.data<int32_t>()[1], -2);
  // Bool and a version 2.0 header.
  std::string dict = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
  std::string v2("\x93NUMPY\x02\x00", 8);
  uint32_t len = static_cast<uint32_t>(dict.size() + 1);
  v2.append(reinterpret_cast<char*>(&len), 4);
  write_bytes(d.file("b.npy"), v2 + dict + "\n" + std::string("\x01\x00\x01", 3));
  Tensor b = read_tensor_file(d.file("b.npy"));
  EXPECT_EQ(b.dtype(), DataType::Bool);
  EXPECT_EQ(b.data<uint8_t>()[2], 1);
}

TEST(TensorIo, BadFiles) {
  TempDir d;
  EXPECT_NE(read_error(d.file("missing.pb")).find("No such file"), std::string::npos);
  write_bytes(d.file("empty.pb"), "");
  EXPECT_NE(read_error(d.file("empty.pb")).find("not a tensor"), std::string::npos);
  write_bytes(d.file("text.pb"), "hello, I am text");
  read_error(d.file("text.pb"));
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.add_float_data(1);
  write_bytes(d.file("short.pb"), t.SerializeAsString());
  EXPECT_NE(read_error(d.file("short.pb")).find("float_data has 1"), std::string::npos);
  write_bytes(d.file("trunc.npy"), npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", "abc"));
  EXPECT_NE(read_error(d.file("trunc.npy")).find("data has 3 bytes"), std::string::npos);
  write_bytes(d.file("unicode.npy"), npy_v1("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", std::string(12, 'a')));
  EXPECT_NE(read_error(d.file("unicode.npy")).find("<U3"), std::string::npos);
  write_bytes(d.file("noheader.npy"), std::string("\x93NUMPY\x01\x00\xff\x00", 10));
  read_error(d.file("noheader.npy"));
}

// Every tensor input/output of ONNX's node tests reads back as the TensorProto says, decoded
// independently here from whichever field the file uses.
TEST(TensorIo, ReadsOnnxBackendTestData) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  ASSERT_TRUE(fs::exists(root));
  size_t checked = 0;
  for (const auto& test : fs::directory_iterator(root)) {
    onnx::ModelProto m;
    {
      std::ifstream f(test.path() / "model.onnx", std::ios::binary);
      if (!m.ParseFromIstream(&f)) continue;
    }
    fs::path set = test.path() / "test_data_set_0";
    if (!fs::exists(set)) continue;
    auto check = [&](const char* prefix, const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& vis) {
      for (int i = 0; i < vis.size(); ++i) {
        if (!vis[i].type().has_tensor_type()) continue;
        fs::path p = set / (std::string(prefix) + std::to_string(i) + ".pb");
        if (!fs::exists(p)) continue;
        onnx::TensorProto tp;
        std::ifstream f(p, std::ios::binary);
        ASSERT_TRUE(tp.ParseFromIstream(&f)) << p;
        Tensor t = read_tensor_file(p.string());
        ASSERT_EQ(static_cast<int>(t.dtype()), tp.data_type()) << p;
        ASSERT_EQ(t.shape(), Shape(tp.dims().begin(), tp.dims().end())) << p;
        if (tp.data_type() == onnx::TensorProto::STRING) {
          for (int k = 0; k < tp.string_data_size(); ++k) ASSERT_EQ(t.string_data()[k], tp.string_data(k)) << p;
        } else if (tp.has_raw_data()) {
          ASSERT_EQ(std::string(static_cast<const char*>(t.raw()), t.nbytes()), tp.raw_data()) << p;
        } else if (tp.data_type() == onnx::TensorProto::FLOAT) {
          for (int k = 0; k < tp.float_data_size(); ++k) ASSERT_EQ(t.data<float>()[k], tp.float_data(k)) << p;
        } else if (tp.data_type() == onnx::TensorProto::INT64) {
          for (int k = 0; k < tp.int64_data_size(); ++k) ASSERT_EQ(t.data<int64_t>()[k], tp.int64_data(k)) << p;
        } else if (tp.data_type() == onnx::TensorProto::INT32) {
          for (int k = 0; k < tp.int32_data_size(); ++k) ASSERT_EQ(t.data<int32_t>()[k], tp.int32_data(k)) << p;
        }
        ++checked;
      }
    };
    check("input_", m.graph().input());
    check("output_", m.graph().output());
  }
  std::cout << "[tensor io] backend tensors checked: " << checked << "\n";
  EXPECT_GT(checked, 2000u);
}
