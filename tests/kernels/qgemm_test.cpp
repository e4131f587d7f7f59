// The int8 GEMM core against plain loops: every int8 path the machine runs, signed and unsigned B,
// zero points of A and of B (per column), tails of rows, columns and k, every output kind, the
// residual epilogue, threads. Integer results must be exact; requantized ones may differ from
// the double-precision definition by one step where float rounding breaks a tie differently.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "kernels/int8/qgemm.h"
#include "kernels/int8/qgemm_kernels.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/int8_isas.h"

namespace fusor::int8 {
namespace {

struct Case {
  int64_t M, N, K;
  bool b_signed;
  int a_zero;
  bool b_zeros;  // per-column zero points of B
  // B's values: 0 full range; 1 narrow for AVX2's vpmaddubsw kernel (QPackedB::narrow: pairs of k
  // whose positive values sum to <= 128 and negative ones to >= -128), with pairs at the bounds;
  // 2 the same but one pair one over the bound (the int16 form must be kept).
  int narrow = 0;
  // A's bytes, for AVX2's forms for wide B (kernels/int8/qgemm.cpp, avx2_rows):
  // 0 uniform, rows of 255 and 0 (widened);
  // 1 mostly below 128 (1 in 128 at 128-255, row 0 every 64th): the split form (top bits cleared,
  //   128 * b(k, :) added per byte >= 128);
  // 2 all below 128: the byte kernel on A in place;
  // 3 mostly in [64, 192] (1 in 128 outside, at 0-63 or 193-255; row 0 every 64th at 0 or 255, row
  //   1 at 192 and 64): the centred form (d = a - 128 against the weights + 128, |d| > 64 listed);
  // 4 in [64, 192] but 1 in 16 outside: too many to list (widened);
  // 5 pairs of k (2i, 2i + 1) at vpmaddubsw's bound: 1 in 8 summing to exactly 255 (any split,
  //   (255, 0) to (128, 127): never listed), 1 in 128 past it (listed: the split form), the others
  //   below 128; row 0 every pair (255, 0) or (0, 255);
  // 6 the centred form's pairs (d = a - 128 mostly in [-64, 64]): 1 in 8 at its bound (opposite
  //   signs up to (-128, 127), or one sign with |d| + |d'| = 128 such as (-128, 0), (64, 64)), 1 in
  //   128 past it (one sign, |d| + |d'| in 129..192: listed);
  // 7 every byte in [0, 31] (the grouped form: four k groups summed in int16), row 1 at its bound
  //   (per 16 bytes, 255 at k 0 and k 15: each int16 lane's bytes sum to 255);
  // 8 the same with one 16 bytes of each row holding 200 at k 0 and k 4 (one lane's bytes sum
  //   past 255, every pair within it: the plain in-place form).
  int a_dist = 0;
  // A's rows contiguous (lda = K rounded up to 4, the bytes past K random): the split and centred
  // forms prepare them as one stream; else 4 bytes apart.
  bool tight = false;
};

class QGemmTest : public testing::TestWithParam<Case> {};

TEST_P(QGemmTest, MatchesLoops) {
  const Case c = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(c.M * 131 + c.N * 7 + c.K));
  std::uniform_int_distribution<int> byte(0, 255);
  const int64_t lda = ((c.K + 3) / 4) * 4 + (c.tight ? 0 : 4);
  std::vector<uint8_t> a(static_cast<size_t>(c.M * lda));
  for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
  std::vector<uint8_t> braw(static_cast<size_t>(c.K * c.N));
  for (auto& v : braw) v = static_cast<uint8_t>(byte(rng));
  if (c.narrow) {
    // Stored values (uint8 B is stored minus 128) in [-64, 64], then pairs at the bounds.
    const int shift = c.b_signed ? 0 : 128;
    auto put = [&](int64_t k, int64_t n, int v) { braw[static_cast<size_t>(k * c.N + n)] = static_cast<uint8_t>(v + shift); };
    std::uniform_int_distribution<int> small(-64, 64);
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t n = 0; n < c.N; ++n) put(k, n, small(rng));
    for (int64_t n = 0; n < c.N && c.K >= 2; ++n) {
      const int64_t k = 2 * (n % (c.K / 2));
      switch (n % 4) {
        case 0: put(k, n, 127); put(k + 1, n, 1); break;
        case 1: put(k, n, -128); put(k + 1, n, 0); break;
        case 2: put(k, n, -64); put(k + 1, n, -64); break;
        default: put(k, n, 100); put(k + 1, n, -128); break;
      }
    }
    if (c.narrow == 2) {  // pairs are (2i, 2i + 1)
      const int64_t k = (c.K - 2) / 2 * 2;
      put(k, c.N - 1, 65);
      put(k + 1, c.N - 1, 64);
    }
  }
  if (c.a_dist == 1 || c.a_dist == 2) {
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t k = 0; k < lda; ++k) {
        const bool hot = c.a_dist == 1 && (i == 0 ? k % 64 == 3 : byte(rng) % 128 == 0);
        a[static_cast<size_t>(i * lda + k)] = static_cast<uint8_t>(hot ? 128 + byte(rng) % 128 : byte(rng) % 128);
      }
    if (c.M > 1) a[static_cast<size_t>(lda + 1)] = c.a_dist == 1 ? 255 : 127;
  } else if (c.a_dist == 7 || c.a_dist == 8) {
    for (int64_t i = 0; i < c.M; ++i) {
      uint8_t* ar = a.data() + i * lda;
      for (int64_t k = 0; k < lda; ++k) {
        const bool bound = k % 16 == 0 || k % 16 == 15;
        ar[k] = static_cast<uint8_t>(i == 1 ? (bound ? 255 : 0) : byte(rng) % 32);
      }
      if (c.a_dist == 8 && c.K >= 16) {
        const int64_t g = (i * 7 % (c.K / 16)) * 16;
        ar[g] = ar[g + 4] = 200;
        ar[g + 1] = ar[g + 5] = 31;
      }
    }
  } else if (c.a_dist == 5 || c.a_dist == 6) {
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t k = 0; k + 1 < lda; k += 2) {
        const int kind = byte(rng) % 128;  // 0-15 at the bound, 16 past it, else inside
        int x, y;
        if (c.a_dist == 5) {
          if (i == 0) {
            x = k % 4 ? 0 : 255;
          } else if (kind < 16) {
            x = byte(rng);
          } else if (kind == 16) {
            x = 128 + byte(rng) % 128;
          } else {
            x = byte(rng) % 128;
          }
          y = i == 0 ? 255 - x : kind < 16 ? 255 - x : kind == 16 ? 256 - x + byte(rng) % x : byte(rng) % 128;
        } else {
          int dx, dy;
          if (kind < 16) {  // the bound: opposite signs, or one sign summing to 128
            dx = (kind % 2 ? 1 : -1) * (byte(rng) % 129);
            const bool opposite = kind < 8;
            dy = opposite ? (dx < 0 ? byte(rng) % 128 : -(byte(rng) % 129)) : (dx < 0 ? -(128 + dx) : 128 - dx);
          } else if (kind == 16) {  // one sign, 129..192 together
            const int sum = 129 + byte(rng) % 64, part = sum - 64 + byte(rng) % 64;
            const int px = std::min(part, 128), py = std::min(sum - px, 127);
            const int sign = byte(rng) % 2 ? 1 : -1;
            dx = sign * px;
            dy = sign * py;
          } else {
            dx = byte(rng) % 129 - 64;
            dy = byte(rng) % 129 - 64;
          }
          x = std::clamp(dx + 128, 0, 255);
          y = std::clamp(dy + 128, 0, 255);
        }
        a[static_cast<size_t>(i * lda + k)] = static_cast<uint8_t>(x);
        a[static_cast<size_t>(i * lda + k + 1)] = static_cast<uint8_t>(y);
      }
  } else if (c.a_dist >= 3) {
    const int every = c.a_dist == 3 ? 128 : 16;
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t k = 0; k < lda; ++k) {
        const bool hot = i == 0 ? k % 64 == 3 : byte(rng) % every == 0;
        const int out = byte(rng) % 127;  // 0-62 below, 63-126 above (193-256 -> 193-255)
        const int v = hot ? (out < 63 ? out : std::min(255, 130 + out)) : 64 + byte(rng) % 129;
        a[static_cast<size_t>(i * lda + k)] = static_cast<uint8_t>(i == 0 && hot ? (k % 128 == 3 ? 0 : 255) : v);
      }
    if (c.M > 1)
      for (int64_t k = 0; k < c.K; ++k) a[static_cast<size_t>(lda + k)] = k % 2 ? 64 : 192;
  } else {
    // The first row at 255 and the second at 0: the largest pair sums the kernels can meet.
    for (int64_t k = 0; k < c.K; ++k) {
      a[static_cast<size_t>(k)] = 255;
      if (c.M > 1) a[static_cast<size_t>(lda + k)] = 0;
    }
  }
  std::vector<int32_t> bz(static_cast<size_t>(c.N), 0);
  if (c.b_zeros)
    for (auto& z : bz) z = c.b_signed ? byte(rng) % 11 - 5 : 120 + byte(rng) % 16;
  auto bval = [&](int64_t k, int64_t n) {
    const uint8_t v = braw[static_cast<size_t>(k * c.N + n)];
    return c.b_signed ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
  };
  // Exact products with zero points.
  std::vector<int64_t> want(static_cast<size_t>(c.M * c.N));
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      int64_t s = 0;
      for (int64_t k = 0; k < c.K; ++k) s += (a[static_cast<size_t>(i * lda + k)] - c.a_zero) * (bval(k, j) - bz[j]);
      want[static_cast<size_t>(i * c.N + j)] = s;
    }
  std::vector<uint8_t> res(static_cast<size_t>(c.M * c.N));
  for (auto& v : res) v = static_cast<uint8_t>(byte(rng));
  ThreadPool pool(2);
  for (Int8Isa isa : runnable_int8_isas())
  for (bool amx : amx_modes(isa)) {
    AmxScope amx_scope(amx);
    SCOPED_TRACE(int8_isa_name(isa) + std::string(amx ? " with AMX" : ""));
    QPackedB pb(braw.data(), c.b_signed, c.K, c.N, c.N, false, isa);
    if (c.narrow) {
      EXPECT_EQ(pb.narrow(), isa == Int8Isa::Avx2 && c.narrow == 1);
    }
    {
      // The same B given transposed (attention's K^T) packs to the same panels and column sums.
      std::vector<uint8_t> bt(static_cast<size_t>(c.K * c.N));
      for (int64_t k = 0; k < c.K; ++k)
        for (int64_t n = 0; n < c.N; ++n) bt[static_cast<size_t>(n * c.K + k)] = braw[static_cast<size_t>(k * c.N + n)];
      QPackedB pt(bt.data(), c.b_signed, c.K, c.N, c.K, true, isa);
      ASSERT_EQ(pt.narrow(), pb.narrow());
      for (int64_t p = 0; p < pb.panels(); ++p) {
        EXPECT_EQ(std::memcmp(pt.panel(p), pb.panel(p), static_cast<size_t>(pb.panel_stride())), 0) << "panel " << p;
        if (pb.byte_panel(p)) {
          EXPECT_EQ(std::memcmp(pt.byte_panel(p), pb.byte_panel(p), static_cast<size_t>(c.K + 3) / 4 * 64), 0)
              << "byte panel " << p;
        }
      }
      for (int64_t j = 0; j < c.N; ++j) ASSERT_EQ(pt.col_sums()[j], pb.col_sums()[j]) << "column " << j;
    }
    // Column offsets: -a * colsum + K * a * b' (b' the stored zero point), as the kernels' callers build them.
    std::vector<int32_t> off(static_cast<size_t>(c.N)), bzs(static_cast<size_t>(c.N));
    for (int64_t j = 0; j < c.N; ++j) {
      bzs[j] = bz[j] - pb.shift();
      off[j] = -c.a_zero * pb.col_sums()[j] + static_cast<int32_t>(c.K) * c.a_zero * bzs[j];
    }
    std::vector<int32_t> rows(static_cast<size_t>(c.M));
    qgemm_row_sums(a.data(), lda, c.M, c.K, rows.data());
    QEpilogue ep;
    ep.col_offset = off.data();
    const bool need_rows = c.b_zeros || pb.shift() != 0;
    if (need_rows) {
      ep.row_sums = rows.data();
      ep.col_bzero = bzs.data();
    }
    // Int32.
    ep.out = QEpilogue::Out::S32;
    std::vector<int32_t> c32(static_cast<size_t>(c.M * c.N));
    qgemm(pb, a.data(), lda, c.M, c32.data(), c.N, ep, &pool);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(c32[i], want[i]) << "element " << i;
    // Float with a bias and Relu.
    std::vector<float> mult(static_cast<size_t>(c.N)), add(static_cast<size_t>(c.N));
    for (int64_t j = 0; j < c.N; ++j) {
      mult[j] = 1e-3f * static_cast<float>(1 + j % 7);
      add[j] = 0.25f * static_cast<float>(j % 5) - 0.5f;
    }
    ep.mult = mult.data();
    ep.add = add.data();
    ep.out = QEpilogue::Out::F32;
    ep.act = ActivationSpec::relu();
    std::vector<float> cf(static_cast<size_t>(c.M * c.N));
    qgemm(pb, a.data(), lda, c.M, cf.data(), c.N, ep, nullptr);
    for (int64_t i = 0; i < c.M; ++i)
      for (int64_t j = 0; j < c.N; ++j) {
        const double v = std::max(0.0, static_cast<double>(want[i * c.N + j]) * mult[j] + add[j]);
        ASSERT_NEAR(cf[i * c.N + j], v, 1e-4 * (1 + std::fabs(v))) << i << "," << j;
      }
    // Requantized to uint8 (zero point in add), clamped to [3, 250], plain and with a residual.
    for (int j = 0; j < c.N; ++j) add[j] = 128.0f + static_cast<float>(j % 3);
    ep.out = QEpilogue::Out::U8;
    ep.qmin = 3;
    ep.qmax = 250;
    for (bool with_res : {false, true}) {
      SCOPED_TRACE(with_res ? "residual" : "plain");
      if (with_res) {
        ep.residual = res.data();
        ep.residual_ld = c.N;
        ep.res_t = 0.75f;
        ep.res_z = 0.5f;
        ep.res_c = -20.0f;
      }
      std::vector<uint8_t> c8(static_cast<size_t>(c.M * c.N));
      qgemm(pb, a.data(), lda, c.M, c8.data(), c.N, ep, &pool);
      int off_by_one = 0;
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          double f = static_cast<double>(want[i * c.N + j]) * mult[j] + add[j];
          if (with_res) {
            const double t = std::clamp(std::nearbyint(f), 0.0, 255.0);
            f = t * 0.75 + res[i * c.N + j] * 0.5 - 20.0;
          }
          const double q = std::clamp(std::nearbyint(f), 3.0, 250.0);
          const double d = std::fabs(q - c8[i * c.N + j]);
          ASSERT_LE(d, 1.0) << i << "," << j << " f=" << f;
          off_by_one += d > 0;
        }
      EXPECT_LE(off_by_one, std::max<int64_t>(2, c.M * c.N / 200));
    }
    ep.residual = nullptr;
  }
}

// Requantization multipliers large enough that the float result leaves int32 (vcvtps2dq would
// give INT_MIN): the outputs saturate at the type's bounds, as the definition clamps them (the
// AVX2 epilogue drops its float clamps only for multipliers <= 1/4, qepilogue_avx2.h).
TEST(QGemmEpilogue, HugeMultipliersSaturate) {
  const int64_t M = 7, K = 64, N = 16;
  std::vector<uint8_t> a(static_cast<size_t>(M * K), 255);
  std::vector<int8_t> b(static_cast<size_t>(K * N), 127);
  for (int64_t k = 0; k < K; ++k) b[static_cast<size_t>(k * N + 3)] = -127;  // one negative column
  for (Int8Isa isa : runnable_int8_isas()) {
    SCOPED_TRACE(int8_isa_name(isa));
    QPackedB pb(b.data(), true, K, N, N, false, isa);
    std::vector<int32_t> off(static_cast<size_t>(N), 0);
    std::vector<float> mult(static_cast<size_t>(N), 2000.0f), add(static_cast<size_t>(N), 0.0f);
    QEpilogue ep;
    ep.col_offset = off.data();
    ep.mult = mult.data();
    ep.add = add.data();
    for (auto out : {QEpilogue::Out::U8, QEpilogue::Out::S8}) {
      const bool s8 = out == QEpilogue::Out::S8;
      ep.out = out;
      ep.qmin = s8 ? -128 : 0;
      ep.qmax = s8 ? 127 : 255;
      std::vector<uint8_t> c(static_cast<size_t>(M * N));
      qgemm(pb, a.data(), K, M, c.data(), N, ep, nullptr);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const int got = s8 ? static_cast<int8_t>(c[static_cast<size_t>(i * N + j)]) : c[static_cast<size_t>(i * N + j)];
          ASSERT_EQ(got, j == 3 ? ep.qmin : ep.qmax) << (s8 ? "s8 " : "u8 ") << i << "," << j;
        }
    }
  }
}

// The AMX path holds the tile state only within a panel call: another user of AMX on the same
// thread (oneDNN under PyTorch) may release the tiles, or configure them otherwise, between two of
// our calls, and a tile instruction without our configuration faults (SIGILL). Released here
// between two products, which must both be exact.
TEST(QGemmAmx, TilesReleasedBetweenCalls) {
  if (!cpu_features().amx_int8) GTEST_SKIP() << "no AMX";
  const int64_t M = 48, K = 256, N = 64;
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
  for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
  AmxScope amx(true);
  const QPackedB pb(b.data(), true, K, N, N, false, Int8Isa::Avx512Vnni);
  std::vector<int32_t> off(static_cast<size_t>(N), 0), want(static_cast<size_t>(M * N), 0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t k = 0; k < K; ++k)
        want[static_cast<size_t>(i * N + j)] += a[static_cast<size_t>(i * K + k)] * static_cast<int8_t>(b[static_cast<size_t>(k * N + j)]);
  QEpilogue ep;
  ep.out = QEpilogue::Out::S32;
  ep.col_offset = off.data();
  for (int round = 0; round < 2; ++round) {
    std::vector<int32_t> c(static_cast<size_t>(M * N), -1);
    qgemm(pb, a.data(), K, M, c.data(), N, ep, nullptr);
    EXPECT_EQ(c, want) << "round " << round;
    qamx_end();  // what another library's tilerelease leaves
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, QGemmTest,
                         testing::Values(Case{1, 1, 1, true, 0, false}, Case{7, 5, 3, true, 3, false},
                                         Case{6, 64, 64, true, 128, false}, Case{13, 70, 29, true, 7, false},
                                         Case{25, 17, 12, true, 0, true}, Case{100, 200, 77, true, 51, false},
                                         Case{33, 48, 40, false, 9, false}, Case{9, 33, 130, false, 200, true},
                                         Case{97, 130, 300, true, 255, false},
                                         // Every remainder of 6 rows under 64-column panels
                                         // (AVX512-VNNI's own-height last tiles): 1, 2, 3, 4.
                                         Case{26, 64, 37, true, 5, false}, Case{15, 80, 21, false, 0, true},
                                         // Narrow B (AVX2's vpmaddubsw form): every remainder of
                                         // its 5-row tiles, odd K, uint8 B, and one pair over.
                                         Case{24, 48, 64, true, 128, false, 1}, Case{13, 20, 37, true, 0, true, 1},
                                         Case{7, 33, 130, false, 200, false, 1}, Case{11, 16, 9, false, 3, true, 1},
                                         Case{24, 48, 64, true, 128, false, 2}, Case{9, 33, 131, false, 7, false, 2},
                                         // Wide B, A mostly under 128 (the split form, used where a
                                         // task has at least 3 panels): tails of its 5-row tiles,
                                         // odd K, uint8 B with zero points...
                                         Case{200, 150, 2050, true, 3, false, 0, 1}, Case{100, 170, 2051, false, 7, true, 0, 1},
                                         Case{6, 400, 2100, true, 5, false, 0, 1},
                                         // ... and where it is not (two panels read the rows: the
                                         // preparation would not pay; widened).
                                         Case{97, 32, 300, true, 0, false, 0, 1},
                                         // A all under 128 (in place, any size), odd K and N.
                                         Case{23, 37, 29, true, 2, false, 0, 2}, Case{97, 130, 300, false, 0, true, 0, 2},
                                         Case{6, 16, 2100, true, 0, false, 0, 2},
                                         // A mostly in [64, 192] (the centred form, tasks of at least
                                         // 3 panels): tails of rows, K (padding past K), columns.
                                         Case{200, 150, 2050, true, 128, false, 0, 3}, Case{100, 170, 2051, false, 130, true, 0, 3},
                                         Case{6, 400, 2103, true, 120, false, 0, 3}, Case{17, 200, 2049, true, 128, false, 0, 3},
                                         Case{97, 130, 300, true, 128, false, 0, 3},
                                         // ... with too many outside to list (widened).
                                         Case{200, 150, 2050, true, 128, false, 0, 4},
                                         // Contiguous rows (one stream; tasks of at least 3 panels):
                                         // short and long K, random bytes past K, a half panel.
                                         Case{97, 144, 24, true, 128, false, 0, 3, true},
                                         Case{200, 150, 2050, true, 128, false, 0, 3, true},
                                         Case{100, 170, 2051, false, 130, true, 0, 3, true},
                                         Case{97, 144, 24, true, 0, false, 0, 1, true},
                                         Case{200, 150, 2050, true, 3, false, 0, 1, true},
                                         Case{30, 24, 144, true, 128, false, 0, 2, true},
                                         // Pairs of k at and past vpmaddubsw's bound: in place
                                         // and split, centred; tails, uint8 B, contiguous rows.
                                         Case{200, 150, 2050, true, 3, false, 0, 5}, Case{100, 170, 2051, false, 7, true, 0, 5},
                                         Case{97, 144, 24, true, 0, false, 0, 5, true}, Case{23, 37, 300, true, 0, false, 0, 5},
                                         Case{200, 150, 2050, true, 128, false, 0, 6}, Case{100, 170, 2051, false, 130, true, 0, 6},
                                         Case{97, 144, 24, true, 128, false, 0, 6, true},
                                         // Small bytes (the grouped form; tails of its 2-row and
                                         // 5-row half tiles, K past whole groups of 16), and
                                         // the same with one group over its bound in each row.
                                         Case{97, 150, 300, true, 3, false, 0, 7}, Case{23, 40, 2052, false, 0, true, 0, 7},
                                         Case{31, 24, 144, true, 5, false, 0, 7, true}, Case{9, 8, 37, true, 5, false, 0, 7},
                                         Case{97, 150, 300, true, 3, false, 0, 8}, Case{23, 40, 2052, false, 0, true, 0, 8}));

}  // namespace
}  // namespace fusor::int8
