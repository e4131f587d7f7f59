#include "kernels/nchwc/affine.h"

#include <algorithm>

#include "core/util/error.h"
#include "kernels/cpu_features.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace {

nchwc_detail::AffineFn affine_fn(Activation act) {
  switch (active_isa()) {
    case Isa::Avx512:
      if (auto f = nchwc_detail::affine_fn_avx512(act)) return f;
      [[fallthrough]];
    case Isa::Avx2:
      if (auto f = nchwc_detail::affine_fn_avx2(act)) return f;
      [[fallthrough]];
    case Isa::Scalar: break;
  }
  return nchwc_detail::affine_fn_scalar(act);
}

// A piece of work: at most this many floats of one channel block's plane (64 KB), so a few large
// planes (an early layer's 56 x 56 pixels) still split over the threads.
constexpr int64_t kPieceFloats = 16384;

}  // namespace

NchwcAffineParams::NchwcAffineParams(const float* s, const float* t, int64_t channels_, int64_t block_)
    : channels(channels_), block(block_) {
  const int64_t lanes = blocks() * block;
  scale.assign(lanes, 0.0f);
  shift.assign(lanes, 0.0f);
  std::copy(s, s + channels, scale.begin());
  std::copy(t, t + channels, shift.begin());
}

void nchwc_affine(const NchwcAffineParams& p, const ActivationSpec& act, const float* x, float* y, int64_t n,
                  int64_t pixels, ThreadPool* pool) {
  const nchwc_detail::AffineFn fn = affine_fn(act.kind);
  if (!fn) throw_internal("nchwc_affine: no kernel for activation " + std::string(activation_name(act.kind)));
  const int64_t B = p.block, cb = p.blocks(), plane = pixels * B;
  const int64_t pieces = std::max<int64_t>(1, plane / kPieceFloats);
  const int64_t piece_px = (pixels + pieces - 1) / pieces;
  auto body = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t blk = i / pieces, piece = i % pieces, c = blk % cb;
      const int64_t px0 = piece * piece_px, px = std::min(pixels, px0 + piece_px) - px0;
      if (px <= 0) continue;
      const int64_t off = blk * plane + px0 * B;
      fn(x + off, y + off, px, B, p.scale.data() + c * B, p.shift.data() + c * B, act.alpha, act.beta);
    }
  };
  const int64_t items = n * cb * pieces;
  // ~1 ns per 4 floats streamed (kernels/thread_pool.h), more with a transcendental activation.
  const bool heavy = act.kind == Activation::Sigmoid || act.kind == Activation::Tanh || act.kind == Activation::SiLU ||
                     act.kind == Activation::Gelu || act.kind == Activation::GeluTanh;
  const double item_ns = static_cast<double>(piece_px * B) * (heavy ? 1.0 : 0.25);
  if (pool) pool->parallel_for_cost(items, item_ns, body);
  else body(0, items);
}

}  // namespace fusor
