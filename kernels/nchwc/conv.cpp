#include "kernels/nchwc/conv.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "core/util/error.h"
#include "kernels/nchwc/conv_kernels.h"
#include "kernels/nchwc/nchwc_format.h"
#include "kernels/thread_pool.h"

namespace fusor {

using nchwc_detail::kMaxO;
using nchwc_detail::kMaxR;
using nchwc_detail::TileArgs;
using nchwc_detail::TileFn;
using nchwc_detail::TileKernels;

namespace {

// Bytes of partial sums (output tiles) a run of tiles keeps across its chunks of input blocks.
constexpr int64_t kPartialBytes = 96 * 1024;

// Input blocks per chunk: at most `fit` (at least 1), the chunks of n blocks as even as can be
// (9 blocks that fit 8 at a time: 5 + 4, not 8 + 1).
int64_t even_chunk(int64_t fit, int64_t n) {
  const int64_t chunks = (n + std::max<int64_t>(fit, 1) - 1) / std::max<int64_t>(fit, 1);
  return (n + chunks - 1) / chunks;
}

// Floor and ceiling of a / b for b > 0 and any a.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

const TileKernels* tiles_for(Isa isa, int64_t block) {
  if (block != 16) return nullptr;
  switch (clamp_isa(isa)) {
    case Isa::Avx512: return nchwc_detail::tile_kernels_avx512();
    case Isa::Avx2: return nchwc_detail::tile_kernels_avx2();
    case Isa::Scalar: break;
  }
  return nullptr;
}

// Output blocks per pack group, the O of the tiles: 2 (28 accumulators of 14 pixels, the two
// weight vectors and the broadcast fill the 32 AVX-512 registers; 4 x 7 needs embedded
// broadcasts and loses 10-25%, bench/nchwc_conv_bench). FUSOR_NCHWC_PACK_O overrides it (tuning).
int64_t pack_blocks() {
  static const int64_t o = [] {
    const char* e = std::getenv("FUSOR_NCHWC_PACK_O");
    return e ? std::clamp<int64_t>(std::atoi(e), 1, kMaxO) : int64_t{2};
  }();
  return o;
}

// Weights per chunk of input blocks: kept in L2 while every tile of a work item reads them, or,
// for 1x1 convs on an ISA whose tiles reuse a weight vector for few pixels (TileKernels::
// pointwise_chunk_bytes: AVX2's 3), in L1: a tile then streams its inputs, not its weights, from
// L2 (bench/nchwc_conv_bench, this Zen 3: 960 -> 320 at 7x7 395 -> 369 us, 576 -> 96 at 14x14
// 294 -> 264). FUSOR_NCHWC_CHUNK_KB overrides both (tuning).
int64_t chunk_bytes(const TileKernels* tk, bool pointwise) {
  static const int64_t env = [] {
    const char* e = std::getenv("FUSOR_NCHWC_CHUNK_KB");
    return e ? std::max<int64_t>(1, std::atoi(e)) * 1024 : int64_t{0};
  }();
  if (env) return env;
  return tk && pointwise && tk->pointwise_chunk_bytes ? tk->pointwise_chunk_bytes : int64_t{192 * 1024};
}
static_assert(nchwc_detail::kMaxSegments == kNchwcMaxKernelW);

}  // namespace

NchwcConvWeights::NchwcConvWeights(const float* w, int64_t out_c, int64_t in_c_per_group, int64_t k_h, int64_t k_w,
                                   int64_t group, bool plain_input, int64_t block, std::optional<Isa> isa,
                                   const Prepacker& pp)
    : out_c_(out_c),
      in_c_per_group_(in_c_per_group),
      k_h_(k_h),
      k_w_(k_w),
      group_(group),
      block_(block),
      plain_(plain_input),
      isa_(clamp_isa(isa ? *isa : active_isa())) {
  if (group <= 0 || out_c <= 0 || in_c_per_group <= 0 || out_c % group != 0 || k_h <= 0 || k_w <= 0)
    throw_internal("NchwcConvWeights: bad geometry");
  if (block != 8 && block != 16) throw_internal("NchwcConvWeights: block must be 8 or 16");
  if (plain_input && group != 1) throw_internal("NchwcConvWeights: NCHW input needs group 1");
  const int64_t B = block, M = out_c, C = in_c_per_group * group, icg = in_c_per_group, ocg = out_c / group;
  const int64_t CBo = nchwc_blocks(M, B), taps = k_h * k_w;
  depthwise_ = !plain_input && group > 1 && icg == 1 && ocg == 1;
  if (depthwise_) {
    steps_ = taps;
    const size_t n = static_cast<size_t>(CBo * taps * B);
    packed_size_ = static_cast<int64_t>(n);
    data_ = pp.get("w.nchwc.B" + std::to_string(B) + ".dw", n * sizeof(float), [&](void* dst) {
                float* d = static_cast<float*>(dst);
                std::fill(d, d + n, 0.0f);
                for (int64_t c = 0; c < M; ++c)
                  for (int64_t kh = 0; kh < k_h; ++kh)
                    for (int64_t kw = 0; kw < k_w; ++kw)
                      d[((c / B) * taps + kw * k_h + kh) * B + c % B] = w[(c * k_h + kh) * k_w + kw];
              }).share<float>();
    return;
  }
  const int64_t L = plain_input ? C : B;
  steps_ = k_w * k_h * L;
  half_groups_ = !plain_input && group > 1 && B == 16 && icg == ocg && 8 % icg == 0;
  // The input block range of each output block: the union of its channels' groups.
  std::vector<std::pair<int64_t, int64_t>> range(CBo);
  for (int64_t ob = 0; ob < CBo; ++ob) {
    if (plain_input) {
      range[ob] = {0, 1};
      continue;
    }
    const int64_t oc0 = ob * B, oc1 = std::min(M, oc0 + B);
    const int64_t g0 = oc0 / ocg, g1 = (oc1 - 1) / ocg;
    range[ob] = {g0 * icg / B, nchwc_blocks((g1 + 1) * icg, B)};
  }
  int64_t total = 0;
  for (int64_t ob = 0; ob < CBo;) {
    PackGroup g;
    g.ob0 = ob;
    g.ib0 = range[ob].first;
    g.nib = range[ob].second - range[ob].first;
    while (ob < CBo && g.blocks < pack_blocks() && range[ob] == range[g.ob0]) ++ob, ++g.blocks;
    g.offset = total;
    total += g.nib * steps_ * g.blocks * B;
    groups_.push_back(g);
  }
  packed_size_ = total;
  const std::string name = "w.nchwc.B" + std::to_string(B) + ".O" + std::to_string(pack_blocks()) +
                           (plain_input ? ".plain" : "");
  data_ = pp.get(name, static_cast<size_t>(total) * sizeof(float), [&](void* dst) {
              float* base = static_cast<float*>(dst);
              std::fill(base, base + total, 0.0f);
              for (const PackGroup& g : groups_)
                for (int64_t ib = 0; ib < g.nib; ++ib)
                  for (int64_t kw = 0; kw < k_w; ++kw)
                    for (int64_t kh = 0; kh < k_h; ++kh)
                      for (int64_t l = 0; l < L; ++l) {
                        const int64_t s = (kw * k_h + kh) * L + l;
                        const int64_t ic = plain_input ? l : (g.ib0 + ib) * B + l;
                        float* d = base + g.offset + ((ib * steps_ + s) * g.blocks) * B;
                        for (int64_t o = 0; o < g.blocks; ++o)
                          for (int64_t j = 0; j < B; ++j) {
                            const int64_t oc = (g.ob0 + o) * B + j;
                            if (oc >= M || ic >= C || ic / icg != oc / ocg) continue;
                            d[o * B + j] = w[((oc * icg + ic % icg) * k_h + kh) * k_w + kw];
                          }
                      }
            }).share<float>();
}

NchwcConvWeights NchwcConvWeights::with_input_scale(const float* scale, float* dst) const {
  if (depthwise_) throw_internal("NchwcConvWeights::with_input_scale: depthwise weights");
  NchwcConvWeights r = *this;
  const int64_t B = block_, L = plain_ ? in_c() : B, C = in_c();
  const float* src = data_.get();
  for (const PackGroup& g : groups_)
    for (int64_t ib = 0; ib < g.nib; ++ib)
      for (int64_t st = 0; st < steps_; ++st) {
        const int64_t l = st % L, ic = plain_ ? l : (g.ib0 + ib) * B + l;
        const float k = ic < C ? scale[ic] : 0.0f;
        const int64_t at = g.offset + (ib * steps_ + st) * g.blocks * B;
        for (int64_t j = 0; j < g.blocks * B; ++j) dst[at + j] = src[at + j] * k;
      }
  r.data_ = std::shared_ptr<const float>(dst, [](const float*) {});
  return r;
}

void nchwc_conv(const NchwcConvWeights& w, const Conv2dShape& s0, const float* x, float* y, const Epilogue& ep,
                const GemmRun& run) {
  if (s0.out_c != w.out_c_ || s0.in_c != w.in_c() || s0.group != w.group_ || s0.k_h != w.k_h_ || s0.k_w != w.k_w_)
    throw_internal("nchwc_conv: shape does not match the packed weights");
  if (ep.scale != 1.0f) throw_internal("nchwc_conv: scale must be 1");
  if (s0.k_w > kNchwcMaxKernelW) throw_internal("nchwc_conv: kernel wider than kNchwcMaxKernelW");
  if (s0.batch <= 0 || s0.out_h <= 0 || s0.out_w <= 0) return;
  Conv2dShape s = s0;
  // A 1x1 stride-1 unpadded conv is one long row: tiles run across the image's rows.
  if (s.k_h == 1 && s.k_w == 1 && s.stride_h == 1 && s.stride_w == 1 && s.pad_t == 0 && s.pad_l == 0 &&
      s.pad_b == 0 && s.pad_r == 0 && s.in_h == s.out_h && s.in_w == s.out_w) {
    s.in_w = s.out_w = s.in_h * s.in_w;
    s.in_h = s.out_h = 1;
  }
  const int64_t B = w.block_, CBo = nchwc_blocks(s.out_c, B), CBi = w.plain_ ? 1 : nchwc_blocks(s.in_c, B);
  const int64_t H = s.in_h, Wd = s.in_w, OH = s.out_h, OW = s.out_w, KH = s.k_h, KW = s.k_w;
  const int64_t in_image = w.plain_ ? s.in_c * H * Wd : CBi * H * Wd * B, ib_stride = H * Wd * B;
  const int64_t out_plane = OH * OW * B, out_image = CBo * out_plane;
  const int64_t ps = s.stride_w * (w.plain_ ? 1 : B);
  const int64_t S = w.steps_, L = w.depthwise_ ? 1 : S / (KH * KW);
  const TileKernels* tk = tiles_for(w.isa_, B);

  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  Epilogue post;  // a non-clamp activation, applied on each finished tile
  if (ep.act_is_clamp()) {
    lo = ep.clamp_lo();
    hi = ep.clamp_hi();
  } else {
    post.act = ep.act;
  }
  // The compiled tiles apply the CNN activations in registers: no pass (the generic tiles still
  // need one, `post`).
  const bool act_in_tile = tk && nchwc_detail::tile_activation(ep.act.kind);
  ThreadPool* pool = run.pool && run.pool->num_threads() > 1 ? run.pool : nullptr;
  const int threads = pool ? pool->num_threads() : 1;
  const double flops = 2.0 * s.batch * s.out_c * OH * OW * (s.in_c / s.group) * KH * KW;

  // Tile shapes. Along a row: nt tiles of R pixels, the last one shorter.
  struct RowSplit {
    int64_t R = 1, nt = 1;
  };
  auto split_row = [&](int64_t r_max) {
    RowSplit rs;
    const int64_t n = (OW + r_max - 1) / r_max;
    rs.R = (OW + n - 1) / n;
    rs.nt = (OW + rs.R - 1) / rs.R;
    return rs;
  };
  // Dense and grouped: per pack group, O blocks x R pixels (the most accumulators in use).
  struct Plan {
    int64_t o = 1, chunk = 1;
    RowSplit rs;
    bool half_last = false;  // one tile of all the group's blocks, the last of them half (half-last tiles)
  };
  // Half-block tiles for one-block pack groups (w_step = B) of groups inside block halves.
  const bool half = tk && tk->max_half_r > 0 && w.half_groups_ && (ps == B || ps == 2 * B);
  // Half-last tiles for the pack group of the last output block when only its first half holds
  // channels (out_c % 16 == 8: 24, 40, 72... on AVX2).
  const bool half_last = tk && tk->half_last && !w.plain_ && (ps == B || ps == 2 * B) && s.out_c % B == B / 2;
  const int64_t ngroups = static_cast<int64_t>(w.groups_.size());
  std::vector<Plan> plans(w.depthwise_ ? 1 : ngroups);
  if (w.depthwise_) {
    plans[0].rs = split_row(tk ? tk->max_dw_r : kMaxR);
  } else {
    for (int64_t gi = 0; gi < ngroups; ++gi) {
      const auto& g = w.groups_[gi];
      Plan best;
      int64_t best_score = -1;
      if (half_last && g.ob0 + g.blocks == CBo && !(half && g.blocks == 1) &&
          tk->max_vec_acc / (2 * g.blocks - 1) >= 2) {
        best = Plan{g.blocks, 1, split_row(std::min<int64_t>(kMaxR, tk->max_vec_acc / (2 * g.blocks - 1))), true};
      }
      for (int64_t o = g.blocks; o >= 1 && !best.half_last; --o) {  // else the most accumulators
        if (g.blocks % o != 0) continue;
        const int64_t r_max = half && g.blocks == 1 ? tk->max_half_r
                              : tk                  ? std::min<int64_t>(kMaxR, tk->max_acc / o)
                                                    : kMaxR;
        if (r_max < 1) continue;
        const RowSplit rs = split_row(r_max);
        const int64_t score = o * OW / rs.nt;  // accumulators in use, on average
        if (score > best_score) best_score = score, best = Plan{o, 1, rs};
      }
      best.chunk = even_chunk(chunk_bytes(tk, KH * KW == 1) / (S * g.blocks * B * 4), g.nib);
      plans[gi] = best;
    }
  }
  // Distinct row splits: each gets a table of (lead, trail) per tile column and kernel column.
  std::vector<int64_t> split_of(plans.size());
  std::vector<RowSplit> splits;
  for (size_t i = 0; i < plans.size(); ++i) {
    size_t j = 0;
    while (j < splits.size() && splits[j].R != plans[i].rs.R) ++j;
    if (j == splits.size()) splits.push_back(plans[i].rs);
    split_of[i] = static_cast<int64_t>(j);
  }

  // Scratch: step offsets, the bias padded to whole blocks, per output row its valid kernel rows,
  // per row split and tile column the pixels each kernel column skips.
  std::unique_ptr<char[]> owned;
  auto scratch = [&](size_t bytes) -> void* {
    if (run.scratch) return run.scratch(bytes);
    owned.reset(new char[bytes + 64]);
    return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(owned.get()) + 63) & ~uintptr_t(63));
  };
  auto round64 = [](size_t b) { return (b + 63) / 64 * 64; };
  const size_t off_bytes = round64(static_cast<size_t>(S) * sizeof(int32_t));
  const size_t bias_bytes = round64(static_cast<size_t>(CBo * B) * sizeof(float));
  const size_t row_bytes = round64(static_cast<size_t>(OH) * 2 * sizeof(int32_t));
  size_t col_bytes = 0;
  for (const RowSplit& rs : splits) col_bytes += round64(static_cast<size_t>(rs.nt * KW) * 2 * sizeof(int32_t));
  char* mem = static_cast<char*>(scratch(off_bytes + bias_bytes + row_bytes + col_bytes));
  int32_t* off = reinterpret_cast<int32_t*>(mem);
  float* bias = reinterpret_cast<float*>(mem + off_bytes);
  int32_t* row_kh = reinterpret_cast<int32_t*>(mem + off_bytes + bias_bytes);
  std::vector<const int32_t*> col_lt(splits.size());
  {
    char* c = mem + off_bytes + bias_bytes + row_bytes;
    // No pixel of any tile outside the input's columns (a 1x1 conv's single row of thousands of
    // tiles, 17k cycles per call with the loop below): all zeros.
    const bool inside = s.pad_l <= 0 && (OW - 1) * s.stride_w - s.pad_l + (KW - 1) * s.dil_w <= Wd - 1;
    for (size_t i = 0; i < splits.size(); ++i) {
      int32_t* t = reinterpret_cast<int32_t*>(c);
      const int64_t R = splits[i].R;
      if (inside) std::fill(t, t + splits[i].nt * KW * 2, 0);
      for (int64_t j = 0; j < (inside ? 0 : splits[i].nt); ++j) {
        const int64_t ox0 = j * R, r = std::min(R, OW - ox0);
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t ix0 = ox0 * s.stride_w - s.pad_l + kw * s.dil_w;  // pixel 0's column
          // Divisions only at the edges (a 1x1 conv's single row has thousands of tiles).
          const int64_t lead = ix0 >= 0 ? 0 : std::clamp<int64_t>(ceil_div(-ix0, s.stride_w), 0, r);
          const int64_t trail = ix0 + (r - 1) * s.stride_w <= Wd - 1
                                    ? 0
                                    : std::clamp<int64_t>(r - 1 - floor_div(Wd - 1 - ix0, s.stride_w), 0, r);
          t[(j * KW + kw) * 2] = static_cast<int32_t>(lead);
          t[(j * KW + kw) * 2 + 1] = static_cast<int32_t>(trail);
        }
      }
      col_lt[i] = t;
      c += round64(static_cast<size_t>(splits[i].nt * KW) * 2 * sizeof(int32_t));
    }
  }
  for (int64_t oy = 0; oy < OH; ++oy) {
    const int64_t iy0 = oy * s.stride_h - s.pad_t;
    const bool inside = iy0 >= 0 && iy0 + (KH - 1) * s.dil_h <= H - 1;
    const int64_t kh_lo = inside ? 0 : std::clamp<int64_t>(ceil_div(-iy0, s.dil_h), 0, KH);
    row_kh[2 * oy] = static_cast<int32_t>(kh_lo);
    row_kh[2 * oy + 1] = static_cast<int32_t>(inside ? KH : std::clamp<int64_t>(ceil_div(H - iy0, s.dil_h), kh_lo, KH));
  }
  for (int64_t kw = 0; kw < KW; ++kw)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t l = 0; l < L; ++l) {
        const int64_t tap = kh * s.dil_h * Wd + kw * s.dil_w;
        off[(kw * KH + kh) * L + l] = static_cast<int32_t>(w.plain_ ? l * H * Wd + tap : tap * B + l);
      }
  std::fill(bias, bias + CBo * B, 0.0f);
  if (ep.bias) std::copy(ep.bias, ep.bias + s.out_c, bias);

  const int64_t unit = w.plain_ ? 1 : B;  // floats per input pixel
  // A run of tiles [t0, t1) with its tile shape; finish() then applies a non-clamp activation to
  // the pixels it wrote (contiguous in each output block).
  auto make_run = [&](const RowSplit& rs, const int32_t* lt, int64_t t0, int64_t t1) {
    nchwc_detail::TileRun tr;
    tr.x_row = s.stride_h * Wd * unit;
    tr.x_col = rs.R * s.stride_w * unit;
    tr.row_kh = row_kh;
    tr.col_lt = lt;
    tr.k_h = static_cast<int32_t>(KH);
    tr.k_w = static_cast<int32_t>(KW);
    tr.lanes = static_cast<int32_t>(L);
    tr.nt = rs.nt;
    tr.R = rs.R;
    tr.out_w = OW;
    tr.block = B;
    tr.t0 = t0;
    tr.t1 = t1;
    tr.a.off = off;
    tr.a.lo = lo;
    tr.a.hi = hi;
    if (act_in_tile) {
      tr.a.act = ep.act.kind;
      tr.a.alpha = ep.act.alpha;
      tr.a.beta = ep.act.beta;
    }
    return tr;
  };
  const int64_t x_origin = (-s.pad_t * Wd - s.pad_l) * unit;  // output pixel (0, 0)'s tap (0, 0)
  auto finish = [&](float* y_block0, int64_t blocks, const RowSplit& rs, int64_t t0, int64_t t1) {
    if (post.act.kind == Activation::None || t0 >= t1) return;
    const int64_t p0 = (t0 / rs.nt) * OW + (t0 % rs.nt) * rs.R;
    const int64_t jl = (t1 - 1) % rs.nt, p1 = ((t1 - 1) / rs.nt) * OW + (jl == rs.nt - 1 ? OW : (jl + 1) * rs.R);
    for (int64_t o = 0; o < blocks; ++o)
      apply_epilogue(y_block0 + o * out_plane + p0 * B, (p1 - p0) * B, 1, (p1 - p0) * B, post, w.isa_);
  };
  auto last_r = [&](const RowSplit& rs) { return OW - (rs.nt - 1) * rs.R; };
  // Tiles per range when a non-clamp activation (exp, division...) follows in a separate pass:
  // ranges whose outputs (`blocks` blocks of R pixels per tile) fit in L1/L2 with room to spare,
  // so the pass reads them back from cache instead of from L3 after a whole plane.
  auto act_tiles = [&](int64_t blocks, const RowSplit& rs, int64_t n) -> int64_t {
    if (post.act.kind == Activation::None || act_in_tile) return std::max<int64_t>(n, 1);
    constexpr int64_t kActRangeBytes = 64 * 1024;
    return std::max<int64_t>(1, kActRangeBytes / (blocks * rs.R * B * static_cast<int64_t>(sizeof(float))));
  };

  if (w.depthwise_) {
    const RowSplit rs = plans[0].rs;
    const int32_t* lt = col_lt[0];
    const int64_t tiles = OH * rs.nt, units = s.batch * CBo;
    int64_t per_item = pool && flops > 2e6 ? std::max<int64_t>(1, tiles * units / (8 * threads)) : tiles;
    // Few items, not a multiple of the threads (13 blocks of 200 channels: 7 : 6 at best): planes
    // cut in parts until they are.
    const bool whole_planes = per_item == tiles;
    for (int64_t parts = 2; pool && whole_planes && units % threads != 0 && units < 16 * threads && parts <= tiles;
         ++parts) {
      per_item = (tiles + parts - 1) / parts;
      if (units * ((tiles + per_item - 1) / per_item) % threads == 0) break;
    }
    const int64_t items_per_unit = (tiles + per_item - 1) / per_item;
    const nchwc_detail::RunFn run_fn = tk ? tk->depthwise_run(static_cast<int>(rs.R), static_cast<int>(ps)) : nullptr;
    const TileFn last_fn = tk && last_r(rs) != rs.R ? tk->depthwise(static_cast<int>(last_r(rs)), static_cast<int>(ps)) : nullptr;
    auto body = [&](int64_t i0, int64_t i1) {
      for (int64_t it = i0; it < i1; ++it) {
        const int64_t u = it / items_per_unit, n = u / CBo, ob = u % CBo;
        const int64_t t0 = (it % items_per_unit) * per_item, t1 = std::min(tiles, t0 + per_item);
        const int64_t sub = act_tiles(1, rs, t1 - t0);
        for (int64_t a0 = t0; a0 < t1; a0 += sub) {
          const int64_t a1 = std::min(t1, a0 + sub);
          nchwc_detail::TileRun tr = make_run(rs, lt, a0, a1);
          tr.x0 = x + n * in_image + ob * ib_stride + x_origin;
          tr.y0 = y + n * out_image + ob * out_plane;
          tr.z0 = ep.residual ? ep.residual + (tr.y0 - y) : nullptr;
          tr.a.w = w.data_.get() + ob * S * B;
          tr.a.bias = bias + ob * B;
          if (KW == 3 && s.dil_w == 1 && s.stride_w == 1) {  // the tiles' row form (conv_impl.h)
            tr.a.dw_kw = static_cast<int32_t>(KW);
            tr.a.dw_kh = static_cast<int32_t>(KH);
          }
          tr.last_tile = last_fn;
          if (run_fn && (last_fn || last_r(rs) == rs.R)) {
            run_fn(tr);
            if (!act_in_tile) finish(tr.y0, 1, rs, a0, a1);
          } else {
            tr.a.act = Activation::None;
            nchwc_detail::run_depthwise_generic(tr, static_cast<int>(ps));
            finish(tr.y0, 1, rs, a0, a1);
          }
        }
      }
    };
    const int64_t items = units * items_per_unit;
    if (pool && items > 1) pool->parallel_for(items, body, 1);
    else body(0, items);
    return;
  }

  // Items: (image, pack group, range of tiles).
  int64_t max_tiles = 1;
  for (const Plan& p : plans) max_tiles = std::max(max_tiles, OH * p.rs.nt);
  const int64_t units = s.batch * ngroups;
  int64_t split = pool && flops > 2e6 ? std::clamp<int64_t>((4 * threads + units - 1) / units, 1, max_tiles) : 1;
  // Few items, not a multiple of the threads (3 groups in 3 ranges: 9 items, 5 : 4 at best; 5
  // groups: 3 : 2): more ranges until they are. Many items balance well enough as they are.
  // (Only for convs worth splitting: a small one-group conv stays one item, on one thread.)
  while (pool && flops > 2e6 && units * split % threads != 0 && units * split < 16 * threads && split < max_tiles)
    ++split;
  auto body = [&](int64_t i0, int64_t i1) {
    for (int64_t it = i0; it < i1; ++it) {
      const int64_t u = it / split, n = u / ngroups, gi = u % ngroups;
      const auto& g = w.groups_[gi];
      const Plan& p = plans[gi];
      const int32_t* lt = col_lt[split_of[gi]];
      const int64_t tiles = OH * p.rs.nt, per = (tiles + split - 1) / split;
      const int64_t t0 = (it % split) * per, t1 = std::min(tiles, t0 + per);
      if (t0 >= t1) continue;
      const float* w_g = w.data_.get() + g.offset;
      // With every input block in one chunk, the weights are read once per tile range anyway: a
      // non-clamp activation then follows each short range while its outputs are still in cache.
      // With several chunks, ranges whose partial sums (read and written once per chunk) stay in L2.
      const int64_t sub = p.chunk >= g.nib ? act_tiles(g.blocks, p.rs, t1 - t0)
                                           : std::max<int64_t>(1, kPartialBytes / (g.blocks * p.rs.R * B * 4));
      for (int64_t a0 = t0; a0 < t1; a0 += sub) {
        const int64_t a1 = std::min(t1, a0 + sub);
        for (int64_t c0 = 0; c0 < g.nib; c0 += p.chunk) {
          for (int64_t o0 = 0; o0 < g.blocks; o0 += p.o) {
            const int64_t o = std::min(p.o, g.blocks - o0);
            nchwc_detail::TileRun tr = make_run(p.rs, lt, a0, a1);
            tr.a.nib = std::min(p.chunk, g.nib - c0);
            tr.a.x_ib_stride = ib_stride;
            tr.a.w_ib_stride = S * g.blocks * B;
            tr.a.w_step = g.blocks * B;
            tr.a.y_block_stride = out_plane;
            tr.a.first = c0 == 0;
            tr.a.last = c0 + tr.a.nib >= g.nib;
            tr.a.tap_lanes = static_cast<int32_t>(L);
            if (!w.plain_ && w.group_ == 1 && tr.a.last) tr.a.tail_lanes = static_cast<int32_t>(s.in_c % B);
            tr.a.w = w_g + c0 * tr.a.w_ib_stride + o0 * B;
            tr.a.bias = bias + (g.ob0 + o0) * B;
            tr.x0 = x + n * in_image + (g.ib0 + c0) * ib_stride + x_origin;
            tr.y0 = y + n * out_image + (g.ob0 + o0) * out_plane;
            tr.z0 = ep.residual && tr.a.last ? ep.residual + (tr.y0 - y) : nullptr;
            const int oi = static_cast<int>(o), pi = static_cast<int>(ps);
            const int ri = static_cast<int>(p.rs.R), li = static_cast<int>(last_r(p.rs));
            const bool h = half && g.blocks == 1 && !p.half_last;
            const nchwc_detail::RunFn run_fn = !tk         ? nullptr
                                               : p.half_last ? tk->half_last_run(oi, ri, pi)
                                               : h           ? tk->half_run(ri, pi)
                                                             : tk->dense_run(oi, ri, pi);
            tr.last_tile = !tk || li == ri ? nullptr
                           : p.half_last   ? tk->half_last(oi, li, pi)
                           : h             ? tk->half(li, pi)
                                           : tk->dense(oi, li, pi);
            if (run_fn && (tr.last_tile || last_r(p.rs) == p.rs.R)) {
              run_fn(tr);
              if (tr.a.last && !act_in_tile) finish(tr.y0, o, p.rs, a0, a1);
            } else {
              tr.a.act = Activation::None;
              nchwc_detail::run_generic(tr, oi, pi);
              if (tr.a.last) finish(tr.y0, o, p.rs, a0, a1);
            }
          }
        }
      }
    }
  };
  const int64_t items = units * split;
  if (pool && items > 1) pool->parallel_for(items, body, 1);
  else body(0, items);
}

}  // namespace fusor
