#include "core/onnx/tensor_proto.h"

#include <cstring>

#include "core/util/error.h"
#include "core/onnx/external_data.h"

namespace fusor {

bool is_known_dtype(int32_t t) { return t >= 1 && t <= 16; }

namespace {

std::string size_mismatch(const char* field, size_t have, size_t need, DataType dt, const Shape& shape,
                          const char* unit) {
  return std::string("tensor of shape ") + shape_str(shape) + " (" + dtype_name(dt) + ") needs " +
         std::to_string(need) + " " + unit + " but its " + field + " has " + std::to_string(have);
}

// The typed field a tensor without raw_data keeps its elements in, and how many per element.
struct TypedField {
  const char* name;
  size_t count;
  size_t per_elem;
};

TypedField typed_field(const onnx::TensorProto& tp, DataType dt) {
  switch (dt) {
    case DataType::Float: return {"float_data", static_cast<size_t>(tp.float_data_size()), 1};
    case DataType::Complex64: return {"float_data", static_cast<size_t>(tp.float_data_size()), 2};
    case DataType::Double: return {"double_data", static_cast<size_t>(tp.double_data_size()), 1};
    case DataType::Complex128: return {"double_data", static_cast<size_t>(tp.double_data_size()), 2};
    case DataType::Int64: return {"int64_data", static_cast<size_t>(tp.int64_data_size()), 1};
    case DataType::UInt32:
    case DataType::UInt64: return {"uint64_data", static_cast<size_t>(tp.uint64_data_size()), 1};
    case DataType::String: return {"string_data", static_cast<size_t>(tp.string_data_size()), 1};
    default: return {"int32_data", static_cast<size_t>(tp.int32_data_size()), 1};
  }
}

template <typename Dst, typename Field>
Tensor from_field(const Field& f, DataType dt, Shape shape) {
  Tensor t(dt, std::move(shape));
  Dst* d = static_cast<Dst*>(t.raw());
  const int n = f.size();
  for (int i = 0; i < n; ++i) d[i] = static_cast<Dst>(f.Get(i));
  return t;
}

}  // namespace

void check_tensor_proto(const onnx::TensorProto& tp) {
  if (!is_known_dtype(tp.data_type()))
    throw_bad_input("tensor has unsupported data type " + std::to_string(tp.data_type()));
  auto dt = static_cast<DataType>(tp.data_type());
  Shape shape(tp.dims().begin(), tp.dims().end());
  unsigned __int128 count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw_bad_input("tensor has a negative dimension in shape " + shape_str(shape));
    count *= static_cast<uint64_t>(d);
    if (count > (static_cast<unsigned __int128>(1) << 50)) throw_bad_input("tensor shape " + shape_str(shape) + " is too large");
  }
  if (tp.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    if (dt == DataType::String) throw_bad_input("string tensor with external data");
    return;
  }
  size_t numel = static_cast<size_t>(count);
  if (tp.has_raw_data()) {
    if (dt == DataType::String) throw_bad_input("string tensor with raw_data");
    size_t need = numel * dtype_size(dt);
    if (tp.raw_data().size() != need) throw_bad_input(size_mismatch("raw_data", tp.raw_data().size(), need, dt, shape, "bytes"));
    return;
  }
  TypedField f = typed_field(tp, dt);
  if (f.count != numel * f.per_elem)
    throw_bad_input(size_mismatch(f.name, f.count, numel * f.per_elem, dt, shape, "values"));
}

Tensor tensor_from_proto(onnx::TensorProto& tp, ExternalDataReader* ext) {
  check_tensor_proto(tp);
  auto dt = static_cast<DataType>(tp.data_type());
  Shape shape(tp.dims().begin(), tp.dims().end());

  if (tp.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    if (!ext) throw_bad_input("tensor uses external data, which is not available here");
    return ext->load(tp, dt, shape);
  }
  if (tp.has_raw_data()) {
    std::string bytes;
    tp.mutable_raw_data()->swap(bytes);
    tp.clear_raw_data();
    return Tensor(dt, std::move(shape), make_string_buffer(std::move(bytes)));
  }
  switch (dt) {
    case DataType::String: {
      std::vector<std::string> v;
      v.reserve(static_cast<size_t>(tp.string_data_size()));
      for (auto& s : *tp.mutable_string_data()) v.push_back(std::move(s));
      return Tensor::strings(std::move(shape), std::move(v));
    }
    case DataType::Float:
    case DataType::Complex64: return from_field<float>(tp.float_data(), dt, std::move(shape));
    case DataType::Double:
    case DataType::Complex128: return from_field<double>(tp.double_data(), dt, std::move(shape));
    case DataType::Int64: return from_field<int64_t>(tp.int64_data(), dt, std::move(shape));
    case DataType::UInt32: return from_field<uint32_t>(tp.uint64_data(), dt, std::move(shape));
    case DataType::UInt64: return from_field<uint64_t>(tp.uint64_data(), dt, std::move(shape));
    case DataType::Int32: return from_field<int32_t>(tp.int32_data(), dt, std::move(shape));
    case DataType::Int16: return from_field<int16_t>(tp.int32_data(), dt, std::move(shape));
    case DataType::Int8: return from_field<int8_t>(tp.int32_data(), dt, std::move(shape));
    case DataType::UInt8: return from_field<uint8_t>(tp.int32_data(), dt, std::move(shape));
    // float16/bfloat16 keep their 16-bit patterns in int32_data.
    case DataType::UInt16:
    case DataType::Float16:
    case DataType::BFloat16: return from_field<uint16_t>(tp.int32_data(), dt, std::move(shape));
    case DataType::Bool: {
      Tensor t(dt, std::move(shape));
      uint8_t* d = t.data<uint8_t>();
      for (int i = 0; i < tp.int32_data_size(); ++i) d[i] = tp.int32_data(i) != 0;
      return t;
    }
    case DataType::Undefined: break;
  }
  throw_bad_input("tensor has unsupported data type " + std::to_string(tp.data_type()));
}

void tensor_header_to_proto(const Tensor& t, onnx::TensorProto* tp) {
  tp->set_data_type(static_cast<int32_t>(t.dtype()));
  tp->clear_dims();
  for (int64_t d : t.shape()) tp->add_dims(d);
}

void tensor_to_proto(const Tensor& t, onnx::TensorProto* tp) {
  tensor_header_to_proto(t, tp);
  if (t.dtype() == DataType::String) {
    for (const auto& s : t.string_data()) tp->add_string_data(s);
    return;
  }
  tp->set_raw_data(static_cast<const char*>(t.raw()), t.nbytes());
}

}  // namespace fusor
