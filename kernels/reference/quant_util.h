// Helpers shared by the quantized reference kernels.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/dtype_dispatch.h"

namespace fusor {

// round(v) to nearest, ties to even, clamped to Q's range; NaN gives 0 (converting NaN to an
// integer is undefined behaviour in C++).
template <typename Q>
Q saturate_round(double v) {
  if (std::isnan(v)) return Q{0};
  const double r = std::nearbyint(v);
  const double lo = static_cast<double>(std::numeric_limits<Q>::lowest()), hi = static_cast<double>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// The quantized value of `scaled` = x / y_scale (already divided, in the precision the op
// specifies): round(scaled) + zero_point, saturated. A scale of 0 (which ONNX does not forbid)
// is defined here: x / 0 = +-inf saturates to Q's range, and 0 / 0 or a NaN input (NaN) gives the
// zero point, the code of 0.
template <typename Q>
Q quantize_round(double scaled, double zero_point) {
  return saturate_round<Q>((std::isnan(scaled) ? 0.0 : std::nearbyint(scaled)) + zero_point);
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
