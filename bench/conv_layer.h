// A convolution layer of a benchmark table (bench/conv_bench, nchwc_conv_bench, qconv_bench: batch
// 1, square kernel, symmetric pads) and the Conv2dShape it describes.
#pragma once
#include <cstdint>

#include "kernels/conv/conv.h"

namespace fusor::bench {

struct ConvLayer {
  const char* name;
  int64_t c, h, w, oc, k, stride, pad, group;
  bool relu6 = false;  // the mobile layers' Clip 0..6 (else Relu), where a bench fuses one
};

inline Conv2dShape conv_shape(const ConvLayer& L) {
  Conv2dShape s;
  s.in_c = L.c, s.in_h = L.h, s.in_w = L.w, s.out_c = L.oc, s.k_h = s.k_w = L.k;
  s.stride_h = s.stride_w = L.stride, s.pad_t = s.pad_l = s.pad_b = s.pad_r = L.pad, s.group = L.group;
  s.out_h = (L.h + 2 * L.pad - L.k) / L.stride + 1;
  s.out_w = (L.w + 2 * L.pad - L.k) / L.stride + 1;
  return s;
}

}  // namespace fusor::bench
