#include "kernels/int8/qelementwise.h"

#include <algorithm>
#include <cmath>

#include "kernels/cpu_features.h"

namespace fusor::int8 {
namespace {

inline float load(const uint8_t* p, bool s) { return s ? static_cast<float>(static_cast<int8_t>(*p)) : static_cast<float>(*p); }

inline uint8_t store(float f, float lo, float hi) {
  return static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(std::min(std::max(f, lo), hi))));
}

bool use_avx512() { return active_isa() == Isa::Avx512; }
bool use_avx2() { return active_isa() == Isa::Avx2; }

}  // namespace

void qbinary_run(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                 int64_t n) {
  if (use_avx512()) return qbinary_run_avx512(q, a, sa, b, sb, y, n);
  if (use_avx2()) return qbinary_run_avx2(q, a, sa, b, sb, y, n);
  for (int64_t i = 0; i < n; ++i) {
    const float av = load(a + i * sa, q.is_signed), bv = load(b + i * sb, q.is_signed);
    const float f = q.mul ? std::fma((av - q.za) * (bv - q.zb), q.k, q.zy) : std::fma(av, q.ka, std::fma(bv, q.kb, q.c));
    y[i] = store(f, q.lo, q.hi);
  }
}

void quantize_run(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n) {
  if (use_avx512()) return quantize_run_avx512(x, scale, zero_point, is_signed, y, n);
  if (use_avx2()) return quantize_run_avx2(x, scale, zero_point, is_signed, y, n);
  const float lo = is_signed ? -128.0f : 0.0f, hi = is_signed ? 127.0f : 255.0f, z = static_cast<float>(zero_point);
  for (int64_t i = 0; i < n; ++i) {
    const float r = std::nearbyint(x[i] / scale);
    y[i] = store((std::isnan(r) ? 0.0f : r) + z, lo, hi);
  }
}

bool minmax_run(const float* x, int64_t n, float& lo, float& hi) {
  if (use_avx512()) return minmax_run_avx512(x, n, lo, hi);
  if (use_avx2()) return minmax_run_avx2(x, n, lo, hi);
  bool nan = false;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    nan = nan || std::isnan(x[i]);
  }
  return nan;
}

void dequantize_run(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n) {
  if (use_avx512()) return dequantize_run_avx512(x, is_signed, scale, zero_point, y, n);
  if (use_avx2()) return dequantize_run_avx2(x, is_signed, scale, zero_point, y, n);
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = is_signed ? static_cast<int8_t>(x[i]) : x[i];
    y[i] = static_cast<float>(v - zero_point) * scale;
  }
}

}  // namespace fusor::int8
