#include "kernels/common/conv_params.h"

#include <algorithm>

#include "core/util/error.h"

namespace fusor {

namespace {

AutoPad parse_auto_pad(const std::string& s, const std::string& where) {
  if (s.empty() || s == "NOTSET") return AutoPad::NotSet;
  if (s == "SAME_UPPER") return AutoPad::SameUpper;
  if (s == "SAME_LOWER") return AutoPad::SameLower;
  if (s == "VALID") return AutoPad::Valid;
  throw_bad_input(where + ": unknown auto_pad '" + s + "'");
}

// Fills an absent per-axis attribute with `dflt`, checks the length otherwise.
Shape per_axis(const std::vector<int64_t>& v, int nd, int64_t dflt, const char* name, const std::string& where) {
  if (v.empty()) return Shape(nd, dflt);
  if (static_cast<int>(v.size()) != nd)
    throw_bad_input(where + ": " + name + " has " + std::to_string(v.size()) + " values, expected " +
                    std::to_string(nd));
  return v;
}

void check_positive(const Shape& v, const char* name, const std::string& where) {
  for (int64_t x : v)
    if (x <= 0) throw_bad_input(where + ": " + name + " must be positive");
}

int64_t ceil_div(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The spatial geometry shared by Conv and pools: strides, dilations, pads, out.
void resolve_forward(const WindowAttrs& a, ConvParams& p, bool ceil_mode) {
  const int nd = p.nd;
  p.strides = per_axis(a.strides, nd, 1, "strides", a.where);
  p.dilations = per_axis(a.dilations, nd, 1, "dilations", a.where);
  check_positive(p.strides, "strides", a.where);
  check_positive(p.dilations, "dilations", a.where);
  check_positive(p.kernel, "kernel_shape", a.where);
  p.pad_begin.assign(nd, 0);
  p.pad_end.assign(nd, 0);
  p.out.assign(nd, 0);
  p.output_padding.assign(nd, 0);
  if (a.auto_pad == AutoPad::NotSet && !a.pads.empty()) {
    if (static_cast<int>(a.pads.size()) != 2 * nd)
      throw_bad_input(a.where + ": pads has " + std::to_string(a.pads.size()) + " values, expected " +
                      std::to_string(2 * nd));
    for (int i = 0; i < nd; ++i) {
      p.pad_begin[i] = a.pads[i];
      p.pad_end[i] = a.pads[nd + i];
      if (p.pad_begin[i] < 0 || p.pad_end[i] < 0) throw_bad_input(a.where + ": negative pads");
    }
  }
  for (int i = 0; i < nd; ++i) {
    const int64_t ek = (p.kernel[i] - 1) * p.dilations[i] + 1;
    if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
      p.out[i] = ceil_div(p.in[i], p.strides[i]);
      int64_t total = std::max<int64_t>(0, (p.out[i] - 1) * p.strides[i] + ek - p.in[i]);
      int64_t small = total / 2, big = total - small;
      p.pad_begin[i] = a.auto_pad == AutoPad::SameUpper ? small : big;
      p.pad_end[i] = a.auto_pad == AutoPad::SameUpper ? big : small;
      continue;
    }
    const int64_t span = p.in[i] + p.pad_begin[i] + p.pad_end[i] - ek;
    if (span < 0)
      throw_bad_input(a.where + ": kernel (" + std::to_string(ek) + " with dilation) is larger than the padded input (" +
                      std::to_string(p.in[i] + p.pad_begin[i] + p.pad_end[i]) + ") on spatial axis " + std::to_string(i));
    if (ceil_mode) {
      p.out[i] = ceil_div(span, p.strides[i]) + 1;
      // The last window must start inside the input or its leading pad (as ONNX Runtime and
      // PyTorch do), never entirely in the trailing pad.
      if ((p.out[i] - 1) * p.strides[i] >= p.in[i] + p.pad_begin[i]) --p.out[i];
    } else {
      p.out[i] = floor_div(span, p.strides[i]) + 1;
    }
  }
}

// Splits X's shape into batch, channels and spatial dims.
void split_input(const WindowAttrs& a, const Shape& x, ConvParams& p) {
  if (x.size() < 3)
    throw_bad_input(a.where + ": input X must have rank >= 3 (N, C, spatial...), got shape " + shape_str(x));
  p.nd = static_cast<int>(x.size()) - 2;
  p.batch = x[0];
  p.in_channels = x[1];
  p.in.assign(x.begin() + 2, x.end());
}

void kernel_from_weights(const WindowAttrs& a, const Shape& w, ConvParams& p) {
  if (static_cast<int>(w.size()) != p.nd + 2)
    throw_bad_input(a.where + ": weight W has shape " + shape_str(w) + ", expected rank " + std::to_string(p.nd + 2));
  p.kernel.assign(w.begin() + 2, w.end());
  if (!a.kernel_shape.empty()) {
    if (static_cast<int>(a.kernel_shape.size()) != p.nd || a.kernel_shape != p.kernel)
      throw_bad_input(a.where + ": kernel_shape does not match the weight's shape " + shape_str(w));
  }
}

}  // namespace

WindowAttrs WindowAttrs::parse(const Node& node, WindowKind kind) {
  WindowAttrs a;
  a.kind = kind;
  a.where = node.describe();
  a.auto_pad = parse_auto_pad(node.attr_string("auto_pad", "NOTSET"), a.where);
  a.group = node.attr_int("group", 1);
  if (a.group <= 0) throw_bad_input(a.where + ": group must be positive");
  a.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  a.kernel_shape = node.attr_ints("kernel_shape");
  a.strides = node.attr_ints("strides");
  a.dilations = node.attr_ints("dilations");
  a.pads = node.attr_ints("pads");
  a.output_padding = node.attr_ints("output_padding");
  a.output_shape = node.attr_ints("output_shape");
  if (kind == WindowKind::Pool && a.kernel_shape.empty())
    throw_bad_input(a.where + ": missing required attribute kernel_shape");
  return a;
}

Shape ConvParams::output_shape() const {
  Shape s{batch, out_channels};
  s.insert(s.end(), out.begin(), out.end());
  return s;
}

ConvParams conv_params(const WindowAttrs& a, const Shape& x, const Shape& w) {
  ConvParams p;
  split_input(a, x, p);
  kernel_from_weights(a, w, p);
  p.group = a.group;
  p.out_channels = w[0];
  if (p.in_channels % p.group != 0 || p.out_channels % p.group != 0)
    throw_bad_input(a.where + ": channels (" + std::to_string(p.in_channels) + " in, " + std::to_string(p.out_channels) +
                    " out) are not divisible by group " + std::to_string(p.group));
  if (w[1] * p.group != p.in_channels)
    throw_bad_input(a.where + ": input has " + std::to_string(p.in_channels) + " channels but W " + shape_str(w) +
                    " with group " + std::to_string(p.group) + " expects " + std::to_string(w[1] * p.group));
  resolve_forward(a, p, false);
  return p;
}

ConvParams pool_params(const WindowAttrs& a, const Shape& x) {
  ConvParams p;
  split_input(a, x, p);
  if (static_cast<int>(a.kernel_shape.size()) != p.nd)
    throw_bad_input(a.where + ": kernel_shape has " + std::to_string(a.kernel_shape.size()) + " values for " +
                    std::to_string(p.nd) + " spatial axes");
  p.kernel = a.kernel_shape;
  p.group = 1;
  p.out_channels = p.in_channels;
  resolve_forward(a, p, a.ceil_mode);
  return p;
}

// ONNX ConvTranspose: when output_shape is given (or auto_pad is SAME_*, where the target is
// in * stride), total_padding = stride * (in - 1) + output_padding + ek - target, split between
// begin and end: SAME_UPPER puts the smaller half first, otherwise the larger half goes first.
ConvParams conv_transpose_params(const WindowAttrs& a, const Shape& x, const Shape& w) {
  ConvParams p;
  split_input(a, x, p);
  kernel_from_weights(a, w, p);
  p.group = a.group;
  if (w[0] != p.in_channels)
    throw_bad_input(a.where + ": input has " + std::to_string(p.in_channels) + " channels but W " + shape_str(w) +
                    " expects " + std::to_string(w[0]));
  if (p.in_channels % p.group != 0)
    throw_bad_input(a.where + ": input channels " + std::to_string(p.in_channels) + " not divisible by group " +
                    std::to_string(p.group));
  p.out_channels = w[1] * p.group;
  const int nd = p.nd;
  p.strides = per_axis(a.strides, nd, 1, "strides", a.where);
  p.dilations = per_axis(a.dilations, nd, 1, "dilations", a.where);
  p.output_padding = per_axis(a.output_padding, nd, 0, "output_padding", a.where);
  check_positive(p.strides, "strides", a.where);
  check_positive(p.dilations, "dilations", a.where);
  check_positive(p.kernel, "kernel_shape", a.where);
  p.pad_begin.assign(nd, 0);
  p.pad_end.assign(nd, 0);
  p.out.assign(nd, 0);

  Shape target;  // requested spatial output, empty when none
  if (!a.output_shape.empty()) {
    if (static_cast<int>(a.output_shape.size()) == nd) target = a.output_shape;
    else if (static_cast<int>(a.output_shape.size()) == nd + 2) target.assign(a.output_shape.begin() + 2, a.output_shape.end());
    else throw_bad_input(a.where + ": output_shape has " + std::to_string(a.output_shape.size()) + " values for " +
                         std::to_string(nd) + " spatial axes");
  } else if (a.auto_pad == AutoPad::SameUpper || a.auto_pad == AutoPad::SameLower) {
    target.resize(nd);
    for (int i = 0; i < nd; ++i) target[i] = p.in[i] * p.strides[i];
  }
  if (target.empty() && a.auto_pad == AutoPad::NotSet && !a.pads.empty()) {
    if (static_cast<int>(a.pads.size()) != 2 * nd)
      throw_bad_input(a.where + ": pads has " + std::to_string(a.pads.size()) + " values, expected " +
                      std::to_string(2 * nd));
    for (int i = 0; i < nd; ++i) {
      p.pad_begin[i] = a.pads[i];
      p.pad_end[i] = a.pads[nd + i];
    }
  }
  for (int i = 0; i < nd; ++i) {
    const int64_t ek = (p.kernel[i] - 1) * p.dilations[i] + 1;
    const int64_t natural = p.strides[i] * (p.in[i] - 1) + p.output_padding[i] + ek;
    if (!target.empty()) {
      const int64_t total = natural - target[i];
      const int64_t small = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      const int64_t big = total - small;
      p.pad_begin[i] = a.auto_pad == AutoPad::SameUpper ? small : big;
      p.pad_end[i] = a.auto_pad == AutoPad::SameUpper ? big : small;
      p.out[i] = target[i];
    } else {
      p.out[i] = natural - p.pad_begin[i] - p.pad_end[i];
    }
    if (p.out[i] <= 0) throw_bad_input(a.where + ": computed output size is not positive on spatial axis " + std::to_string(i));
  }
  return p;
}

}  // namespace fusor
