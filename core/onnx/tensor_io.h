// Tensor files: ONNX TensorProto (.pb, the backend test-data format) and NumPy (.npy).
#pragma once
#include <string>

#include "core/ir/tensor.h"

namespace fusor {

// Reads a .pb (TensorProto) or .npy file, chosen by content (the .npy magic) not extension.
// `name` receives the TensorProto's name when it has one. Throws BadInput naming the file when
// it is not a tensor.
Tensor read_tensor_file(const std::string& path, std::string* name = nullptr);
// The same for the file's bytes (`path` names it in messages and anchors external data).
Tensor read_tensor_bytes(std::string bytes, const std::string& path, std::string* name = nullptr);
void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name = {});
void write_tensor_npy(const std::string& path, const Tensor& t);

}  // namespace fusor
