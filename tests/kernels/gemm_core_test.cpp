// The GEMM core against plain double-precision loops: every forced ISA, transposes, strides,
// tails of every block size, prepacked operands, threads, and every epilogue.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>

#include "core/util/error.h"
#include "kernels/gemm/gemm.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/gemm_test_util.h"
#include "tests/kernels/isa_env.h"

namespace fusor {
namespace {

using testing_gemm::all_activations;
using testing_gemm::all_close;
using testing_gemm::random_vec;
using testing_gemm::runnable_isas;

struct Case {
  int64_t M, N, K;
  bool ta, tb;
};

// A (M x K) stored as given by ta with padding in the leading dimension.
struct Operand {
  std::vector<float> data;
  MatrixRef ref;
};

Operand make_operand(int64_t rows, int64_t cols, bool trans, uint32_t seed) {
  // Stored matrix is rows x cols (or cols x rows when trans) with ld = stored cols + 3.
  const int64_t srows = trans ? cols : rows, scols = trans ? rows : cols, ld = scols + 3;
  Operand o;
  o.data = random_vec(static_cast<size_t>(srows * ld + 1), seed);
  o.ref = MatrixRef{o.data.data(), ld, trans};
  return o;
}

struct Expected {
  std::vector<double> value, magnitude;  // value and sum |a||b| per element (error scale)
};

Expected reference(const Case& c, MatrixRef A, MatrixRef B, const Epilogue& ep) {
  Expected e;
  e.value.resize(c.M * c.N);
  e.magnitude.resize(c.M * c.N);
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      double s = 0, mag = 0;
      for (int64_t k = 0; k < c.K; ++k) {
        s += double(A.at(i, k)) * B.at(k, j);
        mag += std::fabs(double(A.at(i, k)) * B.at(k, j));
      }
      double y = ep.scale * s;
      if (ep.has_bias()) y += ep.bias[ep.bias_axis == BiasAxis::PerRow ? i : j];
      if (ep.residual) y += ep.residual[i * ep.residual_ld + j];
      e.value[i * c.N + j] = apply_activation(ep.act, static_cast<float>(y));
      e.magnitude[i * c.N + j] = 1.0 + mag * std::fabs(ep.scale);
    }
  return e;
}

const Case kCases[] = {
    {1, 1, 1, false, false},     {1, 1000, 64, false, false}, {3, 5, 7, false, false},
    {14, 32, 256, false, false}, {15, 33, 257, false, true},  {29, 65, 300, true, false},
    {64, 70, 1, true, true},     {7, 300, 600, false, false}, {300, 17, 513, false, true},
    {131, 530, 40, false, false}, {2, 3, 1100, true, true},   {64, 49, 576, false, false},
};

std::string describe(const Case& c, Isa isa) {
  return std::string(isa_name(isa)) + " M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) + " K=" +
         std::to_string(c.K) + (c.ta ? " A^T" : "") + (c.tb ? " B^T" : "");
}

void check_case(const Case& c, Isa isa, ThreadPool* pool, int form, const Epilogue& ep_in, uint32_t seed) {
  Operand A = make_operand(c.M, c.K, c.ta, seed), B = make_operand(c.K, c.N, c.tb, seed + 1);
  const int64_t ldc = c.N + 5;
  std::vector<float> C(c.M * ldc, 12345.0f);
  GemmRun run;
  run.pool = pool;
  run.isa = isa;
  Epilogue ep = ep_in;
  switch (form) {
    case 0: gemm(c.M, c.N, c.K, A.ref, B.ref, C.data(), ldc, ep, run); break;
    case 1: gemm(c.M, A.ref, PackedB(B.ref, c.K, c.N, isa), C.data(), ldc, ep, run); break;
    default: gemm(PackedA(A.ref, c.M, c.K, isa), c.N, B.ref, C.data(), ldc, ep, run); break;
  }
  Expected want = reference(c, A.ref, B.ref, ep);
  std::vector<float> got(c.M * c.N);
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) got[i * c.N + j] = C[i * ldc + j];
  EXPECT_TRUE(all_close(got.data(), want.value, 2e-6, 2e-6, &want.magnitude))
      << describe(c, isa) << " form " << form << " act " << activation_name(ep.act.kind);
  // Padding columns of C are never written.
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = c.N; j < ldc && i * ldc + j < static_cast<int64_t>(C.size()); ++j)
      ASSERT_EQ(C[i * ldc + j], 12345.0f) << describe(c, isa) << " wrote past N";
}

TEST(GemmCore, PlainProductEveryIsaAndForm) {
  ThreadPool pool(3);
  for (Isa isa : runnable_isas())
    for (const Case& c : kCases)
      for (int form = 0; form < 3; ++form) {
        check_case(c, isa, nullptr, form, {}, 7);
        check_case(c, isa, &pool, form, {}, 9);
      }
}

TEST(GemmCore, EveryEpilogueEveryIsa) {
  ThreadPool pool(2);
  const Case shapes[] = {{15, 33, 257, false, false}, {1, 70, 9, false, true}, {40, 20, 300, true, false}};
  for (Isa isa : runnable_isas())
    for (const Case& c : shapes) {
      const std::vector<float> rowb = random_vec(c.M, 3), colb = random_vec(c.N, 4);
      const int64_t rld = c.N + 2;
      const std::vector<float> res = random_vec(c.M * rld, 5);
      for (const ActivationSpec& act : all_activations())
        for (int variant = 0; variant < 4; ++variant) {
          Epilogue ep;
          ep.act = act;
          if (variant == 1) ep.bias = rowb.data(), ep.bias_axis = BiasAxis::PerRow;
          if (variant == 2) ep.bias = colb.data(), ep.bias_axis = BiasAxis::PerColumn, ep.scale = 0.5f;
          if (variant == 3) {
            ep.bias = colb.data(), ep.bias_axis = BiasAxis::PerColumn;
            ep.residual = res.data(), ep.residual_ld = rld;
          }
          check_case(c, isa, variant % 2 ? &pool : nullptr, variant % 3, ep, 11 + variant);
        }
    }
}

// Few column tiles: the kernel reads A's rows in place instead of packing them (gemm.cpp); the
// sums are the packed path's, in the same order, so the results are the same bits, serial and
// split over 2 threads (rows 4 KiB apart stay packed: also the same bits).
TEST(GemmCore, DirectAEqualsPackedABitForBit) {
  ThreadPool pool(2);
  struct Shape {
    int64_t M, N, K, lda;
  };
  const Shape shapes[] = {{3136, 96, 384, 384}, {300, 33, 513, 520}, {45, 256, 400, 400}, {13, 7, 700, 712},
                          {70, 64, 1024, 1024}};
  for (Isa isa : runnable_isas())
    for (const Shape& s : shapes) {
      const std::vector<float> a = random_vec(s.M * s.lda, 21), b = random_vec(s.K * s.N, 22), bias = random_vec(s.N, 23);
      const MatrixRef A{a.data(), s.lda, false};
      const PackedB pb(MatrixRef{b.data(), s.N}, s.K, s.N, isa);
      Epilogue ep;
      ep.bias = bias.data();
      ep.bias_axis = BiasAxis::PerColumn;
      ep.act = ActivationSpec::of(Activation::Gelu);
      GemmRun serial;
      serial.isa = isa;
      std::vector<float> packed(s.M * s.N), direct(s.M * s.N), split(s.M * s.N);
      gemm(PackedA(A, s.M, s.K, isa), s.N, MatrixRef{b.data(), s.N}, packed.data(), s.N, ep, serial);
      gemm(s.M, A, pb, direct.data(), s.N, ep, serial);
      GemmRun two = serial;
      two.pool = &pool;
      gemm(s.M, A, pb, split.data(), s.N, ep, two);
      for (int64_t i = 0; i < s.M * s.N; ++i) {
        ASSERT_EQ(packed[i], direct[i]) << isa_name(isa) << " M=" << s.M << " N=" << s.N << " at " << i;
        ASSERT_EQ(packed[i], split[i]) << isa_name(isa) << " M=" << s.M << " N=" << s.N << " at " << i << " (2 threads)";
      }
    }
}

// A of a few row blocks under several threads is packed once, whole, and shared (gemm.cpp): the
// threads' results equal one thread's bit for bit (same k blocks, same order of sums), and the
// product is right (transposed A, a row count that is not a whole number of panels, residual).
TEST(GemmCore, ThreadsSharingOnePackedAEqualOneThread) {
  struct Shape {
    int64_t M, N, K;
    bool ta;
  };
  const Shape shapes[] = {{128, 1536, 384, false}, {128, 384, 384, true}, {197, 576, 192, false},
                          {131, 530, 40, true},    {300, 200, 100, false}};
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (Isa isa : runnable_isas())
      for (const Shape& s : shapes) {
        Operand A = make_operand(s.M, s.K, s.ta, 31), B = make_operand(s.K, s.N, false, 32);
        const std::vector<float> bias = random_vec(s.N, 33), res = random_vec(s.M * s.N, 34);
        const PackedB pb(B.ref, s.K, s.N, isa);
        Epilogue ep;
        ep.bias = bias.data();
        ep.bias_axis = BiasAxis::PerColumn;
        ep.residual = res.data();
        ep.residual_ld = s.N;
        ep.act = ActivationSpec::of(Activation::Gelu);
        GemmRun one;
        one.isa = isa;
        GemmRun many = one;
        many.pool = &pool;
        const std::string what = describe(Case{s.M, s.N, s.K, s.ta, false}, isa) + " threads " + std::to_string(threads);
        std::vector<float> c1(s.M * s.N), cn(s.M * s.N, 7.0f), u1(s.M * s.N), un(s.M * s.N, 7.0f);
        gemm(s.M, A.ref, pb, c1.data(), s.N, ep, one);
        gemm(s.M, A.ref, pb, cn.data(), s.N, ep, many);
        gemm(s.M, s.N, s.K, A.ref, B.ref, u1.data(), s.N, ep, one);
        gemm(s.M, s.N, s.K, A.ref, B.ref, un.data(), s.N, ep, many);
        for (int64_t i = 0; i < s.M * s.N; ++i) {
          ASSERT_EQ(c1[i], cn[i]) << what << " packed B at " << i;
          ASSERT_EQ(u1[i], un[i]) << what << " B packed in the call at " << i;
        }
        Expected want = reference(Case{s.M, s.N, s.K, s.ta, false}, A.ref, B.ref, ep);
        EXPECT_TRUE(all_close(cn.data(), want.value, 2e-6, 2e-6, &want.magnitude)) << what;
      }
  }
}

// A weights hint (the next node's weights, prefetched once the call's own blocks are in cache)
// changes no bit of the result, on one thread and two, for products of one and several row tasks.
TEST(GemmCore, WeightsHintChangesNoResult) {
  const std::vector<float> next = random_vec(size_t{1} << 18, 41);  // 1 MiB: more than a hint takes
  ThreadPool pool(2);
  for (Isa isa : runnable_isas())
    for (const Case& c : {Case{197, 576, 192, false, false}, Case{128, 1536, 384, false, false}, Case{1000, 64, 30, false, false}}) {
      Operand A = make_operand(c.M, c.K, false, 42), B = make_operand(c.K, c.N, false, 43);
      const PackedB pb(B.ref, c.K, c.N, isa);
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        GemmRun run;
        run.isa = isa;
        run.pool = p;
        std::vector<float> plain(c.M * c.N), hinted(c.M * c.N, 7.0f);
        gemm(c.M, A.ref, pb, plain.data(), c.N, {}, run);
        set_weights_hint({next.data(), next.size() * sizeof(float)});
        gemm(c.M, A.ref, pb, hinted.data(), c.N, {}, run);
        set_weights_hint({});
        const std::string what = describe(c, isa) + (p ? " 2 threads" : " 1 thread");
        for (int64_t i = 0; i < c.M * c.N; ++i) ASSERT_EQ(plain[i], hinted[i]) << what << " at " << i;
        Expected want = reference(c, A.ref, B.ref, {});
        EXPECT_TRUE(all_close(hinted.data(), want.value, 2e-6, 2e-6, &want.magnitude)) << what;
      }
    }
}

TEST(GemmCore, StandaloneEpilogueMatchesScalarDefinition) {
  // Inputs over the range where the approximations of exp/erf/tanh matter, both signs.
  const int64_t rows = 3, cols = 37, ld = 40;
  std::vector<float> x = random_vec(rows * ld, 21, -9.0f, 9.0f);
  x[0] = 0.0f, x[1] = 1e-4f, x[2] = -1e-4f, x[3] = 0.03f, x[4] = -80.0f, x[5] = 80.0f;
  const std::vector<float> bias = random_vec(rows, 22), res = random_vec(rows * ld, 23);
  for (Isa isa : runnable_isas())
    for (const ActivationSpec& act : all_activations()) {
      Epilogue ep;
      ep.act = act;
      ep.scale = 1.5f;
      ep.bias = bias.data(), ep.bias_axis = BiasAxis::PerRow;
      ep.residual = res.data(), ep.residual_ld = ld;
      std::vector<float> y = x;
      apply_epilogue(y.data(), ld, rows, cols, ep, isa);
      std::vector<double> want;
      std::vector<float> got;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          want.push_back(apply_epilogue(ep, x[i * ld + j], i, j));
          got.push_back(y[i * ld + j]);
        }
      // GELU's erf is a rational fit within 5e-7 (kernel_impl.h): 0.5 |x| 5e-7 <= 1.4e-6.
      const double atol = act.kind == Activation::Gelu ? 1.4e-6 : 1e-6;
      EXPECT_TRUE(all_close(got.data(), want, atol, 2e-6)) << isa_name(isa) << " " << activation_name(act.kind);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = cols; j < ld; ++j) EXPECT_EQ(y[i * ld + j], x[i * ld + j]) << "wrote past cols";
    }
}

// GELU's rational erf (kernel_impl.h) over a dense sweep of [-12, 12] and a few extremes: within
// its stated bound, 0.5 |x| 5e-7 + 2e-6 |gelu| of the exact value.
TEST(GemmCore, GeluWithinItsBound) {
  std::vector<float> x;
  for (int i = -240000; i <= 240000; ++i) x.push_back(static_cast<float>(i) * 5e-5f);
  for (float v : {1e30f, -1e30f, 3.4e38f, -3.4e38f, 1e-30f, -1e-30f}) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  for (Isa isa : runnable_isas()) {
    Epilogue ep;
    ep.act = ActivationSpec::of(Activation::Gelu);
    std::vector<float> y = x;
    apply_epilogue(y.data(), n, 1, n, ep, isa);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      const double v = x[i], want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
      const double tol = 0.5 * std::fabs(v) * 5e-7 + 2e-6 * std::fabs(want) + 1e-30;
      if (!(std::fabs(y[i] - want) <= tol) && !(std::isinf(want) && y[i] == want)) {
        ++bad;
        ADD_FAILURE() << isa_name(isa) << " gelu(" << v << ") = " << y[i] << ", exact " << want;
      }
    }
  }
}

// NaN in gives NaN out for every activation but the clamps (Relu and Clip keep their bounds): the
// exp under Sigmoid, SiLU, Tanh and GELU once clamped a NaN argument to one of its bounds and
// returned a finite number, and HardSigmoid's clamp returned 0.
TEST(GemmCore, EpilogueKeepsNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x(40, nan);
  for (Isa isa : runnable_isas())
    for (Activation k : {Activation::Sigmoid, Activation::SiLU, Activation::Tanh, Activation::Gelu,
                         Activation::GeluTanh, Activation::HardSwish, Activation::HardSigmoid, Activation::LeakyRelu}) {
      Epilogue ep;
      ep.act = ActivationSpec::of(k);
      std::vector<float> y = x;
      apply_epilogue(y.data(), 40, 1, 37, ep, isa);
      for (int j = 0; j < 37; ++j)
        EXPECT_TRUE(std::isnan(y[j])) << isa_name(isa) << " " << activation_name(k) << " lane " << j << " gave " << y[j];
    }
}

// for_each_gemm hands each GEMM a slot scratch; gemm() asks it for two blocks when M is over the
// row block (the whole B packed once, then the panel workspace). They must be distinct: a
// MatMul with a non-constant B (attention's products, a 2-D B made at run time) gave wrong
// numbers when both came from one block.
TEST(GemmCore, ForEachGemmGivesEachRequestItsOwnScratch) {
  const Case shapes[] = {{128, 384, 384, false, false}, {128, 128, 64, false, false}, {300, 17, 513, false, true}};
  ThreadPool pool(2);
  for (const Case& c : shapes) {
    for (bool with_arena : {false, true}) {
      for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const int count = 3;
        std::vector<Operand> as, bs;
        for (int i = 0; i < count; ++i) {
          as.push_back(make_operand(c.M, c.K, c.ta, 40 + 2 * i));
          bs.push_back(make_operand(c.K, c.N, c.tb, 41 + 2 * i));
        }
        std::vector<std::vector<float>> cs(count, std::vector<float>(c.M * c.N, 0.f));
        // A bump allocator standing for the executor's scratch arena.
        std::vector<std::unique_ptr<float[]>> arena;
        std::mutex mu;
        GemmRun run;
        run.pool = p;
        if (with_arena)
          run.scratch = [&](size_t bytes) -> void* {
            std::lock_guard<std::mutex> lock(mu);
            arena.emplace_back(new float[bytes / sizeof(float) + 16]);
            return arena.back().get();
          };
        for_each_gemm(count, 2.0 * c.M * c.N * c.K, run, [&](int64_t i, const GemmRun& r) {
          gemm(c.M, c.N, c.K, as[i].ref, bs[i].ref, cs[i].data(), c.N, {}, r);
        });
        for (int i = 0; i < count; ++i) {
          Expected want = reference(c, as[i].ref, bs[i].ref, {});
          EXPECT_TRUE(all_close(cs[i].data(), want.value, 2e-6, 2e-6, &want.magnitude))
              << "M=" << c.M << " N=" << c.N << " K=" << c.K << " gemm " << i << (with_arena ? " arena" : " heap")
              << (p ? " 2 threads" : " 1 thread");
        }
      }
    }
  }
}

TEST(GemmCore, KZeroGivesEpilogueOfZero) {
  const std::vector<float> bias = {1.0f, -2.0f};
  Epilogue ep;
  ep.bias = bias.data(), ep.bias_axis = BiasAxis::PerColumn, ep.act = ActivationSpec::relu();
  std::vector<float> C(4, 7.0f);
  float dummy = 0;
  gemm(2, 2, 0, MatrixRef{&dummy, 1}, MatrixRef{&dummy, 2}, C.data(), 2, ep);
  EXPECT_EQ(C, (std::vector<float>{1.0f, 0.0f, 1.0f, 0.0f}));
}

TEST(GemmCore, TileFollowsTheShape) {
  // On AVX-512 the 6x64 tile is the default; 14x32 where 32-wide tiles fill the columns clearly
  // better. An operand packed for one set must not run on another.
  if (clamp_isa(Isa::Avx512) != Isa::Avx512 || std::getenv("FUSOR_GEMM_TILE"))
    GTEST_SKIP() << "needs AVX-512 and no FUSOR_GEMM_TILE";
  EXPECT_STREQ(gemm_tile(Isa::Avx512, 384, 1536).name, "avx512_6x64");
  EXPECT_STREQ(gemm_tile(Isa::Avx512, 0, 384).name, "avx512_6x64");
  EXPECT_STREQ(gemm_tile(Isa::Avx512, 0, 49).name, "avx512_6x64");
  EXPECT_STREQ(gemm_tile(Isa::Avx512, 3136, 96).name, "avx512_14x32");
  EXPECT_STREQ(gemm_tile(Isa::Avx512, 0, 16).name, "avx512_14x32");
  const std::vector<float> w = random_vec(64 * 96, 5);
  const PackedB narrow(MatrixRef{w.data(), 96}, 64, 96, Isa::Avx512);
  EXPECT_STREQ(narrow.tile().name, "avx512_14x32");
  std::vector<float> a = random_vec(8 * 64, 6), c(8 * 96);
  PanelSource pa, pb;
  pa.pack = [&](int64_t i0, int64_t m, int64_t k0, int64_t kc, float* dst) {
    pack_panels(MatrixRef{a.data(), 64}, i0, m, k0, kc, 6, dst);
  };
  pb.packed = &narrow;
  EXPECT_THROW(gemm_panels(gemm_tile(Isa::Avx512, 0, 384), 8, 96, 64, pa, pb, c.data(), 96), Error);
}

TEST(CpuFeatures, EnvironmentForcesAndClampsIsa) {
  const Isa hw = detect_isa();
  set_isa_env("scalar");
  EXPECT_EQ(active_isa(), Isa::Scalar);
  set_isa_env("avx2");
  EXPECT_EQ(active_isa(), hw >= Isa::Avx2 ? Isa::Avx2 : hw);
  set_isa_env("avx512");
  EXPECT_EQ(active_isa(), hw);
  set_isa_env(nullptr);
  EXPECT_EQ(active_isa(), hw);
  EXPECT_EQ(gemm_tile(Isa::Scalar).isa, Isa::Scalar);
  EXPECT_EQ(gemm_tile(Isa::Avx512).isa, hw);
}

TEST(CpuFeatures, DefaultPathFollowsEnvironment) {
  // A call without an explicit ISA takes FUSOR_ISA: a PackedB made under it is bound to it.
  const float b[4] = {1, 2, 3, 4};
  for (Isa isa : runnable_isas()) {
    set_isa_env(isa_name(isa));
    PackedB p(MatrixRef{b, 2}, 2, 2);
    EXPECT_EQ(p.isa(), isa);
  }
  set_isa_env(nullptr);
}

}  // namespace
}  // namespace fusor
