#include "core/ir/dtype.h"

namespace fusor {

size_t dtype_size(DataType t) {
  switch (t) {
    case DataType::Float: case DataType::Int32: case DataType::UInt32: return 4;
    case DataType::UInt8: case DataType::Int8: case DataType::Bool: return 1;
    case DataType::UInt16: case DataType::Int16: case DataType::Float16: case DataType::BFloat16: return 2;
    case DataType::Int64: case DataType::Double: case DataType::UInt64: case DataType::Complex64: return 8;
    case DataType::Complex128: return 16;
    case DataType::String: case DataType::Undefined: return 0;
  }
  return 0;
}

const char* dtype_name(DataType t) {
  switch (t) {
    case DataType::Float: return "float";
    case DataType::UInt8: return "uint8";
    case DataType::Int8: return "int8";
    case DataType::UInt16: return "uint16";
    case DataType::Int16: return "int16";
    case DataType::Int32: return "int32";
    case DataType::Int64: return "int64";
    case DataType::String: return "string";
    case DataType::Bool: return "bool";
    case DataType::Float16: return "float16";
    case DataType::Double: return "double";
    case DataType::UInt32: return "uint32";
    case DataType::UInt64: return "uint64";
    case DataType::Complex64: return "complex64";
    case DataType::Complex128: return "complex128";
    case DataType::BFloat16: return "bfloat16";
    case DataType::Undefined: return "undefined";
  }
  return "undefined";
}

std::string tensor_type_name(DataType t) { return std::string("tensor(") + dtype_name(t) + ")"; }

DataType dtype_from_name(const std::string& name) {
  for (int i = 1; i <= 16; ++i) {
    auto t = static_cast<DataType>(i);
    if (name == dtype_name(t)) return t;
  }
  return DataType::Undefined;
}

bool dtype_is_float(DataType t) {
  return t == DataType::Float || t == DataType::Double || t == DataType::Float16 || t == DataType::BFloat16;
}

bool dtype_is_integer(DataType t) {
  switch (t) {
    case DataType::UInt8: case DataType::Int8: case DataType::UInt16: case DataType::Int16:
    case DataType::Int32: case DataType::Int64: case DataType::UInt32: case DataType::UInt64: return true;
    default: return false;
  }
}

}  // namespace fusor
