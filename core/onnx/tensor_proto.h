// onnx::TensorProto <-> fusor::Tensor, shared by import, export and the tensor files.
#pragma once
#include <string>

#include <onnx/onnx_pb.h>

#include "core/ir/tensor.h"

namespace fusor {

class ExternalDataReader;

// Converts tp. raw_data is moved out of tp into the tensor's storage (no copy); typed fields
// (float_data, int32_data, ...) are converted. External data is resolved through `ext` (BadInput
// when ext is null). Throws BadInput when the data type is unknown or the data does not match the
// shape; the message does not name the file (callers add it).
Tensor tensor_from_proto(onnx::TensorProto& tp, ExternalDataReader* ext);

// The checks tensor_from_proto makes, without converting: known data type, non-negative dims,
// data size matching the shape (external references are checked when loaded).
void check_tensor_proto(const onnx::TensorProto& tp);

// Writes t into tp (dims, data type and bytes: raw_data for numeric, string_data for strings).
// Does not touch the name.
void tensor_to_proto(const Tensor& t, onnx::TensorProto* tp);
// Only dims and data type.
void tensor_header_to_proto(const Tensor& t, onnx::TensorProto* tp);

// Checks that a data type number is one fusor models (1..16).
bool is_known_dtype(int32_t onnx_type);

}  // namespace fusor
