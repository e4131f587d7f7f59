// External tensor data: weights kept in side files next to the model (TensorProto with
// data_location = EXTERNAL and external_data entries location/offset/length).
#pragma once
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include <onnx/onnx_pb.h>

#include "core/ir/tensor.h"

namespace fusor {

// Resolves external references relative to a base directory. Each side file is memory-mapped
// once (copy-on-write, so the file is never modified) and shared by the tensors that use it.
class ExternalDataReader {
 public:
  explicit ExternalDataReader(std::string base_dir) : base_dir_(std::move(base_dir)) {}
  // A tensor over the referenced bytes. Throws BadInput (message without the model file name)
  // when the reference is malformed, escapes the base directory, or does not fit the file.
  Tensor load(const onnx::TensorProto& tp, DataType dtype, const Shape& shape);

 private:
  std::shared_ptr<Buffer> map_file(const std::string& location);
  std::string base_dir_;
  std::map<std::string, std::shared_ptr<Buffer>> files_;
};

// Appends tensors to one side file; tensors record where their bytes went.
class ExternalDataWriter {
 public:
  // `data_path` is the file to create (written as data_path.tmp and renamed into place by
  // finish(), so a file that is still memory-mapped is never truncated); `location` is how the
  // model refers to it (a file name relative to the model's directory).
  ExternalDataWriter(std::string data_path, std::string location);
  ~ExternalDataWriter();
  ExternalDataWriter(const ExternalDataWriter&) = delete;
  ExternalDataWriter& operator=(const ExternalDataWriter&) = delete;
  // Writes t's bytes and fills tp's data_location and external_data.
  void write(const Tensor& t, onnx::TensorProto* tp);
  // Flushes and closes; throws BadInput on an I/O error.
  void finish();

 private:
  std::string path_, tmp_, location_;
  std::FILE* f_ = nullptr;
  uint64_t offset_ = 0;
};

// Tensors at least this large go to the side file when external data is written.
inline constexpr size_t kExternalDataThreshold = 1024;

}  // namespace fusor
