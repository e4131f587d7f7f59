// int8::qlookup (kernels/int8/qops.h), the loop of fusor.QLookup: y[i] = table[x[i]] for uint8 X and
// table[x[i] + 128] for int8 X, on lengths around its 8-byte and 64-byte steps, at offsets that
// misalign them, serially and split over two threads, on each instruction-set path this machine has
// (FUSOR_ISA=scalar takes the byte loop, avx2 the vpshufb rows, avx512 the VBMI permutes where the
// CPU has them, else the vpshufb rows).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <random>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/int8/qops.h"
#include "kernels/thread_pool.h"
#include "tests/kernels/isa_env.h"

namespace fusor::int8 {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  std::vector<uint8_t> v(n);
  for (auto& b : v) b = static_cast<uint8_t>(g());
  return v;
}

TEST(QLookup, EveryElementIsItsTableEntry) {
  const std::vector<uint8_t> table = random_bytes(256, 1);
  ThreadPool two(2);
  for (Isa isa : {Isa::Scalar, Isa::Avx2, Isa::Avx512}) {
    if (isa > detect_isa()) continue;
    set_isa_env(isa_name(isa));
    for (bool x_signed : {false, true})
      for (int64_t n : {0, 1, 7, 8, 9, 63, 64, 65, 127, 128, 1000, 70001, 200003, (1 << 20) + 77})
        for (int64_t off : {0, 3}) {
          const std::vector<uint8_t> x = random_bytes(static_cast<size_t>(n + off), static_cast<uint32_t>(n + off));
          for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two}) {
            std::vector<uint8_t> y(static_cast<size_t>(n + off + 64), 0xAB);
            qlookup(x.data() + off, x_signed, table.data(), y.data() + off, n, pool);
            for (int64_t i = 0; i < off; ++i) ASSERT_EQ(y[i], 0xAB) << "wrote before the output";
            for (size_t i = static_cast<size_t>(n + off); i < y.size(); ++i) ASSERT_EQ(y[i], 0xAB) << "wrote past the output";
            for (int64_t i = 0; i < n; ++i) {
              const uint8_t v = x[off + i];
              const uint8_t want = table[x_signed ? static_cast<uint8_t>(v ^ 0x80) : v];
              ASSERT_EQ(y[off + i], want) << isa_name(isa) << " n " << n << " i " << i << " signed " << x_signed
                                          << " pool " << (pool != nullptr);
            }
          }
        }
  }
  set_isa_env(nullptr);
}

}  // namespace
}  // namespace fusor::int8
