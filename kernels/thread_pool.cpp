#include "kernels/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace fusor {

namespace {

thread_local bool tl_in_parallel = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// One worker's mailbox: the caller stores a new ticket to hand it the current job.
struct Worker {
  alignas(64) std::atomic<uint32_t> ticket{0};
  std::atomic<uint32_t> sleeping{0};
  int index = 0;  // 1 + its place in the pool (the caller is thread 0)
  std::thread thread;
};

}  // namespace

struct ThreadPool::Impl {
  std::vector<std::unique_ptr<Worker>> workers;
  // The current job, written by the caller before it opens the job; read by the workers that
  // joined it while it was open.
  const Fn* fn = nullptr;
  // [0, n) in `chunks` chunks of q or q + 1 items, the longer ones first (see chunk_range).
  int64_t n = 0, chunks = 1;
  // Slots mode (parallel_for_slots): chunk c is item c, claimed through its bit in `claimed`,
  // thread c trying its own first.
  bool slots = false;
  alignas(64) std::atomic<int64_t> next{0};
  alignas(64) std::atomic<uint64_t> claimed{0};
  // (seq << 1) | open. A worker joins a job by counting itself in `active`, then checking the
  // job is still open; the caller closes the job once its own chunks are done and waits only
  // for the workers that joined (running, so the wait is short). A worker the OS has not
  // scheduled yet never holds the caller up: it finds the job closed and goes back to waiting.
  alignas(64) std::atomic<uint64_t> state{0};
  alignas(64) std::atomic<int> active{0};
  std::atomic<bool> stop{false};
  std::mutex error_mu;
  std::exception_ptr error;
  std::mutex call_mu;  // one job at a time per pool
  uint32_t seq = 0;

  bool claim(int64_t c) {
    const uint64_t bit = uint64_t{1} << c;
    return !(claimed.fetch_or(bit, std::memory_order_relaxed) & bit);
  }

  void run_chunks(int me) {
    const int64_t q = n / chunks, r = n % chunks;
    try {
      if (slots) {
        if (me < chunks && claim(me)) (*fn)(me, me + 1);
        for (int64_t c = 0; c < chunks; ++c)
          if (c != me && claim(c)) (*fn)(c, c + 1);
        return;
      }
      for (;;) {
        const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
        if (c >= chunks) break;
        const int64_t b = c * q + std::min(c, r);
        (*fn)(b, b + q + (c < r ? 1 : 0));
      }
    } catch (...) {
      next.store(chunks, std::memory_order_relaxed);  // the others stop at their next chunk
      claimed.store(~uint64_t{0}, std::memory_order_relaxed);  // (slots mode: at their next slot)
      std::lock_guard lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }

  void worker_loop(Worker& w) {
    uint32_t seen = 0;
    for (;;) {
      uint32_t t = w.ticket.load(std::memory_order_acquire);
      if (t == seen) {
        int64_t start = now_ns();
        for (uint32_t spins = 1; (t = w.ticket.load(std::memory_order_acquire)) == seen; ++spins) {
          cpu_relax();
          if (spins % 256 != 0 || now_ns() - start < kSpinNs) continue;
          // Sleep. The seq_cst store/load pair against the caller's ticket store/sleeping load
          // guarantees that one of the two sees the other (no lost wake-up).
          w.sleeping.store(1, std::memory_order_seq_cst);
          if (w.ticket.load(std::memory_order_seq_cst) == seen) w.ticket.wait(seen, std::memory_order_seq_cst);
          w.sleeping.store(0, std::memory_order_relaxed);
          start = now_ns();
        }
      }
      seen = t;
      if (stop.load(std::memory_order_acquire)) return;
      active.fetch_add(1, std::memory_order_seq_cst);
      if (state.load(std::memory_order_seq_cst) == ((static_cast<uint64_t>(t) << 1) | 1)) {
        tl_in_parallel = true;
        run_chunks(w.index);
        tl_in_parallel = false;
      }
      active.fetch_sub(1, std::memory_order_release);
    }
  }

  void hand(Worker& w, uint32_t ticket) {
    w.ticket.store(ticket, std::memory_order_seq_cst);
    if (w.sleeping.load(std::memory_order_seq_cst)) w.ticket.notify_one();
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(std::make_unique<Impl>()) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads_ = num_threads;
  for (int i = 1; i < num_threads; ++i) {
    impl_->workers.push_back(std::make_unique<Worker>());
    Worker* w = impl_->workers.back().get();
    w->index = i;
    w->thread = std::thread([this, w] { impl_->worker_loop(*w); });
  }
}

ThreadPool::~ThreadPool() {
  impl_->stop.store(true, std::memory_order_release);
  for (auto& w : impl_->workers) impl_->hand(*w, ++impl_->seq);
  for (auto& w : impl_->workers) w->thread.join();
}

int ThreadPool::threads_for(double work_ns) const {
  if (num_threads_ <= 1 || !(work_ns >= 2 * kMinShareNs)) return 1;
  return static_cast<int>(std::min<double>(num_threads_, std::floor(work_ns / kMinShareNs)));
}

void ThreadPool::fork_join(int64_t n, int64_t chunks, int workers, const Fn& fn, bool slots) {
  std::unique_lock call_lock(impl_->call_mu, std::try_to_lock);
  if (!call_lock.owns_lock()) {  // another run is using the pool: do it here rather than wait
    fn(0, n);
    return;
  }
  Impl& im = *impl_;
  im.fn = &fn;
  im.n = n;
  im.chunks = chunks;
  im.slots = slots;
  im.next.store(0, std::memory_order_relaxed);
  im.claimed.store(0, std::memory_order_relaxed);
  im.error = nullptr;
  ++im.seq;
  im.state.store((static_cast<uint64_t>(im.seq) << 1) | 1, std::memory_order_seq_cst);  // open
  for (int i = 0; i < workers; ++i) im.hand(*im.workers[i], im.seq);
  tl_in_parallel = true;
  im.run_chunks(0);
  tl_in_parallel = false;
  im.state.store(static_cast<uint64_t>(im.seq) << 1, std::memory_order_seq_cst);  // closed
  for (uint32_t spins = 1; im.active.load(std::memory_order_seq_cst) != 0; ++spins) {
    cpu_relax();
    if (spins % 4096 == 0) std::this_thread::yield();  // a joined worker was descheduled
  }
  im.fn = nullptr;
  if (im.error) {
    std::exception_ptr e = im.error;
    im.error = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::parallel_for(int64_t n, const Fn& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (num_threads_ == 1 || tl_in_parallel || n <= grain) {
    fn(0, n);
    return;
  }
  // Four chunks per thread, each at least `grain` long.
  const int64_t chunks = std::min<int64_t>(n / grain, static_cast<int64_t>(num_threads_) * 4);
  const int workers = static_cast<int>(std::min<int64_t>(num_threads_, chunks)) - 1;
  if (workers <= 0) {
    fn(0, n);
    return;
  }
  fork_join(n, chunks, workers, fn);
}

void ThreadPool::parallel_for_slots(int slots, const Fn& fn) {
  if (slots <= 0) return;
  if (slots == 1 || num_threads_ == 1 || tl_in_parallel) {
    fn(0, slots);
    return;
  }
  if (slots > 64) return parallel_for(slots, fn, 1);  // `claimed` is a 64-bit mask
  fork_join(slots, slots, std::min(slots, num_threads_) - 1, fn, true);
}

void ThreadPool::parallel_for_cost(int64_t n, double item_ns, const Fn& fn) {
  if (n <= 0) return;
  const int t = tl_in_parallel ? 1 : static_cast<int>(std::min<int64_t>(n, threads_for(static_cast<double>(n) * item_ns)));
  if (t <= 1) {
    fn(0, n);
    return;
  }
  // Four chunks per thread for balance, but none much cheaper than the fork-join itself.
  const int64_t min_chunk = item_ns > 0 ? std::max<int64_t>(1, static_cast<int64_t>(std::ceil(1000.0 / item_ns))) : 1;
  const int64_t chunks = std::min<int64_t>(n / min_chunk, 4 * t);
  const int workers = static_cast<int>(std::min<int64_t>(t, chunks)) - 1;
  if (workers <= 0) {
    fn(0, n);
    return;
  }
  fork_join(n, chunks, workers, fn);
}

ThreadPool& ThreadPool::serial() {
  static ThreadPool* pool = new ThreadPool(0);
  return *pool;
}

}  // namespace fusor
