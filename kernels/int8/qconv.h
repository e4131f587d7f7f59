// int8 2-D convolution on NHWC data (fusor.NhwcQConv; fusor.QConv runs it between transposes):
// uint8/int8 activations, 8-bit weights prepacked at kernel creation with their zero-point and
// bias terms folded into per-channel constants, requantized (or residual-added) in the epilogue.
//
// Paths: depthwise (group == C == OC): a direct loop over output pixels, vectorized over channels
// (kernels/int8/qdepthwise.h: AVX512-VNNI with four taps per vpdpbusd when the weights fit int8,
// one band of output rows per thread; else vpdpwssd on
// widened bytes; on AVX2 and AVX-VNNI vpmaddwd on bytes widened to int16; scalar otherwise). Everything else on the int8 GEMM core
// (kernels/int8/qgemm.h) with pixels as rows and output channels as columns: a 1x1, stride 1,
// unpadded conv reads X in place (C % 4 == 0). On AVX512-VNNI, with one group, C % 4 == 0 and
// no weight zero points, the GEMM is implicit: X is copied once with its pads (X's zero point;
// int8 flipped to uint8; no copy without pads) and each pixel's row of A is read in place as k_h
// segments of k_w * C contiguous bytes, one per kernel row (qgemm_rows_segmented); rows in blocks
// of about 120 pixels. Otherwise rows of im2col (kh, kw, c order, padded
// taps filled with X's zero point so they contribute nothing; with one group the taps of a kernel
// row are one copy) are built per block of rows in scratch, one group at a time. Threads take
// tasks of one row block and a range of weight panels (panels split when the output has few rows).
//
// Activations of int8 type are handled by flipping their sign bit into uint8 (zero point + 128)
// on the way in and out of the core; the kernels themselves see uint8 only.
//
// Dynamic quantization (fusor.ConvIntegerToFloat, spec.dynamic): X's scale and zero point are known
// only per call, so the weights are prepared without them (spec.x and spec.y unused) and run_float
// computes the per-channel constants of each call (the zero-point terms, x_scale * w_scale) and
// writes float NHWC through the F32 epilogue; uint8 X only. A depthwise conv takes the vpdpwssd
// (AVX512-VNNI), AVX2 or scalar depthwise kernel: the four-tap one keeps the epilogue's constants.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/int8/qdepthwise.h"
#include "kernels/int8/qgemm.h"
#include "kernels/int8/qwinograd.h"

namespace fusor {

class ThreadPool;

namespace int8 {

// Per-tensor quantization of an activation.
struct QParam {
  float scale = 1.0f;
  int32_t zero_point = 0;
};

// Everything about one quantized conv that does not depend on the input's spatial size.
struct QConvSpec {
  int64_t out_c = 0, in_c_per_group = 0, k_h = 1, k_w = 1, group = 1;
  bool signed_act = false;   // int8 activations (else uint8)
  QParam x, y;
  bool residual = false;     // Z present: conv output quantized at `conv`, Z at `z`, sum at `y`
  QParam conv, z;
  float act_lo = -3.0e38f, act_hi = 3.0e38f;  // the clamp of the activation, in real values
  bool dynamic = false;      // X's parameters given per call, float output: run_float only
  // Strides and dilations are 1: a 3x3 conv with one group may take the exact Winograd form
  // (kernels/int8/qwinograd.h) on AVX2, unless FUSOR_INT8_WINOGRAD=0.
  bool unit_stride = false;
  // 2 or 4: only F(2x2, 3x3) or only F(4x4, 3x3) (when its bound holds); 0: chosen per conv.
  // Tests and benchmarks; FUSOR_INT8_WINOGRAD=2 or =4 does the same.
  int winograd_tile = 0;
};

// The weights and per-channel constants, prepared once.
class QConvWeights {
 public:
  QConvWeights() = default;
  // w: OC x Cg x kh x kw bytes (int8, or uint8 when !w_signed); w_scale: 1 or OC values;
  // w_zero: null or 1 or OC values; bias: null or OC int32 values with bias_scale (1 or OC values).
  QConvWeights(const QConvSpec& spec, const void* w, bool w_signed, const float* w_scale, int64_t w_scale_n,
               const int32_t* w_zero, int64_t w_zero_n, const int32_t* bias, const float* bias_scale,
               int64_t bias_scale_n, Int8Isa isa);

  const QConvSpec& spec() const { return spec_; }
  bool depthwise() const { return depthwise_; }
  // Whether the convs run in the Winograd form (no GEMM weights packed then), and its output tile.
  bool winograd() const { return !wino_.empty(); }
  int winograd_tile() const { return wino_.empty() ? 0 : wino_.tile(); }

  // y (NHWC, output type of spec) from x (NHWC); z: the residual, shaped like y, or null.
  void run(const Conv2dShape& s, const uint8_t* x, const uint8_t* z, uint8_t* y, ThreadPool* pool,
           const std::function<void*(size_t)>& scratch) const;
  // spec.dynamic: y (NHWC float) = act(acc * (x_scale * w_scale[oc]) + bias[oc]) from uint8 x (NHWC)
  // with zero point x_zero; acc is the exact int32 sum of (x - x_zero)(w - w_zero). bias: OC values
  // or null; act: any (the clamps vectorized in the epilogue, others one element at a time).
  void run_float(const Conv2dShape& s, const uint8_t* x, int32_t x_zero, float x_scale, const float* bias,
                 const ActivationSpec& act, float* y, ThreadPool* pool,
                 const std::function<void*(size_t)>& scratch) const;

 private:
  // The GEMM paths with epilogue ep (output type ep.out, y at element granularity); x_zero_u8: X's
  // zero point in the uint8 domain (the value of padded taps).
  void run_gemm(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero_u8, void* y,
                ThreadPool* pool, const std::function<void*(size_t)>& scratch) const;
  // The implicit GEMM (AVX512-VNNI, one group, C % 4 == 0, no dilation along W, no weight zero
  // points): false when it does not apply.
  bool run_implicit(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero_u8, void* y,
                    ThreadPool* pool, const std::function<void*(size_t)>& scratch) const;
  // Depthwise with epilogue ep (its residual set by the caller); x_zero: X's zero point in X's type.
  void run_depthwise(const Conv2dShape& s, const uint8_t* x, const QEpilogue& ep, int32_t x_zero, void* y,
                     ThreadPool* pool, const std::function<void*(size_t)>& scratch) const;

  QConvSpec spec_;
  bool depthwise_ = false;
  Int8Isa isa_ = Int8Isa::Scalar;
  int32_t x_zero_u8_ = 0;                  // X's zero point as the kernels see it (uint8 domain)
  std::vector<QPackedB> packed_;           // per group, K = kh * kw * Cg, N = OC / group
  std::vector<int32_t> col_offset_, col_bzero_;  // per output channel
  std::vector<float> mult_, add_;
  bool need_row_sums_ = false;
  std::vector<int32_t> dw_weights_;        // depthwise: [tap][C rounded to 16], zero point removed
  int64_t dw_stride_ = 0;
  QDepthwise4 dw4_;                        // depthwise, AVX512-VNNI, weights that fit int8
  QDepthwiseAvx2 dw_avx2_;                 // depthwise, AVX2 and AVX-VNNI
  QEpilogue epilogue_;                     // the per-channel arrays above, plus clamps and residual factors
  QWinograd wino_;                         // AVX2, 3x3, unit strides, one group: the Winograd form
  std::vector<int32_t> bias_offset_;       // col_offset_'s bias part alone (the Winograd sums lack nothing else)
};

}  // namespace int8
}  // namespace fusor
