// Element types, numbered as ONNX's TensorProto.DataType so conversion is a cast.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace fusor {

enum class DataType : int32_t {
  Undefined = 0, Float = 1, UInt8 = 2, Int8 = 3, UInt16 = 4, Int16 = 5, Int32 = 6, Int64 = 7,
  String = 8, Bool = 9, Float16 = 10, Double = 11, UInt32 = 12, UInt64 = 13, Complex64 = 14,
  Complex128 = 15, BFloat16 = 16,
};

// Bytes per element; 0 for String and Undefined.
size_t dtype_size(DataType t);
// ONNX's spelling: "float", "int64", "bool", ...
const char* dtype_name(DataType t);
// "tensor(float)"
std::string tensor_type_name(DataType t);
// Inverse of dtype_name; Undefined when unknown.
DataType dtype_from_name(const std::string& name);
bool dtype_is_float(DataType t);
bool dtype_is_integer(DataType t);

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DataType value = DataType::Float; };
template <> struct dtype_of<double> { static constexpr DataType value = DataType::Double; };
template <> struct dtype_of<int64_t> { static constexpr DataType value = DataType::Int64; };
template <> struct dtype_of<int32_t> { static constexpr DataType value = DataType::Int32; };
template <> struct dtype_of<int16_t> { static constexpr DataType value = DataType::Int16; };
template <> struct dtype_of<int8_t> { static constexpr DataType value = DataType::Int8; };
template <> struct dtype_of<uint8_t> { static constexpr DataType value = DataType::UInt8; };
template <> struct dtype_of<uint16_t> { static constexpr DataType value = DataType::UInt16; };
template <> struct dtype_of<uint32_t> { static constexpr DataType value = DataType::UInt32; };
template <> struct dtype_of<uint64_t> { static constexpr DataType value = DataType::UInt64; };
template <> struct dtype_of<bool> { static constexpr DataType value = DataType::Bool; };

}  // namespace fusor
