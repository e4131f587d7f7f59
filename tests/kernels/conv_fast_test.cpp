// The fast convolution paths (kernels/conv/conv.h) against a plain double-precision loop:
// pointwise, implicit im2col, depthwise; NCHW and NHWC; every forced ISA; groups, strides,
// dilations, asymmetric pads, batch > 1, odd channels, tails; every epilogue part.
#include <gtest/gtest.h>

#include "core/util/error.h"
#include "kernels/conv/conv.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/gemm_test_util.h"

namespace fusor {
namespace {

using testing_gemm::all_activations;
using testing_gemm::all_close;
using testing_gemm::random_vec;
using testing_gemm::runnable_isas;

Conv2dShape make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                 int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, int64_t group) {
  Conv2dShape s;
  s.batch = n, s.in_c = c, s.in_h = h, s.in_w = w, s.out_c = oc, s.k_h = kh, s.k_w = kw;
  s.stride_h = sh, s.stride_w = sw, s.dil_h = dh, s.dil_w = dw;
  s.pad_t = pt, s.pad_l = pl, s.pad_b = pb, s.pad_r = pr, s.group = group;
  s.out_h = (h + pt + pb - ((kh - 1) * dh + 1)) / sh + 1;
  s.out_w = (w + pl + pr - ((kw - 1) * dw + 1)) / sw + 1;
  return s;
}

// NCHW reference; returns y and, per element, 1 + sum |x w| (the error scale).
void reference(const Conv2dShape& s, const std::vector<float>& x, const std::vector<float>& w, const Epilogue& ep,
               std::vector<double>* y, std::vector<double>* mag) {
  const int64_t ocg = s.out_c / s.group, icg = s.in_c / s.group;
  y->assign(s.batch * s.out_c * s.out_h * s.out_w, 0.0);
  mag->assign(y->size(), 1.0);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t oc = 0; oc < s.out_c; ++oc)
      for (int64_t oy = 0; oy < s.out_h; ++oy)
        for (int64_t ox = 0; ox < s.out_w; ++ox) {
          const int64_t g = oc / ocg;
          double acc = 0, m = 0;
          for (int64_t c = 0; c < icg; ++c)
            for (int64_t ky = 0; ky < s.k_h; ++ky)
              for (int64_t kx = 0; kx < s.k_w; ++kx) {
                const int64_t iy = oy * s.stride_h - s.pad_t + ky * s.dil_h, ix = ox * s.stride_w - s.pad_l + kx * s.dil_w;
                if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
                const double p = double(x[((n * s.in_c + g * icg + c) * s.in_h + iy) * s.in_w + ix]) *
                                 w[((oc * icg + c) * s.k_h + ky) * s.k_w + kx];
                acc += p;
                m += std::fabs(p);
              }
          const int64_t idx = ((n * s.out_c + oc) * s.out_h + oy) * s.out_w + ox;
          double v = ep.scale * acc;
          if (ep.bias) v += ep.bias[oc];
          if (ep.residual) v += ep.residual[idx];
          (*y)[idx] = apply_activation(ep.act, static_cast<float>(v));
          (*mag)[idx] = 1.0 + m;
        }
}

// (N, C, H, W) <-> (N, H, W, C)
std::vector<float> to_nhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t hw) {
  std::vector<float> o(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) o[(b * hw + p) * c + ch] = v[(b * c + ch) * hw + p];
  return o;
}
std::vector<float> from_nhwc(const std::vector<float>& v, int64_t n, int64_t c, int64_t hw) {
  std::vector<float> o(v.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < hw; ++p) o[(b * c + ch) * hw + p] = v[(b * hw + p) * c + ch];
  return o;
}

struct Named {
  const char* name;
  Conv2dShape s;
};

std::vector<Named> cases() {
  return {
      {"pointwise", make(2, 5, 7, 9, 11, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)},
      {"pointwise_wide", make(1, 33, 10, 30, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1)},
      {"pointwise_stride2", make(1, 6, 9, 11, 7, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1)},
      {"3x3_pad1", make(1, 3, 10, 13, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
      {"3x3_s2_asym", make(2, 4, 11, 8, 9, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 1)},
      {"3x3_dil2", make(1, 4, 15, 16, 6, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1)},
      {"5x2_mixed", make(1, 3, 12, 9, 5, 5, 2, 2, 1, 1, 3, 2, 0, 1, 3, 1)},
      {"groups2", make(2, 6, 9, 8, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2)},
      {"groups3_odd", make(1, 9, 7, 7, 15, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 3)},
      {"big_k_tail", make(1, 70, 9, 10, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1)},
      {"conv1d", make(2, 5, 1, 40, 8, 1, 5, 1, 2, 1, 1, 0, 2, 0, 1, 1)},
      {"dw3x3", make(1, 16, 12, 14, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16)},
      {"dw3x3_s2_asym", make(2, 7, 13, 12, 7, 3, 3, 2, 2, 1, 1, 0, 1, 1, 0, 7)},
      {"dw5x5_s2", make(1, 10, 17, 19, 10, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 10)},
      {"dw_dil2", make(1, 5, 11, 23, 5, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 5)},
      {"dw2x4_bigpad", make(1, 3, 6, 7, 3, 2, 4, 1, 3, 1, 1, 3, 3, 2, 4, 3)},
      {"dw_7x7_narrow", make(1, 4, 9, 3, 4, 7, 7, 1, 1, 1, 1, 3, 3, 3, 3, 4)},
      {"dw_3x3_s2_dil2", make(1, 3, 14, 15, 3, 3, 3, 2, 2, 2, 2, 2, 1, 2, 3, 3)},
      {"dw_4x3_s2_even_w", make(2, 5, 10, 16, 5, 4, 3, 2, 2, 1, 1, 1, 1, 2, 1, 5)},
      {"dw_3x3_s3", make(1, 4, 13, 14, 4, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 4)},
      {"dw5x5_s1", make(1, 3, 9, 10, 3, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 3)},
      {"dw_17x2_big", make(1, 2, 20, 9, 2, 17, 2, 1, 2, 1, 1, 8, 0, 8, 1, 2)},
  };
}

void run_case(const Named& c, Isa isa, ConvLayout layout, ThreadPool* pool, const Epilogue& ep_in, uint32_t seed) {
  const Conv2dShape& s = c.s;
  const int64_t icg = s.in_c / s.group;
  const auto x = random_vec(s.batch * s.in_c * s.in_h * s.in_w, seed);
  const auto w = random_vec(s.out_c * icg * s.k_h * s.k_w, seed + 1);
  const int64_t ohw = s.out_h * s.out_w, ysize = s.batch * s.out_c * ohw;
  const auto res = random_vec(ysize, seed + 2);
  Epilogue ep = ep_in;
  if (ep_in.residual) ep.residual = res.data();  // the caller only marks that one is wanted
  std::vector<double> want, mag;
  reference(s, x, w, ep, &want, &mag);

  PackedConvWeights pw(w.data(), s.out_c, icg, s.k_h, s.k_w, s.group, layout, isa);
  ASSERT_EQ(pw.isa(), isa);
  GemmRun run;
  run.pool = pool;
  std::vector<float> y(ysize, -777.0f);
  if (layout == ConvLayout::NCHW) {
    conv2d(pw, s, x.data(), y.data(), ep, run);
  } else {
    const auto xh = to_nhwc(x, s.batch, s.in_c, s.in_h * s.in_w);
    const auto rh = to_nhwc(res, s.batch, s.out_c, ohw);
    Epilogue eh = ep;
    if (ep.residual) eh.residual = rh.data();
    std::vector<float> yh(ysize, -777.0f);
    conv2d(pw, s, xh.data(), yh.data(), eh, run);
    y = from_nhwc(yh, s.batch, s.out_c, ohw);
  }
  EXPECT_TRUE(all_close(y.data(), want, 2e-6, 2e-6, &mag))
      << c.name << " " << isa_name(isa) << (layout == ConvLayout::NCHW ? " NCHW" : " NHWC") << " act "
      << activation_name(ep.act.kind) << (ep.bias ? " bias" : "") << (ep.residual ? " residual" : "");
}

TEST(ConvFast, EveryPathLayoutAndIsa) {
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (const Named& c : cases())
      for (ConvLayout layout : {ConvLayout::NCHW, ConvLayout::NHWC}) {
        run_case(c, isa, layout, nullptr, {}, 5);
        run_case(c, isa, layout, &pool, {}, 6);
      }
}

TEST(ConvFast, EveryEpilogueOnEachPath) {
  ThreadPool pool(2);
  const std::vector<Named> all = cases();
  for (Isa isa : runnable_isas())
    for (const char* name : {"pointwise", "3x3_s2_asym", "groups3_odd", "dw3x3_s2_asym"}) {
      const Named* c = nullptr;
      for (const Named& n : all)
        if (std::string(n.name) == name) c = &n;
      ASSERT_TRUE(c);
      const auto bias = random_vec(c->s.out_c, 77);
      float marker = 0;
      for (const ActivationSpec& act : all_activations())
        for (ConvLayout layout : {ConvLayout::NCHW, ConvLayout::NHWC}) {
          Epilogue ep;
          ep.act = act;
          ep.bias = bias.data();
          run_case(*c, isa, layout, &pool, ep, 8);
          ep.residual = &marker;  // replaced by a random Y-shaped tensor in run_case
          ep.scale = 0.75f;
          run_case(*c, isa, layout, nullptr, ep, 9);
        }
    }
}

TEST(ConvFast, ShapeMismatchIsAnError) {
  const Conv2dShape s = make(1, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1);
  const auto w = random_vec(4 * 4 * 9, 1);
  PackedConvWeights pw(w.data(), 4, 4, 3, 3, 1, ConvLayout::NCHW);
  Conv2dShape other = s;
  other.out_c = 8;
  std::vector<float> x(100), y(400);
  EXPECT_THROW(conv2d(pw, other, x.data(), y.data()), Error);
}

}  // namespace
}  // namespace fusor
