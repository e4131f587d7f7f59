// Helpers shared by the quantized reference kernels.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/dtype_dispatch.h"

namespace fusor {

// round(v) to nearest, ties to even, clamped to Q's range.
template <typename Q>
Q saturate_round(double v) {
  const double r = std::nearbyint(v);
  const double lo = static_cast<double>(std::numeric_limits<Q>::lowest()), hi = static_cast<double>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// The 8-bit quantized element types (int32 for QuantizeLinear's legacy int32 output too).
template <typename F>
decltype(auto) dispatch_quantized(DataType t, const std::string& where, F&& f) {
  switch (t) {
    case DataType::UInt8: return f(Tag<uint8_t>{});
    case DataType::Int8: return f(Tag<int8_t>{});
    case DataType::Int32: return f(Tag<int32_t>{});
    default: throw_unsupported_dtype(where, t);
  }
}

}  // namespace fusor
