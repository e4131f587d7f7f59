// Winograd convolution (kernels/winograd, fusor.WinogradConv) against a plain double-precision direct
// convolution: F(2,3) and F(4,3), every runnable ISA, odd channel counts and spatial tails,
// asymmetric and large pads, batch > 1, several strips, output-channel splits over threads,
// every epilogue part; the blocked layout (NCHWc, block 16: padding lanes never read, written as
// act(0 + Z's lane)); the op's reference and fast kernels; bad input.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/util/error.h"
#include "kernels/nchwc/reorder.h"
#include "kernels/thread_pool.h"
#include "kernels/winograd/winograd.h"
#include "tests/kernels/fused_test_util.h"
#include "tests/kernels/gemm_test_util.h"

namespace fusor {
namespace {

using testing_gemm::all_activations;
using testing_gemm::all_close;
using testing_gemm::random_vec;
using testing_gemm::runnable_isas;

struct Case {
  const char* name;
  int64_t n, c, h, w, k, pt, pl, pb, pr;
};

const Case kCases[] = {
    {"basic", 1, 16, 8, 8, 32, 1, 1, 1, 1},
    {"tiny_odd", 2, 5, 9, 7, 3, 0, 0, 0, 0},
    {"asym_tails", 1, 37, 13, 11, 45, 1, 2, 0, 1},
    {"resnet_like", 1, 64, 14, 14, 64, 1, 1, 1, 1},
    {"small_image_wide_k", 1, 20, 3, 3, 70, 1, 1, 1, 1},
    {"big_pads", 1, 8, 30, 5, 17, 2, 0, 2, 0},
    {"batch3_wide", 3, 33, 6, 40, 40, 1, 1, 1, 1},
};

WinogradShape shape_of(const Case& c) {
  WinogradShape s;
  s.batch = c.n, s.in_c = c.c, s.in_h = c.h, s.in_w = c.w, s.out_c = c.k;
  s.out_h = c.h + c.pt + c.pb - 2, s.out_w = c.w + c.pl + c.pr - 2;
  s.pad_t = c.pt, s.pad_l = c.pl;
  return s;
}

// Direct 3x3 convolution in double; mag[i] = 1 + sum |x w| (the error scale of element i).
void direct(const WinogradShape& s, const std::vector<float>& x, const std::vector<float>& w, const Epilogue& ep,
            std::vector<double>* y, std::vector<double>* mag) {
  y->assign(s.batch * s.out_c * s.out_h * s.out_w, 0.0);
  mag->assign(y->size(), 1.0);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t k = 0; k < s.out_c; ++k)
      for (int64_t oy = 0; oy < s.out_h; ++oy)
        for (int64_t ox = 0; ox < s.out_w; ++ox) {
          double acc = 0, m = 0;
          for (int64_t c = 0; c < s.in_c; ++c)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 3; ++j) {
                const int64_t iy = oy - s.pad_t + i, ix = ox - s.pad_l + j;
                if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
                const double p = double(x[((n * s.in_c + c) * s.in_h + iy) * s.in_w + ix]) * w[((k * s.in_c + c) * 3 + i) * 3 + j];
                acc += p;
                m += std::fabs(p);
              }
          const int64_t idx = ((n * s.out_c + k) * s.out_h + oy) * s.out_w + ox;
          double v = ep.scale * acc;
          if (ep.bias) v += ep.bias[k];
          if (ep.residual) v += ep.residual[idx];
          (*y)[idx] = apply_activation(ep.act, static_cast<float>(v));
          (*mag)[idx] = 1.0 + m;
        }
}

// Error bound relative to sum |x w|: F(4,3)'s transforms grow values by up to ~10x in fp32.
double tolerance(int m) { return m == 2 ? 2e-6 : 1e-5; }

std::vector<float> run(const Case& c, int m, Isa isa, ThreadPool* pool, const Epilogue& ep_in, uint32_t seed,
                       bool check = true) {
  const WinogradShape s = shape_of(c);
  const auto x = random_vec(s.batch * s.in_c * s.in_h * s.in_w, seed);
  const auto w = random_vec(s.out_c * s.in_c * 9, seed + 1);
  const int64_t ysize = s.batch * s.out_c * s.out_h * s.out_w;
  const auto res = random_vec(ysize, seed + 2);
  Epilogue ep = ep_in;
  if (ep_in.residual) ep.residual = res.data();  // the caller only marks that one is wanted
  const auto u = winograd_transform_filter(w.data(), s.out_c, s.in_c, m);
  WinogradWeights pw(u.data(), m, s.in_c, s.out_c, isa);
  EXPECT_EQ(pw.isa(), isa);
  GemmRun r;
  r.pool = pool;
  std::vector<float> y(ysize, -777.0f);
  winograd_conv2d(pw, s, x.data(), y.data(), ep, r);
  if (check) {
    std::vector<double> want, mag;
    direct(s, x, w, ep, &want, &mag);
    EXPECT_TRUE(all_close(y.data(), want, tolerance(m), 2e-6, &mag))
        << c.name << " F(" << m << ",3) " << isa_name(isa) << (pool ? " 2 threads" : "") << " act "
        << activation_name(ep.act.kind) << (ep.bias ? " bias" : "") << (ep.residual ? " residual" : "");
  }
  return y;
}

// Sets FUSOR_WINOGRAD_TILES for one scope (small strips: several per image).
struct TilesOverride {
  explicit TilesOverride(const char* v) { setenv("FUSOR_WINOGRAD_TILES", v, 1); }
  ~TilesOverride() { unsetenv("FUSOR_WINOGRAD_TILES"); }
};

TEST(Winograd, EveryShapeTileAndIsa) {
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (int m : {2, 4})
      for (const Case& c : kCases) {
        run(c, m, isa, nullptr, {}, 5);
        run(c, m, isa, &pool, {}, 6);
      }
}

TEST(Winograd, SeveralStripsPerImage) {
  ThreadPool pool(2);
  TilesOverride small("1");  // one tile row per strip
  for (Isa isa : runnable_isas())
    for (int m : {2, 4})
      for (const char* name : {"asym_tails", "big_pads", "batch3_wide"})
        for (const Case& c : kCases)
          if (std::string(c.name) == name) {
            run(c, m, isa, nullptr, {}, 7);
            run(c, m, isa, &pool, {}, 8);
          }
}

TEST(Winograd, EveryEpilogue) {
  ThreadPool pool(2);
  const Case& c = kCases[2];  // asym_tails: K = 45, not a multiple of any register block
  const auto bias = random_vec(c.k, 77);
  for (Isa isa : runnable_isas())
    for (int m : {2, 4})
      for (const ActivationSpec& act : all_activations()) {
        Epilogue ep;
        ep.act = act;
        ep.bias = bias.data();
        ep.bias_axis = BiasAxis::PerRow;
        run(c, m, isa, &pool, ep, 8);
        float marker = 0;
        ep.residual = &marker;  // replaced by a random Y-shaped tensor in run()
        ep.scale = 0.75f;
        run(c, m, isa, nullptr, ep, 9);
      }
}

// The blocked layout: X's padding lanes hold large finite values (never reach a real channel), Y is
// checked unblocked against the direct conv, and its padding lanes must be act(0 + Z's lane).
void run_blocked(const Case& c, int m, Isa isa, ThreadPool* pool, const ActivationSpec& act, bool bias_res,
                 uint32_t seed) {
  WinogradShape s = shape_of(c);
  s.block = 16;
  const NchwcShape xs{s.batch, s.in_c, s.in_h, s.in_w, 16}, ys{s.batch, s.out_c, s.out_h, s.out_w, 16};
  const auto x = random_vec(s.batch * s.in_c * s.in_h * s.in_w, seed);
  const auto w = random_vec(s.out_c * s.in_c * 9, seed + 1);
  const auto res = random_vec(s.batch * s.out_c * s.out_h * s.out_w, seed + 2);
  const auto bias = random_vec(s.out_c, seed + 3);
  std::vector<float> xb(xs.numel(), 1000.0f), zb(ys.numel(), 0.0f);
  reorder_to_nchwc(x.data(), xs, xb.data());
  reorder_to_nchwc(res.data(), ys, zb.data());
  for (int64_t i = 0; i < xs.numel(); ++i)  // padding lanes: finite garbage
    if ((i % 16) + (i / (xs.h * xs.w * 16)) % xs.cb() * 16 >= s.in_c) xb[i] = 1000.0f + static_cast<float>(i % 7);
  for (int64_t i = 0; i < ys.numel(); ++i)
    if ((i % 16) + (i / (ys.h * ys.w * 16)) % ys.cb() * 16 >= s.out_c) zb[i] = -0.5f + static_cast<float>(i % 3);
  Epilogue ep;
  ep.act = act;
  if (bias_res) {
    ep.bias = bias.data();
    ep.bias_axis = BiasAxis::PerRow;
    ep.residual = zb.data();
  }
  const auto u = winograd_transform_filter(w.data(), s.out_c, s.in_c, m);
  WinogradWeights pw(u.data(), m, s.in_c, s.out_c, isa);
  GemmRun r;
  r.pool = pool;
  std::vector<float> yb(ys.numel(), -777.0f), y(res.size());
  winograd_conv2d(pw, s, xb.data(), yb.data(), ep, r);
  reorder_from_nchwc(yb.data(), ys, y.data());
  Epilogue ep_plain = ep;
  if (bias_res) ep_plain.residual = res.data();
  std::vector<double> want, mag;
  direct(s, x, w, ep_plain, &want, &mag);
  const std::string what = std::string(c.name) + " blocked F(" + std::to_string(m) + ",3) " + isa_name(isa) +
                           (pool ? " 2 threads" : "") + " act " + activation_name(act.kind) + (bias_res ? " bias+z" : "");
  EXPECT_TRUE(all_close(y.data(), want, tolerance(m), 2e-6, &mag)) << what;
  int bad = 0;
  for (int64_t i = 0; i < ys.numel(); ++i)
    if ((i % 16) + (i / (ys.h * ys.w * 16)) % ys.cb() * 16 >= s.out_c) {
      const float expect = apply_activation(act, bias_res ? zb[i] : 0.0f);
      if (std::fabs(yb[i] - expect) > 1e-6f * (1 + std::fabs(expect))) ++bad;
    }
  EXPECT_EQ(bad, 0) << what << ": padding lanes";
}

TEST(Winograd, BlockedLayoutEveryShapeTileAndIsa) {
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (int m : {2, 4})
      for (const Case& c : kCases) {
        run_blocked(c, m, isa, nullptr, ActivationSpec::relu(), true, 21);
        run_blocked(c, m, isa, &pool, {}, false, 22);
      }
}

TEST(Winograd, BlockedLayoutEveryEpilogueAndStrips) {
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (const ActivationSpec& act : all_activations())
      for (const char* name : {"asym_tails", "small_image_wide_k"})
        for (const Case& c : kCases)
          if (std::string(c.name) == name) {
            run_blocked(c, 4, isa, &pool, act, true, 23);
            TilesOverride small("1");
            run_blocked(c, 4, isa, nullptr, act, true, 24);
            run_blocked(c, 2, isa, &pool, act, false, 25);
          }
}

TEST(Winograd, ThreadsGiveTheSameBits) {
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (const Case& c : kCases) {
      const auto one = run(c, 4, isa, nullptr, {}, 11, false);
      const auto two = run(c, 4, isa, &pool, {}, 11, false);
      EXPECT_EQ(one, two) << c.name << " " << isa_name(isa);
    }
}

TEST(Winograd, ShapeMismatchIsAnError) {
  const auto u = random_vec(36 * 4 * 8, 1);
  WinogradWeights pw(u.data(), 4, 4, 8);
  WinogradShape s = shape_of({"x", 1, 4, 6, 6, 8, 1, 1, 1, 1});
  s.out_c = 16;
  std::vector<float> x(144), y(16 * 36);
  EXPECT_THROW(winograd_conv2d(pw, s, x.data(), y.data()), Error);
  EXPECT_THROW(WinogradWeights(u.data(), 3, 4, 8), Error);
}

// fusor.WinogradConv: both kernels against ONNX's Conv (+ Add + activation) on the original filters.
using test::fused;
using test::onnx_op;
using test::rnd;

Tensor transformed(const Tensor& w, int m) {
  const auto u = winograd_transform_filter(w.data<float>(), w.dim(0), w.dim(1), m);
  return Tensor::from_vector<float>({m + 2, m + 2, w.dim(1), w.dim(0)}, u);
}

std::vector<Attribute> op_attrs(int m, std::vector<int64_t> pads, const std::string& act = "") {
  return {Attribute::make_int("tile", m), Attribute::make_ints("pads", std::move(pads)),
          Attribute::make_ints("strides", {1, 1}), Attribute::make_ints("kernel_shape", {3, 3}),
          Attribute::make_string("activation", act)};
}

TEST(WinogradConvOp, ReferenceAndFastEqualConv) {
  const Tensor x = rnd({2, 19, 9, 10}, 1), w = rnd({23, 19, 3, 3}, 2), b = rnd({23}, 3);
  const std::vector<int64_t> pads = {1, 0, 2, 1};
  const Tensor conv = onnx_op("Conv", {x, w, b}, {Attribute::make_ints("pads", pads)});
  const Tensor z = rnd(conv.shape(), 4);
  const Tensor want = onnx_op("Relu", {onnx_op("Add", {conv, z})});
  for (int m : {2, 4})
    for (const char* impl : {"reference", "fast"})
      for (bool constant : {false, true}) {
        const Tensor got = fused("WinogradConv", {x, transformed(w, m), b, z}, op_attrs(m, pads, "Relu"), impl,
                                 {false, constant});
        ASSERT_EQ(got.shape(), want.shape()) << impl;
        const float* g = got.data<float>();
        const float* e = want.data<float>();
        for (int64_t i = 0; i < want.numel(); ++i)
          ASSERT_NEAR(g[i], e[i], 2e-5 * (1 + std::fabs(e[i]))) << impl << " F(" << m << ",3) at " << i;
      }
}

// Blocked X (rank 5): both kernels against ONNX's Conv + Add + Relu, unblocked; padding lanes of Y
// are Relu(Z's lane).
TEST(WinogradConvOp, BlockedEqualsConv) {
  const Tensor x = rnd({2, 19, 9, 10}, 1), w = rnd({23, 19, 3, 3}, 2), b = rnd({23}, 3);
  const std::vector<int64_t> pads = {1, 0, 2, 1};
  const Tensor conv = onnx_op("Conv", {x, w, b}, {Attribute::make_ints("pads", pads)});
  const Tensor z = rnd(conv.shape(), 4);
  const Tensor want = onnx_op("Relu", {onnx_op("Add", {conv, z})});
  const NchwcShape xs{2, 19, 9, 10, 16}, ys{2, 23, conv.dim(2), conv.dim(3), 16};
  std::vector<float> xb(xs.numel()), zb(ys.numel());
  reorder_to_nchwc(x.data<float>(), xs, xb.data());
  reorder_to_nchwc(z.data<float>(), ys, zb.data());
  for (int64_t i = 0; i < ys.numel(); ++i)
    if ((i % 16) + (i / (ys.h * ys.w * 16)) % 2 * 16 >= 23) zb[i] = static_cast<float>(i % 5) - 2.0f;
  const Tensor xt = Tensor::from_vector<float>({2, 2, 9, 10, 16}, xb);
  const Tensor zt = Tensor::from_vector<float>({2, 2, ys.h, ys.w, 16}, zb);
  for (int m : {2, 4})
    for (const char* impl : {"reference", "fast"})
      for (bool constant : {false, true}) {
        const Tensor got = fused("WinogradConv", {xt, transformed(w, m), b, zt}, op_attrs(m, pads, "Relu"), impl,
                                 {false, constant});
        ASSERT_EQ(got.shape(), (Shape{2, 2, ys.h, ys.w, 16})) << impl;
        std::vector<float> plain(want.numel());
        reorder_from_nchwc(got.data<float>(), ys, plain.data());
        const float* e = want.data<float>();
        for (int64_t i = 0; i < want.numel(); ++i)
          ASSERT_NEAR(plain[i], e[i], 2e-5 * (1 + std::fabs(e[i]))) << impl << " F(" << m << ",3) at " << i;
        const float* g = got.data<float>();
        for (int64_t i = 0; i < ys.numel(); ++i) {
          if ((i % 16) + (i / (ys.h * ys.w * 16)) % 2 * 16 >= 23) {
            ASSERT_EQ(g[i], std::max(zb[i], 0.0f)) << impl << " padding lane " << i;
          }
        }
      }
  // A blocked X whose blocks do not match U's channels names the node.
  for (const char* impl : {"reference", "fast"})
    EXPECT_THROW(fused("WinogradConv", {rnd({1, 3, 6, 6, 16}, 5), transformed(w, 4)}, op_attrs(4, {1, 1, 1, 1}), impl),
                 Error);
}

TEST(WinogradConvOp, BadInputNamesTheNode) {
  const Tensor x = rnd({1, 4, 6, 6}, 1), w = rnd({8, 4, 3, 3}, 2);
  const Tensor u4 = transformed(w, 4);
  for (const char* impl : {"reference", "fast"}) {
    // U for tile 2 given with tile 4
    EXPECT_THROW(fused("WinogradConv", {x, transformed(w, 2), Tensor(), Tensor()}, op_attrs(4, {1, 1, 1, 1}), impl), Error);
    // channels of X and U differ
    EXPECT_THROW(fused("WinogradConv", {rnd({1, 5, 6, 6}, 3), u4}, op_attrs(4, {1, 1, 1, 1}), impl), Error);
    // a stride the op cannot have
    auto strided = op_attrs(4, {1, 1, 1, 1});
    strided[2] = Attribute::make_ints("strides", {2, 2});
    EXPECT_THROW(fused("WinogradConv", {x, u4}, strided, impl), Error);
    // a window larger than the padded input
    EXPECT_THROW(fused("WinogradConv", {rnd({1, 4, 1, 1}, 3), u4}, op_attrs(4, {0, 0, 0, 0}), impl), Error);
    try {
      fused("WinogradConv", {x, u4, rnd({7}, 4)}, op_attrs(4, {1, 1, 1, 1}), impl);
      ADD_FAILURE() << "a bias of the wrong length was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      EXPECT_NE(std::string(e.what()).find("WinogradConv"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace fusor
