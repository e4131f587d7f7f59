// Fast 2-D convolution on the GEMM core (kernels/gemm/gemm.h), with the fused epilogue.
//
// Paths, chosen per call:
//   - 1x1, stride 1, no padding: a plain GEMM on the input (no packing of the image beyond the
//     GEMM's own panels).
//   - depthwise (group == in channels == out channels): a direct loop, vectorized along the
//     output row (NCHW) or the channels (NHWC), any kernel size, stride, dilation and pads.
//   - everything else: implicit im2col. The GEMM packs its operand panels straight from the image
//     (a kc x nc block at a time), so the scratch is bounded by the GEMM's blocks, never a full
//     im2col buffer. Groups run one GEMM each.
// Layouts: NCHW (ONNX's) and NHWC (X: N,H,W,C; Y: N,OH,OW,OC; the same weights, W: OC, C/group,
// kh, kw as in ONNX, repacked at preparation). 1-D convolutions are 2-D with H = 1.
//
// Epilogue (kernels/epilogue.h) for convolutions: ep.bias is per output channel (bias_axis is
// ignored), ep.residual is a tensor of Y's shape and layout (residual_ld is ignored); it must not
// overlap Y. Order: scale, bias, residual, activation.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"
#include "kernels/gemm/gemm.h"

namespace fusor {

enum class ConvLayout { NCHW, NHWC };

// The geometry of one call (pads resolved; see kernels/common/conv_params.h for the rules).
struct Conv2dShape {
  int64_t batch = 1, in_c = 0, in_h = 1, in_w = 1;
  int64_t out_c = 0, out_h = 1, out_w = 1;
  int64_t k_h = 1, k_w = 1;
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  int64_t group = 1;

  int64_t in_c_per_group() const { return in_c / group; }
  int64_t out_c_per_group() const { return out_c / group; }
  bool depthwise() const { return group > 1 && group == in_c && group == out_c; }
  bool pointwise() const {
    return k_h == 1 && k_w == 1 && stride_h == 1 && stride_w == 1 && pad_t == 0 && pad_l == 0 && pad_b == 0 &&
           pad_r == 0;
  }
};

struct ConvParams;
// The 2-D call geometry of a 1-D or 2-D Conv (a 1-D conv is a 2-D conv of height 1).
Conv2dShape conv2d_shape(const ConvParams& p);

// Weights (OC, C/group, kh, kw) packed once for a layout and ISA. Given a Prepacker
// (KernelInfo::prepack), every packed part is a prepacked buffer (kernels/prepack.h): "w.gG/TILE"
// per group of a GEMM path, "w.dw.nchw" or "w.dw.nhwc" for depthwise.
class PackedConvWeights {
 public:
  PackedConvWeights() = default;
  PackedConvWeights(const float* w, int64_t out_c, int64_t in_c_per_group, int64_t k_h, int64_t k_w, int64_t group,
                    ConvLayout layout, std::optional<Isa> isa = {}, const Prepacker& pp = {});

  ConvLayout layout() const { return layout_; }
  Isa isa() const { return isa_; }
  int64_t out_c() const { return out_c_; }
  int64_t in_c_per_group() const { return in_c_per_group_; }
  int64_t k_h() const { return k_h_; }
  int64_t k_w() const { return k_w_; }
  int64_t group() const { return group_; }

 private:
  friend void conv2d(const PackedConvWeights&, const Conv2dShape&, const float*, float*, const Epilogue&,
                     const GemmRun&);
  ConvLayout layout_ = ConvLayout::NCHW;
  Isa isa_ = Isa::Scalar;
  int64_t out_c_ = 0, in_c_per_group_ = 0, k_h_ = 0, k_w_ = 0, group_ = 1;
  std::vector<PackedA> a_;        // NCHW: per group, OC/g x (C/g kh kw)
  std::vector<PackedB> b_;        // NHWC: per group, (kh kw C/g) x OC/g
  std::shared_ptr<const float> depthwise_;  // depthwise: NCHW (C, kh, kw); NHWC (kh, kw, C)
};

// The weights of a 1-D (OC, C/group, k) or 2-D (OC, C/group, kh, kw) float W packed for a layout:
// what a Conv kernel makes once from a constant W (with its KernelInfo's prepacker) or per call.
PackedConvWeights pack_conv_weights(const float* w, const std::vector<int64_t>& w_shape, int64_t group,
                                    ConvLayout layout, const Prepacker& pp = {});

// Y = epilogue(conv(X, W)). The shape must agree with the packed weights (BadInput otherwise
// is the caller's job: this checks only with Internal errors).
void conv2d(const PackedConvWeights& w, const Conv2dShape& s, const float* x, float* y, const Epilogue& ep = {},
            const GemmRun& run = {});

}  // namespace fusor
