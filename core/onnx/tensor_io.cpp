#include "core/onnx/tensor_io.h"

#include <filesystem>

#include <onnx/onnx-data_pb.h>

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

namespace {

Tensor tensor_from_value_proto(onnx::TensorProto& tp, const std::string& path, ExternalDataReader& ext) {
  try {
    return tensor_from_proto(tp, &ext);
  } catch (const Error& e) {
    throw Error(e.kind(), path + ": " + e.what());
  }
}

Tensor sequence_from_proto(onnx::SequenceProto& sp, const ValueType& type, const std::string& path,
                           ExternalDataReader& ext) {
  if (sp.elem_type() != onnx::SequenceProto::TENSOR && sp.elem_type() != onnx::SequenceProto::UNDEFINED)
    throw_bad_input(path + ": a sequence of non-tensors (SequenceProto elem_type " + std::to_string(sp.elem_type()) +
                    "); fusor runs sequences of tensors");
  std::vector<Tensor> items;
  for (auto& tp : *sp.mutable_tensor_values()) items.push_back(tensor_from_value_proto(tp, path, ext));
  DataType elem = type.element && type.element->is_tensor() ? type.element->elem : DataType::Undefined;
  if (elem == DataType::Undefined && !items.empty()) elem = items[0].dtype();
  return Tensor::sequence(elem, std::move(items));
}

void sequence_to_proto(const Tensor& v, onnx::SequenceProto* sp) {
  sp->set_elem_type(onnx::SequenceProto::TENSOR);
  for (const Tensor& t : v.items()) tensor_to_proto(t, sp->add_tensor_values());
}

}  // namespace

Tensor read_value_file(const std::string& path, const ValueType& type) {
  if (type.is_tensor() || type.kind == TypeKind::Opaque) return read_tensor_file(path);
  std::string bytes = read_file_bytes(path);
  if (bytes.empty()) throw_bad_input(path + ": empty file (0 bytes), not a " + type.str() + " file");
  std::string dir = std::filesystem::path(path).parent_path().string();
  ExternalDataReader ext(dir.empty() ? "." : dir);
  if (type.is_sequence()) {
    onnx::SequenceProto sp;
    if (!parse_proto_bytes(bytes, &sp)) throw_bad_input(path + ": not a SequenceProto file (the model declares " + type.str() + ")");
    return sequence_from_proto(sp, type, path, ext);
  }
  onnx::OptionalProto op;
  if (!parse_proto_bytes(bytes, &op)) throw_bad_input(path + ": not an OptionalProto file (the model declares " + type.str() + ")");
  if (op.has_tensor_value()) return tensor_from_value_proto(*op.mutable_tensor_value(), path, ext);
  if (op.has_sequence_value()) {
    ValueType seq = type.element ? *type.element : ValueType::sequence(ValueType{});
    return sequence_from_proto(*op.mutable_sequence_value(), seq, path, ext);
  }
  if (op.has_sparse_tensor_value() || op.has_map_value() || op.has_optional_value())
    throw_bad_input(path + ": an optional of a sparse tensor, map or optional; fusor runs optionals of tensors and sequences");
  return Tensor::none();
}

void write_value_pb(const std::string& path, const Tensor& v, const std::string& name) {
  if (v.is_plain()) {
    write_tensor_pb(path, v, name);
    return;
  }
  std::string bytes;
  if (v.is_sequence()) {
    onnx::SequenceProto sp;
    if (!name.empty()) sp.set_name(name);
    sequence_to_proto(v, &sp);
    bytes = sp.SerializeAsString();
  } else {
    onnx::OptionalProto op;
    if (!name.empty()) op.set_name(name);
    bytes = op.SerializeAsString();
  }
  FileSink sink(path);
  sink.write(bytes);
  sink.commit();
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
