// The blocked convolution: fusor.NchwcConv's fast kernel (kernels/nchwc/nchwc_format.h has the
// layout). Y = act(conv(X, W) + bias + Z), X blocked [N, CBi, H, W, B] or NCHW [N, C, H, W]
// ("plain" input: for few input channels, as the 3-channel stem of a CNN), Z and Y blocked
// [N, CBo, OH, OW, B].
//
// Direct, no im2col: each call tile computes O output blocks x R output pixels of one row in
// registers (kernels/nchwc/conv_kernels.h), over chunks of input blocks sized to keep their
// weights in L2 (in L1 for 1x1 convs on AVX2); taps outside the image are skipped, never read (no
// padded copy), and so are the padding lanes of a last input block on AVX2. The work is
// (image, group of output blocks, range of tiles) items over the pool of GemmRun.
//
// Weights (ONNX's OIHW) are packed once: output blocks in groups of up to 4 sharing an input
// block range (a dense conv: all of them; a grouped conv whose groups are narrower than a block
// gets the block-diagonal weights of each block, zeros elsewhere: when its groups never cross the
// middle of a 16-channel block, icg == ocg dividing 8 as RegNet's group width 8, the AVX2 tiles
// read only the half of each lane's weights that can be non-zero); depthwise convs (group = C = M,
// blocked input) have their own per-tap layout. Zeros pad every channel past C and M.
//
// The packed weights are one prepacked buffer (kernels/prepack.h) when a Prepacker is given (a
// kernel's KernelInfo::prepack): "w.nchwc.B<block>.O<pack blocks>" (".dw" for depthwise, ".plain"
// for NCHW input), so a session restored from an image maps them. The layout does not depend on
// the ISA; FUSOR_NCHWC_PACK_O (the O in the name) does.
//
// Paths by ISA: AVX-512 and AVX2 run compiled tiles for B = 16; B = 8, the scalar ISA and pixel
// strides without a compiled tile run the generic tile (same results, plain loops).
//
// Epilogue (kernels/epilogue.h): ep.bias per output channel (M values), ep.residual blocked like
// Y (may not overlap Y), ep.act any activation (clamps in registers; SiLU, Sigmoid, HardSwish and
// HardSigmoid in registers too on the compiled tiles; the others in a pass after each short range
// of finished tiles, ~64 KiB of outputs, while it is in cache); ep.scale must be 1. Padding lanes
// of Y get act(0 + Z's lane).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "kernels/conv/conv.h"
#include "kernels/cpu_features.h"
#include "kernels/epilogue.h"
#include "kernels/gemm/gemm.h"
#include "kernels/prepack.h"

namespace fusor {

// The widest kernel nchwc_conv takes (its tiles list the kernel's columns on the stack).
inline constexpr int64_t kNchwcMaxKernelW = 64;

class NchwcConvWeights {
 public:
  // w: [out_c, in_c_per_group, k_h, k_w]. plain_input: X is NCHW (group must be 1).
  NchwcConvWeights(const float* w, int64_t out_c, int64_t in_c_per_group, int64_t k_h, int64_t k_w, int64_t group,
                   bool plain_input, int64_t block, std::optional<Isa> isa = {}, const Prepacker& pp = {});

  int64_t out_c() const { return out_c_; }
  int64_t in_c() const { return in_c_per_group_ * group_; }
  int64_t group() const { return group_; }
  int64_t block() const { return block_; }
  bool plain_input() const { return plain_; }
  bool depthwise() const { return depthwise_; }
  Isa isa() const { return isa_; }
  // Floats in the packed buffer.
  int64_t packed_size() const { return packed_size_; }

  // The same weights with every input channel c scaled by scale[c] (scale: in_c() values, more may
  // follow), packed into dst (packed_size() floats, which the copy views: dst must outlive it):
  // conv(X * scale[c], W) computed as conv(X, W * scale[c]), a squeeze-excite scale folded into the
  // next conv. Channels past in_c() (zero weights) stay zero whatever scale holds there. Not for
  // depthwise weights (Internal error).
  NchwcConvWeights with_input_scale(const float* scale, float* dst) const;

  struct PackGroup {
    int64_t ob0 = 0, blocks = 0;  // output blocks [ob0, ob0 + blocks)
    int64_t ib0 = 0, nib = 0;     // input blocks [ib0, ib0 + nib) they read
    int64_t offset = 0;           // floats into data_: nib x steps x blocks x B
  };

 private:
  friend void nchwc_conv(const NchwcConvWeights&, const Conv2dShape&, const float*, float*, const Epilogue&,
                         const GemmRun&);
  int64_t out_c_ = 0, in_c_per_group_ = 0, k_h_ = 0, k_w_ = 0, group_ = 1, block_ = 16;
  bool plain_ = false, depthwise_ = false;
  // Groups inside block halves (icg == ocg dividing 8, B = 16): the half-block tiles apply.
  bool half_groups_ = false;
  Isa isa_ = Isa::Scalar;
  int64_t steps_ = 0;  // steps per input block: k_w * k_h * lanes (lanes: B, or C for plain input)
  int64_t packed_size_ = 0;
  std::vector<PackGroup> groups_;
  std::shared_ptr<const float> data_;  // the packed floats (a prepacked buffer)
};

// Y = epilogue(conv(X, W)); s.group and channel counts must match the weights (Internal error
// otherwise), s.batch/in_h/in_w/out_h/out_w/strides/dilations/pads are the call's.
void nchwc_conv(const NchwcConvWeights& w, const Conv2dShape& s, const float* x, float* y, const Epilogue& ep = {},
                const GemmRun& run = {});

}  // namespace fusor
