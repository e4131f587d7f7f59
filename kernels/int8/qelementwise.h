// Vectorized loops of the int8 elementwise kernels (internal to kernels/int8): quantized Add/Mul
// rows, QuantizeLinear and DequantizeLinear on contiguous runs, the range of a float run. Each has
// a scalar definition and, on AVX-512 and on AVX2 machines, vector ones that agree with it exactly
// (same float operations per element, rounding to nearest even).
#pragma once
#include <cstdint>

namespace fusor::int8 {

// Add:  y = clamp(round(a * ka + b * kb + c), lo, hi)      (ka = sa / sy, kb = sb / sy,
//                                                          c = zy - za * ka - zb * kb)
// Mul:  y = clamp(round((a - za) * (b - zb) * k + zy), lo, hi)   (k = sa * sb / sy)
struct QBinaryConsts {
  bool mul = false;
  bool is_signed = false;  // int8 operands and result (else uint8)
  float ka = 0, kb = 0, c = 0, k = 0;
  float za = 0, zb = 0, zy = 0;
  float lo = 0, hi = 255;
};

// n elements; a and b advance by sa / sb (0: broadcast one value, 1: contiguous).
void qbinary_run(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                 int64_t n);
// y = saturate(round(x / scale) + zero_point) (ONNX QuantizeLinear, per tensor).
void quantize_run(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n);
// y = (x - zero_point) * scale (ONNX DequantizeLinear on one run sharing its parameters).
void dequantize_run(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n);
// lo = min(lo, x[i]) and hi = max(hi, x[i]) over the n elements, NaN elements skipped (the
// comparisons of DynamicQuantizeLinear's reference); returns whether any element was NaN.
bool minmax_run(const float* x, int64_t n, float& lo, float& hi);

// The AVX-512 versions (same contracts); callers check the ISA.
void qbinary_run_avx512(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                        int64_t n);
void quantize_run_avx512(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n);
void dequantize_run_avx512(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n);
bool minmax_run_avx512(const float* x, int64_t n, float& lo, float& hi);
// The AVX2 (+FMA) versions (same contracts); callers check the ISA.
void qbinary_run_avx2(const QBinaryConsts& q, const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, uint8_t* y,
                      int64_t n);
void quantize_run_avx2(const float* x, float scale, int32_t zero_point, bool is_signed, uint8_t* y, int64_t n);
void dequantize_run_avx2(const uint8_t* x, bool is_signed, float scale, int32_t zero_point, float* y, int64_t n);
bool minmax_run_avx2(const float* x, int64_t n, float& lo, float& hi);
// y[i] = table[x[i]] for n elements (table: 256 bytes), on machines with AVX512_VBMI.
void qlookup_run_avx512vbmi(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n);
// The same with AVX2 (vpshufb on 16-entry rows of the table).
void qlookup_run_avx2(const uint8_t* x, const uint8_t* table, uint8_t* y, int64_t n);

}  // namespace fusor::int8
