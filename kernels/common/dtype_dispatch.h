// Run-time element type -> compile-time C++ type.
//
// Each dispatch_* calls f(Tag<T>{}) for the tensor's element type T and returns what f returns;
// inside f, `using T = typename decltype(tag)::type;`. An element type outside the family throws
// BadInput "<where>: unsupported element type X", so kernels reject bad input instead of crashing.
//
//   dispatch_float      float, double                       (transcendental math)
//   dispatch_signed     float, double, int64, int32, int16, int8    (Neg, Abs-like, Sign)
//   dispatch_numeric    the above plus uint8/16/32/64       (arithmetic, comparisons, reductions)
//   dispatch_numeric_bool  numeric plus bool                (Where, Equal, Max on bool...)
//   dispatch_by_size    an unsigned integer type of the element's byte size (1/2/4/8), for ops
//                       that only move elements (Gather, Concat, Transpose, Pad...). float16 and
//                       bfloat16 ride along as uint16_t. Strings are not handled here.
//
// float16/bfloat16 arithmetic is not dispatched; convert with kernels/common/half.h.
#pragma once
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/ir/dtype.h"
#include "core/util/error.h"

namespace fusor {

template <typename T>
struct Tag {
  using type = T;
};

[[noreturn]] inline void throw_unsupported_dtype(const std::string& where, DataType t) {
  throw_bad_input(where + ": unsupported element type " + dtype_name(t));
}

template <typename F>
decltype(auto) dispatch_float(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::Float: return f(Tag<float>{});
    case DataType::Double: return f(Tag<double>{});
    default: throw_unsupported_dtype(where, t);
  }
}

template <typename F>
decltype(auto) dispatch_signed(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::Float: return f(Tag<float>{});
    case DataType::Double: return f(Tag<double>{});
    case DataType::Int64: return f(Tag<int64_t>{});
    case DataType::Int32: return f(Tag<int32_t>{});
    case DataType::Int16: return f(Tag<int16_t>{});
    case DataType::Int8: return f(Tag<int8_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

template <typename F>
decltype(auto) dispatch_numeric(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::Float: return f(Tag<float>{});
    case DataType::Double: return f(Tag<double>{});
    case DataType::Int64: return f(Tag<int64_t>{});
    case DataType::Int32: return f(Tag<int32_t>{});
    case DataType::Int16: return f(Tag<int16_t>{});
    case DataType::Int8: return f(Tag<int8_t>{});
    case DataType::UInt8: return f(Tag<uint8_t>{});
    case DataType::UInt16: return f(Tag<uint16_t>{});
    case DataType::UInt32: return f(Tag<uint32_t>{});
    case DataType::UInt64: return f(Tag<uint64_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

template <typename F>
decltype(auto) dispatch_numeric_bool(DataType t, const std::string& where, F&& f) {
  if (t == DataType::Bool) return f(Tag<bool>{});
  return dispatch_numeric(t, where, std::forward<F>(f));
}

template <typename F>
decltype(auto) dispatch_by_size(DataType t, const std::string& where, F&& f) {
  switch (t == DataType::String ? 0 : dtype_size(t)) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<uint64_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

}  // namespace fusor
