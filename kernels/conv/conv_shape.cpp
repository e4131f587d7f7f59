#include "kernels/common/conv_params.h"
#include "kernels/conv/conv.h"

namespace fusor {

Conv2dShape conv2d_shape(const ConvParams& p) {
  Conv2dShape s;
  const bool one_d = p.nd == 1;
  s.batch = p.batch, s.in_c = p.in_channels, s.out_c = p.out_channels, s.group = p.group;
  s.in_h = one_d ? 1 : p.in[0], s.in_w = p.in[p.nd - 1];
  s.out_h = one_d ? 1 : p.out[0], s.out_w = p.out[p.nd - 1];
  s.k_h = one_d ? 1 : p.kernel[0], s.k_w = p.kernel[p.nd - 1];
  s.stride_h = one_d ? 1 : p.strides[0], s.stride_w = p.strides[p.nd - 1];
  s.dil_h = one_d ? 1 : p.dilations[0], s.dil_w = p.dilations[p.nd - 1];
  s.pad_t = one_d ? 0 : p.pad_begin[0], s.pad_l = p.pad_begin[p.nd - 1];
  s.pad_b = one_d ? 0 : p.pad_end[0], s.pad_r = p.pad_end[p.nd - 1];
  return s;
}

}  // namespace fusor
