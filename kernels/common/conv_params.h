// Attribute parsing and output-shape computation for sliding-window ops, shared by the
// reference kernels and the fast Conv paths so every implementation agrees on the geometry.
//
// Two steps, matching the kernel contract:
//   1. WindowAttrs::parse(node, kind) in the kernel's constructor: reads auto_pad, kernel_shape,
//      strides, dilations, pads, group, ceil_mode, output_padding, output_shape once, validates
//      them, and throws BadInput naming the node when they are malformed.
//   2. conv_params / conv_transpose_params / pool_params at compute time (input shapes may be
//      dynamic): resolve kernel size (from W when kernel_shape is absent), auto_pad padding, and
//      the output shape. They throw BadInput naming the node on inconsistent shapes.
//
// Conventions (all per spatial axis i, 0 <= i < nd):
//   effective kernel  ek[i] = (kernel[i] - 1) * dilations[i] + 1
//   Conv / Pool       out[i] = (in[i] + pad_begin[i] + pad_end[i] - ek[i]) / strides[i] + 1
//                     (floor division; pools with ceil_mode round up)
//                     input coordinate of out o, tap k: o * strides[i] - pad_begin[i] + k * dilations[i]
//   ConvTranspose     out[i] = strides[i] * (in[i] - 1) + output_padding[i] + ek[i]
//                              - pad_begin[i] - pad_end[i]
//                     input x at position p (per axis) and tap k contributes to
//                     output p * strides[i] - pad_begin[i] + k * dilations[i]
//   auto_pad SAME_UPPER / SAME_LOWER (Conv, Pool): out[i] = ceil(in[i] / strides[i]),
//     total = max(0, (out[i] - 1) * strides[i] + ek[i] - in[i]); SAME_UPPER puts the odd extra
//     pad at the end, SAME_LOWER at the beginning. VALID: zero pads.
//   ConvTranspose with output_shape or SAME_*: ONNX's total_padding rule (see the .cpp).
//   Pad values can be negative for ConvTranspose with an output_shape bigger than the natural
//   one; kernels must bounds-check every computed coordinate anyway.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/tensor.h"

namespace fusor {

enum class AutoPad { NotSet, SameUpper, SameLower, Valid };

enum class WindowKind { Conv, ConvTranspose, Pool };

// Attributes as written on the node; empty vectors mean "absent" (defaults are applied when the
// rank is known, in the *_params functions).
struct WindowAttrs {
  WindowKind kind = WindowKind::Conv;
  AutoPad auto_pad = AutoPad::NotSet;
  int64_t group = 1;
  bool ceil_mode = false;                 // pools only
  std::vector<int64_t> kernel_shape;      // required for pools; Conv may infer it from W
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads;              // ONNX layout: [b_0..b_{n-1}, e_0..e_{n-1}]
  std::vector<int64_t> output_padding;    // ConvTranspose only
  std::vector<int64_t> output_shape;      // ConvTranspose only (spatial dims, or full N,C,... dims)
  std::string where;                      // "node 'conv1' (Conv)" for messages

  static WindowAttrs parse(const Node& node, WindowKind kind);
};

// Fully resolved geometry of one call.
struct ConvParams {
  int nd = 0;                    // number of spatial axes
  int64_t batch = 0;             // N
  int64_t in_channels = 0;       // C of X
  int64_t out_channels = 0;      // M of Y (pools: = C)
  int64_t group = 1;
  Shape in;                      // spatial dims of X
  Shape kernel;                  // spatial dims of W (or kernel_shape)
  Shape out;                     // spatial dims of Y
  Shape strides, dilations;
  Shape pad_begin, pad_end;      // resolved, auto_pad applied
  Shape output_padding;          // ConvTranspose only (zeros otherwise)

  int64_t in_per_group() const { return in_channels / group; }
  int64_t out_per_group() const { return out_channels / group; }
  // {batch, out_channels, out...}
  Shape output_shape() const;
  int64_t in_spatial_size() const { return shape_numel(in); }
  int64_t out_spatial_size() const { return shape_numel(out); }
  int64_t kernel_size() const { return shape_numel(kernel); }
};

// Conv: X is (N, C, in...), W is (M, C/group, k...).
ConvParams conv_params(const WindowAttrs& a, const Shape& x, const Shape& w);
// ConvTranspose: X is (N, C, in...), W is (C, M/group, k...); Y has M channels.
ConvParams conv_transpose_params(const WindowAttrs& a, const Shape& x, const Shape& w);
// MaxPool / AveragePool / LpPool: X is (N, C, in...); kernel from kernel_shape; group = 1.
ConvParams pool_params(const WindowAttrs& a, const Shape& x);

}  // namespace fusor
