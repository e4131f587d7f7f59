// Tensor files: ONNX TensorProto (.pb, the backend test-data format) and NumPy (.npy); and the
// test-data files of sequences and optionals (SequenceProto, OptionalProto of onnx-data.proto),
// read as the run-time values of core/ir/tensor.h (Tensor::sequence, Tensor::none).
#pragma once
#include <string>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace fusor {

// Reads a .pb (TensorProto) or .npy file, chosen by content (the .npy magic) not extension.
// `name` receives the TensorProto's name when it has one. Throws BadInput naming the file when
// it is not a tensor.
Tensor read_tensor_file(const std::string& path, std::string* name = nullptr);
// The same for the file's bytes (`path` names it in messages and anchors external data).
Tensor read_tensor_bytes(std::string bytes, const std::string& path, std::string* name = nullptr);
// Reads a file holding a value of `type`: a SequenceProto for a sequence, an OptionalProto for an
// optional, read_tensor_file's formats otherwise. Throws BadInput naming the file when the
// content does not fit the type (a map in a sequence, a sequence where a tensor is declared).
Tensor read_value_file(const std::string& path, const ValueType& type);
// Writes any run-time value: a TensorProto for a tensor, a SequenceProto for a sequence, an empty
// OptionalProto for none.
void write_value_pb(const std::string& path, const Tensor& v, const std::string& name = {});
void write_tensor_pb(const std::string& path, const Tensor& t, const std::string& name = {});
void write_tensor_npy(const std::string& path, const Tensor& t);

}  // namespace fusor
