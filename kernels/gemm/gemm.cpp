#include "kernels/gemm/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "core/util/error.h"
#include "kernels/gemm/gemm_kernels.h"
#include "kernels/thread_pool.h"

namespace fusor {

using gemm_detail::GemmKernelSet;
using gemm_detail::MacroArgs;

// The cost model's rate for the GEMM core on small and mid-sized products (packing on the fly,
// edge tiles): about a quarter of one core's peak, in flops per ns.
constexpr double kGemmFlopsPerNs = 50.0;

namespace gemm_detail {

namespace {
const GemmKernelSet* variant_of(Isa isa, int v) {
  switch (isa) {
    case Isa::Avx512: return gemm_kernels_avx512(v);
    case Isa::Avx2: return gemm_kernels_avx2(v);
    case Isa::Scalar: return gemm_kernels_scalar(v);
  }
  return nullptr;
}

// FUSOR_GEMM_BLOCK=mc,nc,kc overrides the cache blocks (tuning only; rounded to the tile).
GemmKernelSet with_block_override(GemmKernelSet ks) {
  const char* env = std::getenv("FUSOR_GEMM_BLOCK");
  long mc = 0, nc = 0, kc = 0;
  if (env && std::sscanf(env, "%ld,%ld,%ld", &mc, &nc, &kc) == 3 && mc > 0 && nc > 0 && kc > 0) {
    ks.mc = std::max<int64_t>(ks.mr, mc / ks.mr * ks.mr);
    ks.nc = std::max<int64_t>(ks.nr, nc / ks.nr * ks.nr);
    ks.kc = kc;
  }
  return ks;
}

// An ISA's sets (block override applied) and the one FUSOR_GEMM_TILE forces, if any.
struct IsaSets {
  std::vector<GemmKernelSet> sets;
  int forced = -1;
};

IsaSets make_sets(Isa isa) {
  IsaSets s;
  const char* want = std::getenv("FUSOR_GEMM_TILE");
  for (int v = 0; const GemmKernelSet* ks = variant_of(isa, v); ++v) {
    s.sets.push_back(with_block_override(*ks));
    s.sets.back().variant = v;
    if (want && *want && std::string_view(ks->name) == want) s.forced = v;
  }
  return s;
}

const IsaSets& isa_sets(Isa isa) {
  static const IsaSets all[3] = {make_sets(Isa::Scalar), make_sets(clamp_isa(Isa::Avx2)),
                                 make_sets(clamp_isa(Isa::Avx512))};
  return all[static_cast<int>(clamp_isa(isa))];
}

// The share of r-wide tiles' lanes inside a dimension of d (1 when unknown).
double fill(int64_t d, int r) {
  if (d <= 0) return 1.0;
  const int64_t padded = (d + r - 1) / r * r;
  return static_cast<double>(d) / static_cast<double>(padded);
}

int choose(const IsaSets& s, int64_t m, int64_t n) {
  if (s.forced >= 0) return s.forced;
  int best = 0;
  double best_score = -1.0;
  for (size_t v = 0; v < s.sets.size(); ++v) {
    const GemmKernelSet& ks = s.sets[v];
    if (ks.rate <= 0.0) continue;
    const double score = ks.rate * fill(m, ks.mr) * fill(n, ks.nr);
    if (score > best_score) {
      best = static_cast<int>(v);
      best_score = score;
    }
  }
  return best;
}
}  // namespace

const GemmKernelSet& gemm_kernels(Isa isa, int64_t m, int64_t n) {
  const IsaSets& s = isa_sets(isa);
  return s.sets[static_cast<size_t>(choose(s, m, n))];
}

const GemmKernelSet& gemm_kernels_variant(Isa isa, int variant) {
  const IsaSets& s = isa_sets(isa);
  if (variant < 0 || static_cast<size_t>(variant) >= s.sets.size()) throw_internal("gemm: no such kernel set");
  return s.sets[static_cast<size_t>(variant)];
}

}  // namespace gemm_detail

namespace {
GemmTile tile_of(const GemmKernelSet& ks) { return {ks.isa, ks.mr, ks.nr, ks.name, ks.variant}; }
}  // namespace

GemmTile gemm_tile(Isa isa, int64_t m, int64_t n) { return tile_of(gemm_detail::gemm_kernels(isa, m, n)); }

namespace {

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

Isa resolve(const GemmRun& run) { return clamp_isa(run.isa ? *run.isa : active_isa()); }

// Memory for one call: from the run's scratch, or owned here.
class Workspace {
 public:
  float* get(const GemmRun& run, size_t floats) {
    if (floats == 0) return nullptr;
    if (run.scratch) return static_cast<float*>(run.scratch(floats * sizeof(float)));
    owned_.reset(new (std::align_val_t(64)) float[floats]);
    return owned_.get();
  }

 private:
  struct Del {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  std::unique_ptr<float[], Del> owned_;
};

}  // namespace

void pack_panels(MatrixRef X, int64_t i0, int64_t m, int64_t k0, int64_t kc, int r, float* dst) {
  for (int64_t p0 = 0; p0 < m; p0 += r, dst += kc * r) {
    const int rows = static_cast<int>(std::min<int64_t>(r, m - p0));
    if (X.trans) {
      // (i, k) at data[k * ld + i]: each k step is a contiguous run of the panel's rows.
      const float* src = X.data + k0 * X.ld + i0 + p0;
      for (int64_t k = 0; k < kc; ++k, src += X.ld) {
        float* d = dst + k * r;
        std::memcpy(d, src, rows * sizeof(float));
        for (int q = rows; q < r; ++q) d[q] = 0.0f;
      }
    } else {
      // (i, k) at data[i * ld + k]: read each row along k, write with stride r.
      for (int q = 0; q < rows; ++q) {
        const float* src = X.data + (i0 + p0 + q) * X.ld + k0;
        float* d = dst + q;
        for (int64_t k = 0; k < kc; ++k) d[k * r] = src[k];
      }
      for (int q = rows; q < r; ++q)
        for (int64_t k = 0; k < kc; ++k) dst[k * r + q] = 0.0f;
    }
  }
}

namespace {

// "a/avx512_14x32": the buffer name of an operand packed for a kernel set (its panel geometry).
std::string packed_name(std::string_view name, const GemmTile& t) { return std::string(name) + "/" + t.name; }

}  // namespace

PackedA::PackedA(MatrixRef a, int64_t M, int64_t K, std::optional<Isa> isa, const Prepacker& pp, std::string_view name) {
  const GemmKernelSet& ks = gemm_detail::gemm_kernels(clamp_isa(isa ? *isa : active_isa()), M, 0);
  tile_ = tile_of(ks);
  rows_ = M;
  cols_ = K;
  panel_stride_ = K * ks.mr;
  const size_t floats = static_cast<size_t>(std::max<int64_t>(1, ceil_div(M, ks.mr) * panel_stride_));
  bytes_ = floats * sizeof(float);
  data_ = pp.get(packed_name(name, tile_), floats * sizeof(float), [&](void* dst) {
              float* d = static_cast<float*>(dst);
              d[0] = 0.0f;  // the one float of an empty matrix
              if (M > 0 && K > 0) pack_panels(a, 0, M, 0, K, ks.mr, d);
            }).share<float>();
}

PackedB::PackedB(MatrixRef b, int64_t K, int64_t N, std::optional<Isa> isa, const Prepacker& pp, std::string_view name)
    : PackedB(K, N, [&](std::vector<float>&) { return b; }, isa, pp, name) {}

PackedB::PackedB(int64_t K, int64_t N, const std::function<MatrixRef(std::vector<float>& keep)>& make_b,
                 std::optional<Isa> isa, const Prepacker& pp, std::string_view name) {
  const GemmKernelSet& ks = gemm_detail::gemm_kernels(clamp_isa(isa ? *isa : active_isa()), 0, N);
  tile_ = tile_of(ks);
  rows_ = K;
  cols_ = N;
  panel_stride_ = K * ks.nr;
  const size_t floats = static_cast<size_t>(std::max<int64_t>(1, ceil_div(N, ks.nr) * panel_stride_));
  bytes_ = floats * sizeof(float);
  data_ = pp.get(packed_name(name, tile_), floats * sizeof(float), [&](void* dst) {
              float* d = static_cast<float*>(dst);
              d[0] = 0.0f;
              if (N <= 0 || K <= 0) return;
              std::vector<float> keep;
              const MatrixRef b = make_b(keep);
              pack_panels(b.transposed(), 0, N, 0, K, ks.nr, d);
            }).share<float>();
}

namespace {

// Panels packed for one call into memory the call owns (not a kept operand).
struct WholePacked : PackedMatrix {
  WholePacked(float* d, const GemmTile& tile, int64_t rows, int64_t cols, int64_t stride) {
    data_ = std::shared_ptr<const float>(d, [](const float*) {});
    tile_ = tile;
    rows_ = rows;
    cols_ = cols;
    panel_stride_ = stride;
  }
};

// The most of the next node's weights a GEMM prefetches (WeightsHint).
constexpr size_t kHintMaxBytes = size_t{512} << 10;
thread_local WeightsHint t_hint;

// The largest A (floats, padded to whole panels) packed whole to be shared by the threads.
constexpr int64_t kShareAMaxFloats = int64_t{1} << 20;

}  // namespace

void set_weights_hint(WeightsHint h) { t_hint = h; }
WeightsHint weights_hint() { return t_hint; }

void apply_epilogue(float* c, int64_t ldc, int64_t rows, int64_t cols, const Epilogue& ep, std::optional<Isa> isa) {
  if (rows <= 0 || cols <= 0 || ep.trivial()) return;
  gemm_detail::gemm_kernels(clamp_isa(isa ? *isa : active_isa())).apply_epilogue(c, ldc, rows, cols, ep);
}

void gemm_panels(const GemmTile& tile, int64_t M, int64_t N, int64_t K, const PanelSource& A, const PanelSource& B,
                 float* C, int64_t ldc, const Epilogue& ep, const GemmRun& run) {
  if (M <= 0 || N <= 0) return;
  const GemmKernelSet& ks = gemm_detail::gemm_kernels_variant(tile.isa, tile.variant);
  auto other = [&](const PackedMatrix* p) { return p && (p->isa() != ks.isa || p->tile().variant != ks.variant); };
  if (other(A.packed) || other(B.packed)) throw_internal("gemm: operand packed for another kernel set");
  if (K <= 0) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, 0.0f);
    if (!ep.trivial()) ks.apply_epilogue(C, ldc, M, N, ep);
    return;
  }
  const int64_t mr = ks.mr, nr = ks.nr;
  // Threads worth a fork-join for this product (thread_pool.h's cost model; packing on the fly
  // and small tiles keep small products well under peak: ~50 flops per ns).
  const int threads = run.pool ? run.pool->threads_for(2.0 * static_cast<double>(M) * N * K / kGemmFlopsPerNs) : 1;

  // k blocks of equal size, at most ks.kc.
  const int64_t kc = ceil_div(K, ceil_div(K, ks.kc));
  // An operand packed on the fly is packed once per block it appears in: cover the prepacked
  // side whole so the on-the-fly side is packed once (implicit im2col).
  // Row blocks of equal size: 128 rows in blocks of at most 126 would leave a 2-row block that
  // streams every B block again for 2 rows' work.
  int64_t mc = round_up(ceil_div(M, ceil_div(M, ks.mc)), mr), nc = std::min(round_up(N, nr), ks.nc);
  if (A.packed && !B.packed) mc = round_up(M, mr);
  // Several threads over two packed operands (A packed whole below, B a weight): one row block of
  // up to 2 mc rows (the threads split the columns; a B panel then serves every row), else row
  // blocks of equal size (128 rows in 126 + 2 left 2-row tasks as some threads' share).
  if (threads > 1 && A.packed && B.packed)
    mc = round_up(M, mr) <= 2 * ks.mc ? round_up(M, mr) : round_up(ceil_div(M, ceil_div(M, ks.mc)), mr);
  if (B.packed && !A.packed && N <= 2 * ks.nc) nc = round_up(N, nr);
  // Enough blocks for the threads (twice as many, for balance), without going below one tile.
  while (threads > 1 && ceil_div(M, mc) * ceil_div(N, nc) < 2 * threads) {
    const bool can_m = mc > mr, can_n = nc > nr;
    if (!can_m && !can_n) break;
    if (can_n && (nc / nr >= mc / mr || !can_m)) nc = round_up(nc / 2, nr);
    else mc = round_up(mc / 2, mr);
  }
  int64_t mblocks = ceil_div(M, mc), nblocks = ceil_div(N, nc);
  const bool row_tasks = !A.packed && mblocks >= 2 * threads;
  if (threads > 1) {
    // Tasks of equal size, as many as a multiple of the threads: 384 rows in blocks of 126 (126,
    // 126, 126, 6) leave one of 2 threads twice the rows of the other (1.45x instead of ~1.9x on
    // bert's projections, bench/gemm_bench BM_Fusor2Threads). One thread keeps the tuned blocks
    // (smaller ones reuse each B panel over fewer rows).
    if (row_tasks) {
      mblocks = round_up(mblocks, threads);
      mc = round_up(ceil_div(M, mblocks), mr);
    } else if (mblocks == 1) {
      nblocks = round_up(nblocks, threads);
      nc = round_up(ceil_div(N, nblocks), nr);
    }
    mblocks = ceil_div(M, mc);
    nblocks = ceil_div(N, nc);
  }
  // A read in place: packing an A panel costs about as much as a few of its tiles, so when the
  // tiles per panel are few (N within the kernel set's direct_max_tiles register tiles; any N on
  // AVX2) the kernel broadcasts from A's rows. convnext_tiny's 3136 x 384 -> 96 projection:
  // 1.60-1.86 ms packed, 1.19-1.24 direct (784 x 768 -> 192: 1.38-1.49 -> 1.17-1.26;
  // bench/gemm_bench). Only rows of at least
  // ks.direct_min_k steps (on Zen 4, short rows were a few cache lines each, too short for the
  // prefetcher: gpt_like's 256 x 256 projections and attention products ran ~4% slower at 1
  // thread; the AVX-512 sets' bounds are from a Xeon: gemm_avx512.cpp), and not rows 4 KiB apart
  // (14 rows in one L1 set would evict each other).
  const bool direct = !A.packed && A.rows.data && !A.rows.trans && ceil_div(N, nr) <= ks.direct_max_tiles &&
                      K >= ks.direct_min_k && A.rows.ld % 1024 != 0;
  // Several tasks on the same rows would each pack the same A panels (bert's 128-row projections
  // at 2 threads: 6 tasks packed A 6 times, 1.42x of one thread on 128 x 1536 x 384): pack A
  // whole once, the threads splitting its panels, and run on the packed A.
  const int64_t a_whole = round_up(M, mr) * K;
  if (threads > 1 && !row_tasks && !A.packed && A.pack && nblocks > 1 && !direct &&
      a_whole <= kShareAMaxFloats) {
    Workspace ws;
    float* pa = ws.get(run, static_cast<size_t>(a_whole));
    const int64_t panels = ceil_div(M, mr);
    run.pool->parallel_for(panels, [&](int64_t p0, int64_t p1) {
      const int64_t i0 = p0 * mr;
      A.pack(i0, std::min(M, p1 * mr) - i0, 0, K, pa + p0 * K * mr);
    }, ceil_div(panels, threads));
    const WholePacked whole(pa, tile, M, K, K * mr);
    PanelSource packed_a;
    packed_a.packed = &whole;
    gemm_panels(tile, M, N, K, packed_a, B, C, ldc, ep, run);
    return;
  }
  // A task is one row block and a group of column blocks. A packed on the fly is packed once per
  // task and k block, so a task spans all column blocks when there are enough row blocks to keep
  // the threads busy.
  const int64_t group = row_tasks ? nblocks : 1;
  const int64_t ngroups = ceil_div(nblocks, group), tasks = mblocks * ngroups;
  const int slots = static_cast<int>(std::min<int64_t>(threads, tasks));
  const size_t a_floats = A.packed || direct ? 0 : static_cast<size_t>(round_up(mc, mr) * kc);
  const size_t b_floats = B.packed ? 0 : static_cast<size_t>(round_up(nc, nr) * kc);
  const size_t per_slot = round_up(static_cast<int64_t>(a_floats + b_floats), 16);
  Workspace ws;
  float* work = ws.get(run, per_slot * slots);
  const bool plain = ep.trivial();

  // Points args at B's block (k0, nb) as the block to prefetch, when B is packed (a weight, which
  // may come from memory: a block packed here is in cache already).
  auto set_prefetch = [&](MacroArgs& args, int64_t k0, int64_t nb) {
    args.pf = nullptr;
    // A block of one row tile streams its B at the memory's pace already: prefetching the next
    // block beside it only splits that bandwidth, and a next block larger than L2 evicts its own
    // first lines before they are used (a classifier's 1 x 1280 x 1000 Gemm: 5 MB of weights).
    if (!B.packed || k0 >= K || args.mc <= tile.mr) return;
    const int64_t j0 = nb * nc;
    args.pf = B.packed->data() + (j0 / nr) * B.packed->panel_stride() + k0 * nr;
    args.pf_panels = ceil_div(std::min(nc, N - j0), nr);
    args.pf_panel_floats = std::min(kc, K - k0) * nr;
    args.pf_panel_stride = B.packed->panel_stride();
  };
  // The hint's first bytes (the next GEMM's first block at most), once this call's own blocks
  // are in cache.
  const WeightsHint hint = weights_hint();
  // A packed B this small stays in L2 from the first row task to the next: those prefetch the hint.
  const bool b_stays = B.packed && B.packed->bytes() <= 2 * kHintMaxBytes;
  auto set_hint = [&](MacroArgs& args) {
    args.pf = nullptr;
    if (!hint.data || hint.bytes < 64) return;
    const int64_t floats = static_cast<int64_t>(std::min<size_t>(hint.bytes, kHintMaxBytes) / 64 * 16);
    args.pf = static_cast<const float*>(hint.data);
    args.pf_panels = 1;
    args.pf_panel_floats = floats;
    args.pf_panel_stride = floats;
  };
  std::atomic<int64_t> next{0};
  auto body = [&](int64_t s0, int64_t) {
    float* wa = work + s0 * per_slot;
    float* wb = wa + a_floats;
    for (;;) {
      const int64_t t = next.fetch_add(1);
      if (t >= tasks) break;
      // Neighbouring tasks share the A block (same rows).
      const int64_t i0 = (t / ngroups) * mc, m = std::min(mc, M - i0);
      const int64_t nb0 = (t % ngroups) * group, nb1 = std::min(nblocks, nb0 + group);
      for (int64_t k0 = 0; k0 < K; k0 += kc) {
        const int64_t k = std::min(kc, K - k0);
        MacroArgs args;
        args.mc = m;
        args.kc = k;
        if (A.packed) {
          args.a = A.packed->data() + (i0 / mr) * A.packed->panel_stride() + k0 * mr;
          args.a_panel_stride = A.packed->panel_stride();
        } else if (direct) {
          args.a = A.rows.data + i0 * A.rows.ld + k0;
          args.a_ld = A.rows.ld;
        } else {
          A.pack(i0, m, k0, k, wa);
          args.a = wa;
          args.a_panel_stride = k * mr;
        }
        for (int64_t nb = nb0; nb < nb1; ++nb) {
          const int64_t j0 = nb * nc, n = std::min(nc, N - j0);
          args.nc = n;
          if (B.packed) {
            args.b = B.packed->data() + (j0 / nr) * B.packed->panel_stride() + k0 * nr;
            args.b_panel_stride = B.packed->panel_stride();
          } else {
            B.pack(j0, n, k0, k, wb);
            args.b = wb;
            args.b_panel_stride = k * nr;
          }
          args.c = C + i0 * ldc + j0;
          args.ldc = ldc;
          args.accumulate = k0 > 0;
          const Epilogue e = ep.offset(i0, j0);
          args.ep = (k0 + k == K && !plain) ? &e : nullptr;
          // The task's next block: the next column block, the next k block's first, or the
          // first block of the task this thread likely takes next (t + slots).
          if (nb + 1 < nb1) set_prefetch(args, k0, nb + 1);
          else if (k0 + kc < K) set_prefetch(args, k0 + kc, nb0);
          else if (const int64_t tn = t + slots; tn < tasks && (ngroups > 1 || t == 0 || !b_stays))
            set_prefetch(args, 0, (tn % ngroups) * group);
          else set_hint(args);
          ks.macro(args);
        }
      }
    }
  };
  if (slots > 1) run.pool->parallel_for(slots, body, 1);
  else body(0, 1);
}

void for_each_gemm(int64_t count, double flops_each, const GemmRun& run,
                   const std::function<void(int64_t, const GemmRun&)>& body) {
  if (count <= 0) return;
  const double each_ns = flops_each / kGemmFlopsPerNs;
  const int t = run.pool && count > 1 ? run.pool->threads_for(each_ns * static_cast<double>(count)) : 1;
  const bool whole = t > 1 && count >= 2 * t &&
                     (count % t == 0 || count >= 8 * t || each_ns < 4 * ThreadPool::kMinShareNs);
  // Each slot keeps its scratch blocks for all its GEMMs, grown from run.scratch or the heap. One
  // GEMM may ask for several blocks at once (gemm() packs a whole B, then its panel workspace), so
  // the n-th request of a GEMM gets the slot's n-th block: distinct blocks, reused by the next GEMM.
  struct Block {
    void* p = nullptr;
    size_t size = 0;
    Workspace owned;
  };
  struct SlotScratch {
    std::vector<Block> blocks;
    size_t next = 0;  // requests made by the slot's current GEMM
  };
  const int nslots = whole ? t : 1;
  std::vector<SlotScratch> slots(static_cast<size_t>(nslots));
  auto slot_run = [&](int64_t s) {
    SlotScratch& mine = slots[static_cast<size_t>(s)];
    GemmRun r;
    r.pool = whole ? nullptr : run.pool;
    r.isa = run.isa;
    r.scratch = [&mine, &run](size_t bytes) -> void* {
      if (mine.next == mine.blocks.size()) mine.blocks.emplace_back();
      Block& b = mine.blocks[mine.next++];
      if (bytes > b.size) {
        b.p = run.scratch ? run.scratch(bytes) : b.owned.get(GemmRun{}, (bytes + sizeof(float) - 1) / sizeof(float));
        b.size = bytes;
      }
      return b.p;
    };
    return r;
  };
  if (!whole) {
    const GemmRun r = slot_run(0);
    for (int64_t i = 0; i < count; ++i) {
      slots[0].next = 0;
      body(i, r);
    }
    return;
  }
  std::atomic<int64_t> next{0};
  run.pool->parallel_for(t, [&](int64_t s, int64_t) {
    const GemmRun r = slot_run(s);
    for (int64_t i; (i = next.fetch_add(1)) < count;) {
      slots[static_cast<size_t>(s)].next = 0;
      body(i, r);
    }
  }, 1);
}

void gemm(int64_t M, int64_t N, int64_t K, MatrixRef A, MatrixRef B, float* C, int64_t ldc, const Epilogue& ep,
          const GemmRun& run) {
  if (M <= 0 || N <= 0) return;
  const GemmKernelSet& ks = gemm_detail::gemm_kernels(resolve(run), M, N);
  const GemmTile tile = tile_of(ks);
  PanelSource a;
  a.pack = [&](int64_t i0, int64_t m, int64_t k0, int64_t kc, float* dst) { pack_panels(A, i0, m, k0, kc, ks.mr, dst); };
  a.rows = A;
  // B is packed whole up front when more than one row block will use it, so it is packed once.
  PanelSource b;
  const MatrixRef bt = B.transposed();
  b.pack = [&](int64_t j0, int64_t n, int64_t k0, int64_t kc, float* dst) { pack_panels(bt, j0, n, k0, kc, ks.nr, dst); };
  if (M > ks.mc && K > 0) {
    Workspace ws;
    const int64_t panels = ceil_div(N, ks.nr);
    float* d = ws.get(run, static_cast<size_t>(panels * K * ks.nr));
    auto pack_range = [&](int64_t p0, int64_t p1) {
      const int64_t j0 = p0 * ks.nr, n = std::min(N, p1 * ks.nr) - j0;
      pack_panels(bt, j0, n, 0, K, ks.nr, d + p0 * K * ks.nr);
    };
    if (run.pool) run.pool->parallel_for_cost(panels, 0.25 * static_cast<double>(K * ks.nr), pack_range);
    else pack_range(0, panels);
    const WholePacked whole(d, tile, K, N, K * ks.nr);
    PanelSource pb;
    pb.packed = &whole;
    gemm_panels(tile, M, N, K, a, pb, C, ldc, ep, run);
    return;
  }
  gemm_panels(tile, M, N, K, a, b, C, ldc, ep, run);
}

void gemm(int64_t M, MatrixRef A, const PackedB& B, float* C, int64_t ldc, const Epilogue& ep, const GemmRun& run) {
  const int mr = B.tile().mr;
  PanelSource a, b;
  a.pack = [&](int64_t i0, int64_t m, int64_t k0, int64_t kc, float* dst) { pack_panels(A, i0, m, k0, kc, mr, dst); };
  a.rows = A;
  b.packed = &B;
  gemm_panels(B.tile(), M, B.cols(), B.rows(), a, b, C, ldc, ep, run);
}

void gemm(const PackedA& A, int64_t N, MatrixRef B, float* C, int64_t ldc, const Epilogue& ep, const GemmRun& run) {
  const int nr = A.tile().nr;
  const MatrixRef bt = B.transposed();
  PanelSource a, b;
  a.packed = &A;
  b.pack = [&](int64_t j0, int64_t n, int64_t k0, int64_t kc, float* dst) { pack_panels(bt, j0, n, k0, kc, nr, dst); };
  gemm_panels(A.tile(), A.rows(), N, A.cols(), a, b, C, ldc, ep, run);
}

}  // namespace fusor
