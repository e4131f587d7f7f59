#include "kernels/conv/conv.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/util/error.h"
#include "kernels/conv/depthwise_kernels.h"
#include "kernels/thread_pool.h"

namespace fusor {

namespace conv_detail {
const DepthwiseKernels& depthwise_kernels(Isa isa) {
  switch (clamp_isa(isa)) {
    case Isa::Avx512: return depthwise_kernels_avx512();
    case Isa::Avx2: return depthwise_kernels_avx2();
    case Isa::Scalar: break;
  }
  return depthwise_kernels_scalar();
}
}  // namespace conv_detail

namespace {

using conv_detail::DwGeom;

bool is_depthwise(int64_t out_c, int64_t in_c_per_group, int64_t group) {
  return group > 1 && in_c_per_group == 1 && out_c == group;
}

DwGeom dw_geom(const Conv2dShape& s) {
  return DwGeom{s.in_h, s.in_w, s.out_h, s.out_w, s.k_h, s.k_w, s.stride_h, s.stride_w,
                s.dil_h, s.dil_w, s.pad_t, s.pad_l, s.in_c};
}

// Sequential GEMM calls of one convolution reuse one scratch block instead of asking the context
// for a new one each time (each call's workspace is dead when the call returns).
struct ReusedScratch {
  std::function<void*(size_t)> upstream;
  void* block = nullptr;
  size_t size = 0;
  std::unique_ptr<char[]> owned;
  void* get(size_t bytes) {
    if (bytes <= size) return block;
    if (upstream) {
      block = upstream(bytes);
    } else {
      owned.reset(new char[bytes + 64]);
      const uintptr_t p = reinterpret_cast<uintptr_t>(owned.get());
      block = reinterpret_cast<void*>((p + 63) & ~uintptr_t(63));
    }
    size = bytes;
    return block;
  }
};

// Implicit im2col, NCHW: columns j = output pixels, rows k = (c, ky, kx). Packs columns
// [j0, j0 + n) x k [k0, k0 + kc) of image xg (one group's channels) into nr-wide panels.
void pack_im2col_nchw(const float* xg, const Conv2dShape& s, int nr, int64_t j0, int64_t n, int64_t k0, int64_t kc,
                      float* dst) {
  struct Seg {
    int64_t oy, ox0, q0, cnt;
  };
  Seg segs[64];
  const int64_t khw = s.k_h * s.k_w, plane = s.in_h * s.in_w;
  for (int64_t p0 = 0; p0 < n; p0 += nr, dst += kc * nr) {
    const int64_t w = std::min<int64_t>(nr, n - p0);
    int nseg = 0;
    for (int64_t q = 0, j = j0 + p0; q < w;) {
      const int64_t oy = j / s.out_w, ox = j % s.out_w, cnt = std::min(w - q, s.out_w - ox);
      segs[nseg++] = Seg{oy, ox, q, cnt};
      q += cnt;
      j += cnt;
    }
    for (int64_t kk = 0; kk < kc; ++kk) {
      const int64_t k = k0 + kk, c = k / khw, r = k % khw, ky = r / s.k_w, kx = r % s.k_w;
      float* d = dst + kk * nr;
      const float* xc = xg + c * plane;
      for (int si = 0; si < nseg; ++si) {
        const Seg& sg = segs[si];
        float* dd = d + sg.q0;
        const int64_t iy = sg.oy * s.stride_h - s.pad_t + ky * s.dil_h;
        if (iy < 0 || iy >= s.in_h) {
          std::fill(dd, dd + sg.cnt, 0.0f);
          continue;
        }
        const float* row = xc + iy * s.in_w;
        const int64_t ix0 = sg.ox0 * s.stride_w - s.pad_l + kx * s.dil_w;
        if (s.stride_w == 1) {
          const int64_t lo = std::clamp<int64_t>(-ix0, 0, sg.cnt), hi = std::clamp<int64_t>(s.in_w - ix0, lo, sg.cnt);
          std::fill(dd, dd + lo, 0.0f);
          std::memcpy(dd + lo, row + ix0 + lo, (hi - lo) * sizeof(float));
          std::fill(dd + hi, dd + sg.cnt, 0.0f);
        } else {
          for (int64_t t = 0; t < sg.cnt; ++t) {
            const int64_t ix = ix0 + t * s.stride_w;
            dd[t] = ix >= 0 && ix < s.in_w ? row[ix] : 0.0f;
          }
        }
      }
      std::fill(d + w, d + nr, 0.0f);
    }
  }
}

// Implicit im2col, NHWC: rows i = output pixels, k = (ky, kx, c within the group). Packs rows
// [i0, i0 + m) x k [k0, k0 + kc) of image xn into mr-row panels.
void pack_im2col_nhwc(const float* xn, const Conv2dShape& s, int64_t g, int mr, int64_t i0, int64_t m, int64_t k0,
                      int64_t kc, float* dst) {
  const int64_t icg = s.in_c / s.group;
  for (int64_t p0 = 0; p0 < m; p0 += mr, dst += kc * mr) {
    const int64_t rows = std::min<int64_t>(mr, m - p0);
    for (int64_t q = 0; q < rows; ++q) {
      const int64_t pix = i0 + p0 + q, oy = pix / s.out_w, ox = pix % s.out_w;
      float* d = dst + q;
      for (int64_t k = k0; k < k0 + kc;) {
        const int64_t tap = k / icg, c = k % icg, ky = tap / s.k_w, kx = tap % s.k_w;
        const int64_t run = std::min(icg - c, k0 + kc - k);
        const int64_t iy = oy * s.stride_h - s.pad_t + ky * s.dil_h, ix = ox * s.stride_w - s.pad_l + kx * s.dil_w;
        float* dk = d + (k - k0) * mr;
        if (iy >= 0 && iy < s.in_h && ix >= 0 && ix < s.in_w) {
          const float* src = xn + (iy * s.in_w + ix) * s.in_c + g * icg + c;
          for (int64_t t = 0; t < run; ++t) dk[t * mr] = src[t];
        } else {
          for (int64_t t = 0; t < run; ++t) dk[t * mr] = 0.0f;
        }
        k += run;
      }
    }
    for (int64_t q = rows; q < mr; ++q)
      for (int64_t kk = 0; kk < kc; ++kk) dst[kk * mr + q] = 0.0f;
  }
}

}  // namespace

PackedConvWeights::PackedConvWeights(const float* w, int64_t out_c, int64_t in_c_per_group, int64_t k_h, int64_t k_w,
                                     int64_t group, ConvLayout layout, std::optional<Isa> isa, const Prepacker& pp)
    : layout_(layout),
      isa_(clamp_isa(isa ? *isa : active_isa())),
      out_c_(out_c),
      in_c_per_group_(in_c_per_group),
      k_h_(k_h),
      k_w_(k_w),
      group_(group) {
  if (group <= 0 || out_c % group != 0) throw_internal("PackedConvWeights: out channels not divisible by group");
  const int64_t khw = k_h * k_w, K = in_c_per_group * khw, ocg = out_c / group;
  if (is_depthwise(out_c, in_c_per_group, group)) {
    // The reordering depends on the layout only, not on the ISA.
    const std::string name = std::string("w.dw.") + (layout == ConvLayout::NCHW ? "nchw" : "nhwc");
    depthwise_ = pp.get(name, static_cast<size_t>(out_c * khw) * sizeof(float), [&](void* dst) {
                     float* d = static_cast<float*>(dst);
                     for (int64_t c = 0; c < out_c; ++c)
                       for (int64_t t = 0; t < khw; ++t)
                         d[layout == ConvLayout::NCHW ? c * khw + t : t * out_c + c] = w[c * khw + t];
                   }).share<float>();
    return;
  }
  for (int64_t g = 0; g < group; ++g) {
    const float* wg = w + g * ocg * K;
    const std::string name = "w.g" + std::to_string(g);
    if (layout == ConvLayout::NCHW) {
      a_.emplace_back(MatrixRef{wg, K}, ocg, K, isa_, pp, name);
    } else {
      // B[(ky kw + kx) C/g + c][oc] = W[oc][c][ky][kx], made only when the panels are filled.
      b_.emplace_back(K, ocg, [&](std::vector<float>& t) {
        t.resize(K * ocg);
        for (int64_t oc = 0; oc < ocg; ++oc)
          for (int64_t c = 0; c < in_c_per_group; ++c)
            for (int64_t r = 0; r < khw; ++r) t[(r * in_c_per_group + c) * ocg + oc] = wg[(oc * in_c_per_group + c) * khw + r];
        return MatrixRef{t.data(), ocg};
      }, isa_, pp, name);
    }
  }
}

PackedConvWeights pack_conv_weights(const float* w, const std::vector<int64_t>& w_shape, int64_t group,
                                    ConvLayout layout, const Prepacker& pp) {
  const int64_t kh = w_shape.size() == 4 ? w_shape[2] : 1, kw = w_shape.back();
  return PackedConvWeights(w, w_shape[0], w_shape[1], kh, kw, group, layout, std::nullopt, pp);
}

void conv2d(const PackedConvWeights& w, const Conv2dShape& s, const float* x, float* y, const Epilogue& ep,
            const GemmRun& run_in) {
  if (s.out_c != w.out_c_ || s.group != w.group_ || s.in_c != w.in_c_per_group_ * w.group_ || s.k_h != w.k_h_ ||
      s.k_w != w.k_w_)
    throw_internal("conv2d: shape does not match the packed weights");
  if (s.batch <= 0 || s.out_c <= 0 || s.out_h <= 0 || s.out_w <= 0) return;
  const Isa isa = w.isa_;
  const int64_t ohw = s.out_h * s.out_w, ihw = s.in_h * s.in_w;
  const int64_t G = s.group, ocg = s.out_c / G, icg = s.in_c / G, K = icg * s.k_h * s.k_w;
  const bool nchw = w.layout_ == ConvLayout::NCHW;
  const bool has_bias = ep.bias != nullptr;
  ReusedScratch scratch;
  scratch.upstream = run_in.scratch;
  GemmRun run = run_in;
  run.isa = isa;
  run.scratch = [&scratch](size_t b) { return scratch.get(b); };

  if (w.depthwise_) {
    const conv_detail::DepthwiseKernels& dk = conv_detail::depthwise_kernels(isa);
    const DwGeom g = dw_geom(s);
    const int64_t C = s.out_c, khw = s.k_h * s.k_w;
    if (nchw) {
      // Each plane is copied with its zero border into a per-worker buffer, then convolved
      // without bounds checks; the epilogue runs on the plane while it is in cache.
      const int64_t ph = (s.out_h - 1) * s.stride_h + (s.k_h - 1) * s.dil_h + 1;
      const int64_t pw = (s.out_w - 1) * s.stride_w + (s.k_w - 1) * s.dil_w + 1;
      const int64_t planes = s.batch * C;
      // Cost model: the padded copy plus the taps, ~8 flops per ns on these short rows.
      const double plane_ns = static_cast<double>(ph * pw) * 0.25 + 2.0 * static_cast<double>(ohw * khw) / 8.0;
      const int slots =
          run.pool ? static_cast<int>(std::min<int64_t>(run.pool->threads_for(plane_ns * planes), planes)) : 1;
      // The padded plane, then room for out_h rows of pw outputs (the flat form, depthwise_impl.h).
      const size_t pad_floats = static_cast<size_t>((ph * pw + 15) / 16 * 16);
      const size_t per_slot = pad_floats + static_cast<size_t>((s.out_h * pw + 15) / 16 * 16);
      float* pad_buf = static_cast<float*>(scratch.get(per_slot * slots * sizeof(float)));
      // Planes are claimed in runs of contiguous planes (about four runs per slot): one plane at a
      // time made the threads fight over the counter and over the cache lines where their
      // neighbouring output planes meet, and 2 threads ran slower than 1 (mobilenet_v2).
      const int64_t run_len = std::max<int64_t>(1, planes / (4 * slots));
      std::atomic<int64_t> next{0};
      auto body = [&](int64_t slot, int64_t) {
        float* xp = pad_buf + slot * per_slot;
        for (;;) {
          const int64_t p0 = next.fetch_add(run_len);
          if (p0 >= planes) break;
          for (int64_t p = p0; p < std::min(planes, p0 + run_len); ++p) {
            const int64_t c = p % C;
            const float* xs = x + p * ihw;
            for (int64_t py = 0; py < ph; ++py) {
              float* d = xp + py * pw;
              const int64_t iy = py - s.pad_t;
              if (iy < 0 || iy >= s.in_h) {
                std::fill(d, d + pw, 0.0f);
                continue;
              }
              const int64_t lo = std::clamp<int64_t>(s.pad_l, 0, pw), hi = std::clamp<int64_t>(s.pad_l + s.in_w, lo, pw);
              const float* src = xs + iy * s.in_w - s.pad_l;  // src[px] is padded column px
              if (s.stride_w == 2 && s.k_w <= 16 && s.k_h <= 16) {  // deinterleaved: even columns, then odd (see depthwise_impl.h)
                const int64_t n_even = (pw + 1) / 2, n_odd = pw / 2;
                for (int par = 0; par < 2; ++par) {
                  float* dd = d + (par ? n_even : 0);
                  const int64_t cnt = par ? n_odd : n_even;
                  // column px = 2 i + par is in [lo, hi) for i in [i0, i1)
                  const int64_t i0 = std::min(cnt, std::max<int64_t>(0, (lo - par + 1) / 2));
                  const int64_t i1 = std::clamp<int64_t>((hi - par + 1) / 2, i0, cnt);
                  const float* sp = src + par;
                  std::fill(dd, dd + i0, 0.0f);
                  for (int64_t i = i0; i < i1; ++i) dd[i] = sp[2 * i];
                  std::fill(dd + i1, dd + cnt, 0.0f);
                }
                continue;
              }
              std::fill(d, d + lo, 0.0f);
              std::memcpy(d + lo, src + lo, (hi - lo) * sizeof(float));
              std::fill(d + hi, d + pw, 0.0f);
            }
            float* yp = y + p * ohw;
            dk.plane_nchw(xp, pw, w.depthwise_.get() + c * khw, yp, g, xp + pad_floats);
            Epilogue e1 = ep;
            e1.bias = has_bias ? ep.bias + c : nullptr;
            e1.bias_axis = BiasAxis::PerRow;
            e1.residual = ep.residual ? ep.residual + p * ohw : nullptr;
            e1.residual_ld = ohw;
            apply_epilogue(yp, ohw, 1, ohw, e1, isa);
          }
        }
      };
      if (slots > 1) run.pool->parallel_for(slots, body, 1);
      else body(0, 1);
    } else {
      const int64_t rows_total = s.batch * s.out_h;
      auto rows = [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e;) {
          const int64_t n = r / s.out_h, oy0 = r % s.out_h, oy1 = std::min(s.out_h, oy0 + (e - r));
          float* yn = y + n * ohw * C;
          dk.rows_nhwc(x + n * ihw * C, w.depthwise_.get(), yn, g, oy0, oy1);
          Epilogue e1 = ep;
          e1.bias_axis = BiasAxis::PerColumn;
          e1.residual = ep.residual ? ep.residual + n * ohw * C + oy0 * s.out_w * C : nullptr;
          e1.residual_ld = C;
          apply_epilogue(yn + oy0 * s.out_w * C, C, (oy1 - oy0) * s.out_w, C, e1, isa);
          r += oy1 - oy0;
        }
      };
      const double row_ns = 2.0 * static_cast<double>(s.out_w * C * khw) / 16.0;
      if (run.pool) run.pool->parallel_for_cost(rows_total, row_ns, rows);
      else rows(0, rows_total);
    }
    return;
  }

  // One GEMM per image and group.
  auto one = [&](int64_t n, int64_t g, const GemmRun& run) {
    Epilogue e = ep;
    if (nchw) {
      const int64_t off = (n * s.out_c + g * ocg) * ohw;
      float* c = y + off;
      e.bias = has_bias ? ep.bias + g * ocg : nullptr;
      e.bias_axis = BiasAxis::PerRow;
      e.residual = ep.residual ? ep.residual + off : nullptr;
      e.residual_ld = ohw;
      const float* xg = x + (n * s.in_c + g * icg) * ihw;
      if (s.pointwise()) {
        gemm(w.a_[g], ohw, MatrixRef{xg, ihw}, c, ohw, e, run);
      } else {
        PanelSource a, b;
        a.packed = &w.a_[g];
        const int nr = w.a_[g].tile().nr;
        b.pack = [&](int64_t j0, int64_t cnt, int64_t k0, int64_t kc, float* dst) {
          pack_im2col_nchw(xg, s, nr, j0, cnt, k0, kc, dst);
        };
        gemm_panels(w.a_[g].tile(), ocg, ohw, K, a, b, c, ohw, e, run);
      }
    } else {
      const int64_t off = n * ohw * s.out_c + g * ocg;
      float* c = y + off;
      e.bias = has_bias ? ep.bias + g * ocg : nullptr;
      e.bias_axis = BiasAxis::PerColumn;
      e.residual = ep.residual ? ep.residual + off : nullptr;
      e.residual_ld = s.out_c;
      const float* xn = x + n * ihw * s.in_c;
      if (s.pointwise()) {
        gemm(ohw, MatrixRef{xn + g * icg, s.in_c}, w.b_[g], c, s.out_c, e, run);
      } else {
        PanelSource a, b;
        const int mr = w.b_[g].tile().mr;
        a.pack = [&](int64_t i0, int64_t cnt, int64_t k0, int64_t kc, float* dst) {
          pack_im2col_nhwc(xn, s, g, mr, i0, cnt, k0, kc, dst);
        };
        b.packed = &w.b_[g];
        gemm_panels(w.b_[g].tile(), ohw, ocg, K, a, b, c, s.out_c, e, run);
      }
    }
  };
  // One fork-join for many small GEMMs (grouped convs, batches): see for_each_gemm.
  GemmRun shared = run_in;  // for_each_gemm reuses scratch per thread itself
  shared.isa = isa;
  for_each_gemm(s.batch * G, 2.0 * static_cast<double>(ocg * ohw * K), shared,
                [&](int64_t t, const GemmRun& r) { one(t / G, t % G, r); });
}

}  // namespace fusor
