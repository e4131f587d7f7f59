#include "core/onnx/tensor_io.h"

#include <filesystem>

#include "core/util/error.h"
#include "core/onnx/external_data.h"
#include "core/onnx/npy.h"
#include "core/onnx/proto_file.h"
#include "core/onnx/tensor_proto.h"

namespace fusor {

Tensor read_tensor_file(const std::string& path, std::string* name) {
  return read_tensor_bytes(read_file_bytes(path), path, name);
}

Tensor read_tensor_bytes(std::string bytes, const std::string& path, std::string* name) {
  if (bytes.empty()) throw_bad_input(path + ": empty file (0 bytes), not a tensor file");
  if (has_npy_magic(bytes)) {
    if (name) name->clear();
    return parse_npy(std::move(bytes), path);
  }
  onnx::TensorProto tp;
  // An empty or non-protobuf file, or a protobuf that is not a tensor (no data type), is rejected.
  if (!parse_proto_bytes(bytes, &tp) || !tp.has_data_type())
    throw_bad_input(path + ": not a tensor file (neither a TensorProto .pb nor an .npy)");
  std::string().swap(bytes);
  std::string dir = std::filesystem::path(path).parent_path().string();
  ExternalDataReader ext(dir.empty() ? "." : dir);
  try {
    Tensor t = tensor_from_proto(tp, &ext);
    if (name) *name = tp.name();
    return t;
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what());
  }
}

void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto tp;
  tensor_to_proto(t, &tp);
  if (!name.empty()) tp.set_name(name);
  FileSink sink(path);
  sink.write(tp.SerializeAsString());
  sink.commit();
}

void write_tensor_npy(const std::string& path, const Tensor& t) {
  std::string bytes = serialize_npy(t);
  FileSink sink(path);
  sink.write(bytes);
  sink.commit();
}

}  // namespace fusor
