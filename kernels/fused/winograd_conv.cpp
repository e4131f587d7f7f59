// fusor.WinogradConv: a 3x3 stride-1 Conv as Winograd F(tile x tile, 3 x 3) on filters transformed
// at optimize time (U = G g Gᵀ, shape (a, a, C, K), a = tile + 2), plus FusedConv's residual and
// activation.
//   reference: the definition, tile by tile in double: Y = Aᵀ [ U ⊙ (Bᵀ d B) ] A, then bias,
//              residual and activation (matrices from kernels/winograd/matrices.h).
//   fast:      kernels/winograd (U packed once at kernel creation; epilogue fused).
// A rank-5 X is the blocked layout (kernels/nchwc/nchwc_format.h, block 16): X [N, CB, H, W, 16]
// with C = U's dim 2 channels, Y and Z [N, ceil(K / 16), OH, OW, 16]; Y's padding lanes get
// act(0 + Z's lane), as fusor.NchwcConv's (the reference unblocks, computes, and blocks again).
#include <optional>
#include <string>
#include <vector>

#include "kernels/common/kernel_util.h"
#include "kernels/fused/activation.h"
#include "kernels/fused/common.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/nchwc/reorder.h"
#include "kernels/winograd/matrices.h"
#include "kernels/winograd/winograd.h"

namespace fusor::fused {
namespace {

// The op's attributes and the geometry of one call, checked (BadInput naming the node).
struct WinogradCall {
  int64_t N = 0, C = 0, H = 0, W = 0, K = 0, OH = 0, OW = 0;
  int64_t pad_t = 0, pad_l = 0, pad_b = 0, pad_r = 0;
  int64_t block = 0;  // 16: X, Y, Z blocked

  Shape y_shape() const {
    return block ? Shape{N, nchwc_blocks(K, block), OH, OW, block} : Shape{N, K, OH, OW};
  }
  NchwcShape blocked(int64_t channels, int64_t h, int64_t w) const { return {N, channels, h, w, block}; }
};

struct WinogradAttrs {
  int tile = 0;
  std::vector<int64_t> pads;
  ActivationSpec act;

  explicit WinogradAttrs(const Node& n) : act(activation_of(n)) {
    const int64_t t = n.attr_int("tile", 0);
    if (!winograd::supported_tile(static_cast<int>(t)))
      throw_bad_input(n.describe() + ": tile must be 2 or 4, got " + std::to_string(t));
    tile = static_cast<int>(t);
    auto all_ones = [](const std::vector<int64_t>& v) {
      for (int64_t x : v)
        if (x != 1) return false;
      return v.empty() || v.size() == 2;
    };
    const std::vector<int64_t> ks = n.attr_ints("kernel_shape");
    const Attribute* ap = n.attr("auto_pad");
    if (!(ks.empty() || ks == std::vector<int64_t>{3, 3}) || !all_ones(n.attr_ints("strides")) ||
        !all_ones(n.attr_ints("dilations")) || n.attr_int("group", 1) != 1 || (ap && ap->s != "NOTSET"))
      throw_bad_input(n.describe() +
                      ": WinogradConv is a 3x3, stride-1, dilation-1, single-group Conv with explicit pads "
                      "(kernel_shape, strides, dilations, group or auto_pad say otherwise)");
    pads = n.attr_ints("pads", {0, 0, 0, 0});
    if (pads.size() != 4) throw_bad_input(n.describe() + ": pads must have 4 values, got " + std::to_string(pads.size()));
    for (int64_t p : pads)
      if (p < 0) throw_bad_input(n.describe() + ": pads must not be negative");
  }

  WinogradCall check(const std::string& where, const Tensor& x, const Tensor& u, const Tensor* b, const Tensor* z) const {
    if (x.dtype() != DataType::Float || u.dtype() != DataType::Float || (b && b->dtype() != DataType::Float) ||
        (z && z->dtype() != DataType::Float))
      throw_bad_input(where + ": WinogradConv takes float tensors only");
    if (x.rank() != 4 && !(x.rank() == 5 && x.dim(4) == kNchwcBlock))
      throw_bad_input(where + ": X must be 4-D (N, C, H, W) or blocked (N, CB, H, W, 16), got " + shape_str(x.shape()));
    const int64_t a = tile + 2;
    const bool blocked = x.rank() == 5;
    if (u.rank() != 4 || u.dim(0) != a || u.dim(1) != a ||
        (blocked ? nchwc_blocks(u.dim(2), kNchwcBlock) != x.dim(1) : u.dim(2) != x.dim(1)))
      throw_bad_input(where + ": U must be (" + std::to_string(a) + ", " + std::to_string(a) + ", " +
                      (blocked ? std::string("C") : std::to_string(x.dim(1))) + ", K) for tile " + std::to_string(tile) +
                      " and X " + shape_str(x.shape()) + ", got " + shape_str(u.shape()));
    WinogradCall c;
    c.N = x.dim(0), c.C = u.dim(2), c.H = x.dim(2), c.W = x.dim(3), c.K = u.dim(3);
    c.block = blocked ? kNchwcBlock : 0;
    c.pad_t = pads[0], c.pad_l = pads[1], c.pad_b = pads[2], c.pad_r = pads[3];
    c.OH = c.H + c.pad_t + c.pad_b - 2;
    c.OW = c.W + c.pad_l + c.pad_r - 2;
    if (c.OH <= 0 || c.OW <= 0)
      throw_bad_input(where + ": X " + shape_str(x.shape()) + " is smaller than the 3x3 window with these pads");
    if (b && (b->rank() != 1 || b->dim(0) != c.K))
      throw_bad_input(where + ": bias B has shape " + shape_str(b->shape()) + ", expected " + std::to_string(c.K));
    if (z && z->shape() != c.y_shape())
      throw_bad_input(where + ": residual Z has shape " + shape_str(z->shape()) + ", the output " + shape_str(c.y_shape()));
    return c;
  }
};

template <int M>
void reference_tiles(const WinogradCall& c, const float* x, const float* u, double* acc) {
  using Mx = winograd::Matrices<M>;
  constexpr int A = M + 2;
  const int64_t TH = (c.OH + M - 1) / M, TW = (c.OW + M - 1) / M;
  std::vector<double> v(static_cast<size_t>(A * A * c.C));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t ty = 0; ty < TH; ++ty)
      for (int64_t tx = 0; tx < TW; ++tx) {
        // v[ξ][c] = (Bᵀ d B)[ξ] for every input channel.
        for (int64_t ch = 0; ch < c.C; ++ch) {
          double d[A][A];
          for (int i = 0; i < A; ++i)
            for (int j = 0; j < A; ++j) {
              const int64_t ih = ty * M + i - c.pad_t, iw = tx * M + j - c.pad_l;
              d[i][j] = ih >= 0 && ih < c.H && iw >= 0 && iw < c.W ? x[((n * c.C + ch) * c.H + ih) * c.W + iw] : 0.0;
            }
          for (int p = 0; p < A; ++p)
            for (int q = 0; q < A; ++q) {
              double s = 0;
              for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j) s += Mx::BT[p][i] * d[i][j] * Mx::BT[q][j];
              v[(p * A + q) * c.C + ch] = s;
            }
        }
        for (int64_t k = 0; k < c.K; ++k) {
          double mm[A][A];
          for (int xi = 0; xi < A * A; ++xi) {
            double s = 0;
            for (int64_t ch = 0; ch < c.C; ++ch) s += static_cast<double>(u[(xi * c.C + ch) * c.K + k]) * v[xi * c.C + ch];
            mm[xi / A][xi % A] = s;
          }
          for (int r = 0; r < M; ++r)
            for (int q = 0; q < M; ++q) {
              const int64_t oh = ty * M + r, ow = tx * M + q;
              if (oh >= c.OH || ow >= c.OW) continue;
              double s = 0;
              for (int i = 0; i < A; ++i)
                for (int j = 0; j < A; ++j) s += Mx::AT[r][i] * mm[i][j] * Mx::AT[q][j];
              acc[((n * c.K + k) * c.OH + oh) * c.OW + ow] = s;
            }
        }
      }
}

class RefWinogradConv : public Kernel {
 public:
  explicit RefWinogradConv(const KernelInfo& info) : attrs_(info.n()) {}

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& u = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z = optional_input(ctx, 3);
    const WinogradCall c = attrs_.check(ctx.where(), x, u, b, z);
    // Blocked: the definition on the unblocked tensors, blocked again (padding lanes: act(0 + Z)).
    std::vector<float> xp, zp;
    const float* xd = x.data<float>();
    const float* zd = z ? z->data<float>() : nullptr;
    if (c.block) {
      xp.resize(static_cast<size_t>(c.N * c.C * c.H * c.W));
      reorder_from_nchwc(xd, c.blocked(c.C, c.H, c.W), xp.data());
      xd = xp.data();
      if (z) {
        zp.resize(static_cast<size_t>(c.N * c.K * c.OH * c.OW));
        reorder_from_nchwc(zd, c.blocked(c.K, c.OH, c.OW), zp.data());
        zd = zp.data();
      }
    }
    std::vector<double> acc(static_cast<size_t>(c.N * c.K * c.OH * c.OW));
    if (attrs_.tile == 2) reference_tiles<2>(c, xd, u.data<float>(), acc.data());
    else reference_tiles<4>(c, xd, u.data<float>(), acc.data());
    std::vector<float> plain(acc.size());
    const int64_t hw = c.OH * c.OW;
    for (size_t i = 0; i < acc.size(); ++i) {
      double v = acc[i];
      if (b) v += b->data<float>()[(i / hw) % c.K];
      if (zd) v += zd[i];
      plain[i] = activate(attrs_.act, static_cast<float>(v));
    }
    Tensor& y = ctx.output(0, c.y_shape(), DataType::Float);
    float* out = y.data<float>();
    if (!c.block) {
      std::copy(plain.begin(), plain.end(), out);
      return;
    }
    const NchwcShape ys = c.blocked(c.K, c.OH, c.OW);
    reorder_to_nchwc(plain.data(), ys, out);
    if (c.K % c.block == 0) return;
    for (int64_t n = 0; n < c.N; ++n)  // padding lanes
      for (int64_t k = c.K; k < ys.cb() * c.block; ++k)
        for (int64_t p = 0; p < hw; ++p) {
          const int64_t off = ((n * ys.cb() + k / c.block) * hw + p) * c.block + k % c.block;
          out[off] = activate(attrs_.act, z ? z->data<float>()[off] : 0.0f);
        }
  }

 private:
  WinogradAttrs attrs_;
};

// On kernels/winograd, with U packed at creation when it is constant.
class FastWinogradConv : public FastFusedKernel {
 public:
  explicit FastWinogradConv(const KernelInfo& info) : FastFusedKernel(info), attrs_(info.n()) {
    if (const Tensor* u = const_float(info, 1); u && u->rank() == 4 && u->dim(0) == attrs_.tile + 2)
      weights_ = WinogradWeights(u->data<float>(), attrs_.tile, u->dim(2), u->dim(3), std::nullopt, info.prepack);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = required_input(ctx, 0);
    const Tensor& u = required_input(ctx, 1);
    const Tensor* b = optional_input(ctx, 2);
    const Tensor* z = optional_input(ctx, 3);
    const WinogradCall c = attrs_.check(where_, x, u, b, z);
    std::optional<WinogradWeights> local;
    const WinogradWeights* w = weights_.empty() ? &local.emplace(u.data<float>(), attrs_.tile, c.C, c.K) : &weights_;
    Tensor& y = ctx.output(0, c.y_shape(), DataType::Float);
    WinogradShape s;
    s.block = c.block;
    s.batch = c.N, s.in_c = c.C, s.in_h = c.H, s.in_w = c.W;
    s.out_c = c.K, s.out_h = c.OH, s.out_w = c.OW;
    s.pad_t = c.pad_t, s.pad_l = c.pad_l;
    Epilogue ep;
    ep.bias = b ? b->data<float>() : nullptr;
    ep.bias_axis = b ? BiasAxis::PerRow : BiasAxis::None;
    ep.residual = z ? z->data<float>() : nullptr;
    ep.act = attrs_.act;
    winograd_conv2d(*w, s, x.data<float>(), y.data<float>(), ep, gemm_run(ctx));
  }

 private:
  WinogradAttrs attrs_;
  WinogradWeights weights_;
};

}  // namespace

void register_fused_winograd_kernels(KernelRegistry& r) {
  add_fused_kernel<RefWinogradConv>(r, "WinogradConv", "reference", 0);
  add_fused_kernel<FastWinogradConv>(r, "WinogradConv", "fast", kFastPriority);
}

}  // namespace fusor::fused
