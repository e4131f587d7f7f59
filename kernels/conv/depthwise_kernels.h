// Internal: the direct depthwise loops, compiled once per ISA (depthwise_<isa>.cpp) from
// depthwise_impl.h. They compute the raw convolution; conv.cpp applies the epilogue.
#pragma once
#include <cstdint>

#include "kernels/cpu_features.h"

namespace fusor::conv_detail {

// Plain numbers of a depthwise call (no member functions: safe to use from the ISA files).
struct DwGeom {
  int64_t in_h, in_w, out_h, out_w, k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
  int64_t channels;  // NHWC: the channel count (row stride of a pixel)
};

struct DepthwiseKernels {
  // NCHW: one channel plane from its zero-padded copy xp (rows of pw floats, row 0 / column 0
  // at input (-pad_t, -pad_l), covering every tap); w: k_h x k_w; y: out_h x out_w.
  // tmp: room for out_h * pw floats.
  void (*plane_nchw)(const float* xp, int64_t pw, const float* w, float* y, const DwGeom& g, float* tmp);
  // NHWC: output rows [oy0, oy1) of one image; x: in_h x in_w x C, w: k_h x k_w x C.
  void (*rows_nhwc)(const float* x, const float* w, float* y, const DwGeom& g, int64_t oy0, int64_t oy1);
};

const DepthwiseKernels& depthwise_kernels(Isa isa);
const DepthwiseKernels& depthwise_kernels_avx512();
const DepthwiseKernels& depthwise_kernels_avx2();
const DepthwiseKernels& depthwise_kernels_scalar();

}  // namespace fusor::conv_detail
