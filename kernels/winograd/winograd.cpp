#include "kernels/winograd/winograd.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "core/util/error.h"
#include "kernels/thread_pool.h"
#include "kernels/winograd/matrices.h"
#include "kernels/winograd/winograd_kernels.h"

namespace fusor {

namespace winograd_detail {

const KernelSet& kernels(Isa isa) {
  isa = clamp_isa(isa);
  if (isa == Isa::Avx512) return *kernels_avx512();
  if (isa == Isa::Avx2) return *kernels_avx2();
  return *kernels_scalar();
}

}  // namespace winograd_detail

namespace {

using winograd_detail::KernelSet;
using winograd_detail::StripArgs;

int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }
int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

std::shared_ptr<float[]> aligned_floats(size_t n) {
  void* p = std::aligned_alloc(64, std::max<size_t>(64, round_up(static_cast<int64_t>(n * sizeof(float)), 64)));
  if (!p) throw std::bad_alloc();
  return std::shared_ptr<float[]>(static_cast<float*>(p), [](float* q) { std::free(q); });
}

// Tiles per strip the driver aims for: enough rows of the register block to reuse each packed
// U_ξ from L1, few enough that the strip's v and mbuf stay in L2 (FUSOR_WINOGRAD_TILES overrides,
// for tuning).
int64_t target_tiles(const KernelSet& ks, int64_t C, int64_t a) {
  if (const char* e = std::getenv("FUSOR_WINOGRAD_TILES")) {
    const long v = std::strtol(e, nullptr, 10);
    if (v > 0) return v;
  }
  // v (a*a*C*tiles) plus mbuf (a*a*nr*tiles) floats within ~384 KB, at least two register blocks.
  const int64_t per_tile = a * a * (C + ks.nr) * static_cast<int64_t>(sizeof(float));
  return std::max<int64_t>(2 * ks.mr, (384 << 10) / per_tile);
}

struct Scratch {
  int64_t xs = 0, v = 0, mbuf = 0, ys = 0;
  int64_t total() const { return xs + v + mbuf + ys; }
};

}  // namespace

WinogradWeights::WinogradWeights(const float* u, int m, int64_t in_c, int64_t out_c, std::optional<Isa> isa,
                                 const Prepacker& pp)
    : m_(m), in_c_(in_c), out_c_(out_c) {
  if (!winograd::supported_tile(m)) throw Error(ErrorKind::Internal, "winograd: unsupported tile " + std::to_string(m));
  const KernelSet& ks = winograd_detail::kernels(isa ? *isa : active_isa());
  isa_ = ks.isa;
  const int64_t a = m + 2, aa = a * a;
  cp_ = round_up(in_c, ks.lanes);
  kp_ = round_up(round_up(out_c, 16), ks.nr);  // whole 16-channel blocks for the blocked output
  const int64_t nr = ks.nr, nkb = kp_ / nr;
  // The layout (lanes, nr) follows the ISA's kernel set: the ISA is in the name.
  const std::string name = "u.wino.m" + std::to_string(m) + "/" + isa_name(isa_);
  const size_t bytes = static_cast<size_t>(nkb * aa * cp_ * nr) * sizeof(float);
  data_ = pp.get(name, bytes, [&](void* dst_buf) {
              float* d = static_cast<float*>(dst_buf);
              for (int64_t kb = 0; kb < nkb; ++kb)
                for (int64_t xi = 0; xi < aa; ++xi)
                  for (int64_t c = 0; c < cp_; ++c) {
                    float* dst = d + ((kb * aa + xi) * cp_ + c) * nr;
                    for (int64_t j = 0; j < nr; ++j) {
                      const int64_t k = kb * nr + j;
                      dst[j] = c < in_c && k < out_c ? u[(xi * in_c + c) * out_c + k] : 0.0f;
                    }
                  }
            }).share<float>();
}

void winograd_conv2d(const WinogradWeights& w, const WinogradShape& s, const float* x, float* y, const Epilogue& ep,
                     const GemmRun& run) {
  if (w.empty() || s.in_c != w.in_c_ || s.out_c != w.out_c_)
    throw Error(ErrorKind::Internal, "winograd_conv2d: the shape does not match the packed filters");
  const KernelSet& ks = winograd_detail::kernels(w.isa_);
  const int m = w.m_;
  const int64_t a = m + 2, nr = ks.nr;
  const int64_t C = s.in_c, K = s.out_c, H = s.in_h, W = s.in_w, OH = s.out_h, OW = s.out_w;
  const int64_t B = s.block;
  if (B != 0 && (B != 16 || B % ks.lanes != 0))
    throw Error(ErrorKind::Internal, "winograd_conv2d: the blocked layout takes block 16, got " + std::to_string(B));
  if (OH <= 0 || OW <= 0 || s.batch <= 0) return;
  const int64_t TH = ceil_div(OH, m), TW = ceil_div(OW, m);
  const int64_t R = std::clamp<int64_t>(ceil_div(target_tiles(ks, C, a), TW), 1, TH);
  const int64_t strips = ceil_div(TH, R);
  // Blocked: every lane of Y's last block is written (padding lanes included).
  const int64_t nkb = ceil_div(B ? round_up(K, B) : K, nr);
  const int threads = run.pool ? run.pool->num_threads() : 1;
  const int64_t base_items = s.batch * strips;
  const int64_t ksplit = base_items >= threads ? 1 : std::min<int64_t>(nkb, ceil_div(threads, base_items));
  const int64_t kb_per = ceil_div(nkb, ksplit);
  const int64_t items = base_items * ksplit;
  const int slots = static_cast<int>(std::min<int64_t>(threads, items));

  Scratch sc;
  const int64_t nt = R * TW;
  sc.xs = round_up(w.cp_ * (R * m + 2) * (TW * m + 2), 16);
  sc.v = round_up(a * a * w.cp_ * nt, 16);
  sc.mbuf = round_up(a * a * nt * nr, 16);
  sc.ys = round_up(nr * R * m * TW * m, 16);
  const int64_t bias_floats = B ? round_up(w.kp_, 16) : 0;  // blocked: the bias padded with zeros
  const size_t bytes = static_cast<size_t>(sc.total() * slots + bias_floats) * sizeof(float);
  std::shared_ptr<float[]> owned;
  float* mem = nullptr;
  if (run.scratch) mem = static_cast<float*>(run.scratch(bytes));
  else mem = (owned = aligned_floats(bytes / sizeof(float))).get();
  float* padded_bias = mem + sc.total() * slots;
  if (B) {
    std::fill(padded_bias, padded_bias + bias_floats, 0.0f);
    if (ep.bias) std::copy(ep.bias, ep.bias + K, padded_bias);
  }
  if (B && ep.scale != 1.0f) throw Error(ErrorKind::Internal, "winograd_conv2d: the blocked layout takes scale 1");
  const int64_t CBi = ceil_div(C, 16), CBo = ceil_div(K, 16);
  // Blocked, an activation that is not a clamp runs after the vectors are stored: per strip when
  // each item owns whole blocks (nr a multiple of the block), else once over Y at the end.
  Epilogue act_only;
  act_only.act = ep.act;
  const bool late_act = B && !ep.act_is_clamp();
  const bool act_per_item = late_act && nr % B == 0;

  const int64_t OHW = OH * OW;
  std::atomic<int64_t> next{0};
  auto body = [&](int64_t slot0, int64_t slot1) {
    for (int64_t slot = slot0; slot < slot1; ++slot) {
      float* base = mem + slot * sc.total();
      StripArgs st;
      st.m = m;
      st.C = C, st.H = H, st.W = W;
      st.TW = TW;
      st.u = w.data_.get();
      st.Cp = w.cp_;
      st.K = K, st.OH = OH, st.OW = OW;
      st.xs = base;
      st.v = base + sc.xs;
      st.mbuf = st.v + sc.v;
      st.ys = st.mbuf + sc.mbuf;
      st.block = B;
      if (B) {
        st.bias = padded_bias;
        st.clamp = ep.act_is_clamp() && ep.act.kind != Activation::None;
        st.lo = ep.clamp_lo(), st.hi = ep.clamp_hi();
      }
      for (int64_t item; (item = next.fetch_add(1)) < items;) {
        const int64_t n = item / (strips * ksplit), rest = item % (strips * ksplit);
        const int64_t strip = rest / ksplit, kpart = rest % ksplit;
        st.kb0 = kpart * kb_per;
        st.kb1 = std::min(nkb, st.kb0 + kb_per);
        if (st.kb0 >= st.kb1) continue;
        const int64_t tr0 = strip * R;
        st.tile_rows = std::min(R, TH - tr0);
        st.oh0 = tr0 * m;
        st.ih0 = st.oh0 - s.pad_t;
        st.iw0 = -s.pad_l;
        if (B) {
          st.x = x + n * CBi * H * W * B;
          st.y = y + n * CBo * OHW * B;
          st.z = ep.residual ? ep.residual + n * CBo * OHW * B : nullptr;
          ks.strip(st);
          if (act_per_item) {
            const int64_t rows = std::min(st.tile_rows * m, OH - st.oh0);
            for (int64_t blk = st.kb0 * nr / B; blk < std::min(CBo, st.kb1 * nr / B); ++blk)
              apply_epilogue(st.y + (blk * OH + st.oh0) * OW * B, rows * OW * B, 1, rows * OW * B, act_only, w.isa_);
          }
          continue;
        }
        st.x = x + n * C * H * W;
        st.y = y + n * K * OHW;
        ks.strip(st);
        if (!ep.trivial()) {
          const int64_t k0 = st.kb0 * nr, kn = std::min(K, st.kb1 * nr) - k0;
          const int64_t rows = std::min(st.tile_rows * m, OH - st.oh0);
          Epilogue e = ep;
          e.bias_axis = ep.bias ? BiasAxis::PerRow : BiasAxis::None;
          if (e.residual) e.residual += n * K * OHW;
          e.residual_ld = OHW;
          apply_epilogue(st.y + k0 * OHW + st.oh0 * OW, OHW, kn, rows * OW, e.offset(k0, st.oh0 * OW), w.isa_);
        }
      }
    }
  };
  if (slots > 1) run.pool->parallel_for(slots, body, 1);
  else body(0, 1);
  if (late_act && !act_per_item) {
    const int64_t total = s.batch * CBo * OHW * B;
    apply_epilogue(y, total, 1, total, act_only, w.isa_);
  }
}

void winograd_transform_filter(const float* g, int64_t out_c, int64_t in_c, int m, float* u) {
  auto one = [&](const auto& G, int a) {
    for (int64_t k = 0; k < out_c; ++k)
      for (int64_t c = 0; c < in_c; ++c) {
        const float* f = g + (k * in_c + c) * 9;
        for (int i = 0; i < a; ++i)
          for (int j = 0; j < a; ++j) {
            double acc = 0;
            for (int p = 0; p < 3; ++p)
              for (int q = 0; q < 3; ++q) acc += G[i][p] * static_cast<double>(f[p * 3 + q]) * G[j][q];
            u[((i * a + j) * in_c + c) * out_c + k] = static_cast<float>(acc);
          }
      }
  };
  if (m == 2) return one(winograd::Matrices<2>::G, 4);
  if (m == 4) return one(winograd::Matrices<4>::G, 6);
  throw Error(ErrorKind::Internal, "winograd: unsupported tile " + std::to_string(m));
}

std::vector<float> winograd_transform_filter(const float* g, int64_t out_c, int64_t in_c, int m) {
  const int64_t a = m + 2;
  std::vector<float> u(static_cast<size_t>(a * a * in_c * out_c));
  winograd_transform_filter(g, out_c, in_c, m, u.data());
  return u;
}

}  // namespace fusor
