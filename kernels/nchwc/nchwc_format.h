// The blocked channel layout (NCHWc) of the cpu provider: what a blocked tensor is. The contract
// shared by the layout rules (rules/nchwc/), the reorder ops (fusor.ReorderToNchwc /
// fusor.ReorderFromNchwc) and every kernel that reads or writes blocked activations (the
// fusor.Nchwc* kernels in kernels/nchwc/; Winograd and int8 kernels may produce and consume it).
//
// Shape and element order. The blocked form of an NCHW tensor X [N, C, H, W] with block B is a
// rank-5 tensor [N, CB, H, W, B], CB = ceil(C / B): channel c of X is lane c % B of channel block
// c / B, so element (n, c, h, w) is at offset
//     (((n * CB + c / B) * H + h) * W + w) * B + c % B.
// A pixel's B channels are contiguous (one vector), a channel block is an H x W x B image.
//
// The block B is the tensor's last dimension: kernels read it from the shape. The format allows
// B = 8 and B = 16; the cpu provider's rules use kNchwcBlock = 16 on every machine (one AVX-512
// register; AVX2 kernels treat a block as two 8-lane registers), so an optimized model does not
// depend on the machine it was optimized on.
//
// Channels. C itself is not in the shape, only CB. The op that leaves the layout,
// fusor.ReorderFromNchwc, carries it (attribute `channels`); a convolution knows its output
// channel count from its weights (W: [M, C/group, kh, kw], ONNX's OIHW, left as is in the graph;
// each kernel packs W at creation into its own private format).
//
// Padding lanes: when B does not divide C, lanes C % B .. B - 1 of the last block. They hold
// FINITE values, nothing more is promised: fusor.ReorderToNchwc writes zeros, a blocked conv
// writes act(0 + bias 0 + residual lane) there (AVX2's half-last tiles write 0), an ONNX
// elementwise op the layout rules run on blocked data writes f(lane) (Sigmoid gives 0.5). Hence:
//   - no kernel may let a padding lane reach a real channel: a convolution reads them only against
//     zero weights (its packed weights are zero for every padding input channel), pools and
//     elementwise ops keep each lane in its lane, ReorderFromNchwc drops them;
//   - a rule may run an op on blocked data only if it maps finite values to finite values, or
//     if B divides C (so there are no padding lanes): Div by a blocked tensor, Log, Sqrt,
//     Reciprocal, Pow need the second.
//   - a rule may concatenate blocked tensors along the channel blocks only when B divides every
//     input's C but the last one's.
//
// Only 2-D images (rank-4 NCHW, rank-5 blocked). Batch is free (images are independent).
#pragma once
#include <cstdint>

namespace fusor {

// The block the cpu provider's layout rules use (rules/nchwc/*.rules write it as a literal).
inline constexpr int64_t kNchwcBlock = 16;

// Channel blocks of C channels at block B.
inline constexpr int64_t nchwc_blocks(int64_t channels, int64_t block) { return (channels + block - 1) / block; }

// The geometry of one blocked tensor (or of its NCHW original).
struct NchwcShape {
  int64_t n = 1, c = 0, h = 1, w = 1;  // the logical NCHW tensor
  int64_t block = kNchwcBlock;

  int64_t cb() const { return nchwc_blocks(c, block); }
  int64_t plane() const { return h * w * block; }                // floats of one channel block
  int64_t image() const { return cb() * plane(); }                // floats of one image
  int64_t numel() const { return n * image(); }                   // floats of the blocked tensor
  // Offset of element (n, c, h, w) in the blocked tensor.
  int64_t offset(int64_t in, int64_t ic, int64_t ih, int64_t iw) const {
    return (((in * cb() + ic / block) * h + ih) * w + iw) * block + ic % block;
  }
};

}  // namespace fusor
