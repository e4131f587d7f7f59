#include "kernels/fused/flash_attention.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/fused/flash_attention_tile.h"
#include "kernels/thread_pool.h"

namespace fusor::fused {
namespace flash {

// Each ISA's functions are taken on first use only: the per-ISA files are compiled for that ISA,
// so their code runs only after detection says it may.
const TileFns& tile_fns(Isa isa) {
  switch (clamp_isa(isa)) {
    case Isa::Avx512: {
      static const TileFns f = tile_fns_avx512();
      return f;
    }
    case Isa::Avx2: {
      static const TileFns f = tile_fns_avx2();
      return f;
    }
    default: {
      static const TileFns f = tile_fns_scalar();
      return f;
    }
  }
}

}  // namespace flash

namespace {

// Work below which a chunk of tasks is not split further across threads (a wake-up costs more).
constexpr int64_t kMinFlopsPerChunk = int64_t(1) << 19;
// The K transposition's cost per float moved, for the pool's cost model (a gather of rows).
constexpr double kTransposeNsPerFloat = 0.5;
// Query rows per task: at most this many register tiles.
constexpr int64_t kMaxTilesPerTask = 8;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void flash_attention(const AttnProblem& p, ThreadPool& pool, const std::function<void*(size_t)>& scratch, Isa isa) {
  const flash::TileFns& fns = flash::tile_fns(isa);
  const int64_t nb = p.batch * p.heads;
  if (nb <= 0 || p.sq <= 0 || p.dv <= 0) return;
  auto off = [&](int64_t n, int64_t sb, int64_t sh) { return (n / p.heads) * sb + (n % p.heads) * sh; };
  if (p.sk <= 0) {  // no keys: every row is fully masked
    for (int64_t n = 0; n < nb; ++n)
      for (int64_t i = 0; i < p.sq; ++i)
        std::memset(p.y + off(n, p.y_batch, p.y_head) + i * p.y_row, 0, static_cast<size_t>(p.dv) * sizeof(float));
    return;
  }
  const int threads = std::max(1, pool.num_threads());

  // K^T per (batch, head): the input itself when its keys are contiguous, else a transposed copy.
  const bool direct = p.k_key == 1;
  // The copy is in panels of kKeyBlock keys (d x kKeyBlock floats each, contiguous): a row tile's
  // scores read one panel front to back, as the GEMM core reads its packed operand.
  const int64_t chunks = ceil_div(p.sk, flash::kKeyBlock), panel = flash::kKeyBlock * p.d;
  const int64_t ldkt = direct ? p.k_dim : flash::kKeyBlock, kt_block = direct ? flash::kKeyBlock : panel;
  float* kt = nullptr;
  if (!direct) {
    kt = static_cast<float*>(scratch(static_cast<size_t>(nb * chunks * panel) * sizeof(float)));
    // Items of kKeyBlock keys of one head, so that both threads share the copy even with few heads
    // (vit_tiny's 3 heads of 197 keys went to one thread while the other waited: ~6% of the
    // attention's time at 2 threads, perf on bench/attention_bench).
    pool.parallel_for_cost(nb * chunks, kTransposeNsPerFloat * static_cast<double>(flash::kKeyBlock * p.d),
                           [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t n = i / chunks, j0 = (i % chunks) * flash::kKeyBlock;
        fns.transpose_k(p.k + off(n, p.k_batch, p.k_head) + j0 * p.k_key, p.k_key, p.k_dim,
                        std::min<int64_t>(flash::kKeyBlock, p.sk - j0), p.d, kt + i * panel, ldkt);
      }
    });
  }

  // Tasks: (batch, head, tile of query rows), tiles shortened until the threads have enough.
  const int64_t mr = fns.mr;
  int64_t tile = mr * kMaxTilesPerTask;
  while (tile > mr && nb * ceil_div(p.sq, tile) < 4 * threads) tile -= mr;
  tile = std::min(tile, ceil_div(p.sq, mr) * mr);
  const int64_t tiles = ceil_div(p.sq, tile), tasks = nb * tiles, full = p.sq % tile == 0 ? tiles : tiles - 1;
  const int64_t chunk = flash::chunk_keys(p.sk);
  // One workspace per slot (a task's scores for a chunk of keys), each starting on its own cache
  // line (no line shared between two threads).
  const int64_t work = ceil_div(flash::work_floats(tile, fns.mr, chunk, p.d), 16) * 16;
  const int64_t task_flops = 2 * tile * p.sk * (p.d + p.dv) / (p.causal ? 2 : 1);
  // One slot per thread, each taking tasks one at a time from a shared counter, so the threads end
  // at most one task apart (the pool's chunks of whole heads left a thread 4 chunks against 3 at
  // S = 384). Without causal, tasks go head by head over the full tiles, then the short last tiles
  // of every head: a thread's next task reads the K^T and V it just read, from its L2 (tile by
  // tile across the heads, bert_like at S = 384 cycled through 6 heads of ~200 KB each, more than
  // a core's L2). With causal the last tiles (the most keys) come first, across the heads.
  const int64_t slots = std::clamp<int64_t>(tasks * task_flops / kMinFlopsPerChunk, 1, std::min<int64_t>(threads, tasks));
  std::atomic<int64_t> next{0}, worker{0};
  float* works = static_cast<float*>(scratch(static_cast<size_t>(slots * work) * sizeof(float)));

  pool.parallel_for(slots, [&](int64_t, int64_t) {
    // At most `slots` calls: each takes its own workspace.
    float* w = works + worker.fetch_add(1, std::memory_order_relaxed) * work;
    for (int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < tasks; t = next.fetch_add(1, std::memory_order_relaxed)) {
      int64_t n, tix;
      if (p.causal) {
        n = t % nb, tix = tiles - 1 - t / nb;
      } else if (t < nb * full) {
        n = t / full, tix = t % full;
      } else {
        n = t - nb * full, tix = tiles - 1;
      }
      const int64_t i0 = tix * tile;
      flash::TileArgs a;
      a.rows = std::min(tile, p.sq - i0);
      a.q = p.q.data + off(n, p.q.batch, p.q.head) + i0 * p.q.row;
      a.ldq = p.q.row;
      a.y = p.y + off(n, p.y_batch, p.y_head) + i0 * p.y_row;
      a.ldy = p.y_row;
      a.kt = direct ? p.k + off(n, p.k_batch, p.k_head) : kt + n * chunks * panel;
      a.ldkt = ldkt;
      a.kt_block = kt_block;
      a.v = p.v.data + off(n, p.v.batch, p.v.head);
      a.ldv = p.v.row;
      a.keys = p.sk;
      a.d = p.d;
      a.dv = p.dv;
      a.scale = p.scale;
      if (p.fmask || p.bmask) {
        const int64_t base = p.mask_base[n] + i0 * p.mask_row;
        if (p.fmask) a.fmask = p.fmask + base;
        if (p.bmask) a.bmask = p.bmask + base;
        a.mask_row = p.mask_row;
        a.mask_col = p.mask_col;
      }
      a.causal = p.causal;
      a.causal_first = i0 + p.sk - p.sq;
      a.chunk = chunk;
      a.work = w;
      fns.attend(a);
    }
  }, 1);
}

}  // namespace fusor::fused
