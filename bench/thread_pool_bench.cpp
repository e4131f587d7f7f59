// The intra-op pool's fork-join cost and the break-even of a split (kernels/thread_pool.h's
// kMinShareNs): BM_ForkJoin is an empty parallel_for over 2 threads, back to back (workers
// spinning); BM_Split runs a loop of `work_ns` of arithmetic serially (threads 1) or split
// (threads 2). Timings only through /work/tools/quietrun.
//   build/bin/thread_pool_bench --benchmark_min_time=0.3
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <cstdint>

#include "kernels/thread_pool.h"

namespace {

// About `ns` nanoseconds of dependent floating-point work per call on this machine class.
float spin_work(int64_t items, float seed) {
  float x = seed;
  for (int64_t i = 0; i < items; ++i) x = x * 0.999999f + 1e-7f;
  return x;
}

void BM_ForkJoin(benchmark::State& state) {
  fusor::ThreadPool pool(static_cast<int>(state.range(0)));
  std::atomic<int64_t> sink{0};
  for (auto _ : state) pool.parallel_for(2, [&](int64_t b, int64_t e) { sink.fetch_add(e - b, std::memory_order_relaxed); });
  benchmark::DoNotOptimize(sink.load());
}
BENCHMARK(BM_ForkJoin)->ArgName("threads")->Arg(1)->Arg(2);

// A loop of `items` (~1 ns each: a 4-cycle dependent FMA-like chain) over 64 chunks.
void BM_Split(benchmark::State& state) {
  const int64_t items = state.range(0);
  fusor::ThreadPool pool(static_cast<int>(state.range(1)));
  float out[64] = {};
  for (auto _ : state) {
    pool.parallel_for(64, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) out[c] = spin_work(items / 64, static_cast<float>(c));
    });
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_Split)->ArgNames({"items", "threads"})->ArgsProduct({{2000, 5000, 10000, 20000, 50000}, {1, 2}});

}  // namespace

BENCHMARK_MAIN();
