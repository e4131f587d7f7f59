// A fixed pool of worker threads created once per session, for intra-op parallelism.
//
// Contract (for kernel writers):
// - parallel_for(n, fn, grain) calls fn(begin, end) over disjoint chunks covering [0, n), on the
//   workers and the calling thread, and returns when every chunk is done. Chunks are at least
//   `grain` items long, about four per thread, their lengths differ by at most one item and the
//   longer ones come first (10 items over 2 threads: 2, 2, 1 x 6, i.e. 5 each, not 2 x 5 chunks
//   split 6 : 4); chunks are claimed dynamically, so a thread that arrives late (or never) only
//   takes fewer chunks: fn must not assume which thread runs what.
// - It runs fn(0, n) on the caller, with no fork-join, when n <= grain, when the pool has one
//   thread, when called from inside another parallel_for (nested loops run serially), or when
//   another run is using the pool at that moment (a concurrent Executor::run).
// - The cost model: a fork-join costs about a microsecond even with spinning workers, and a split
//   that gives a thread less than kMinShareNs of work loses to one thread. threads_for(work_ns)
//   says how many threads a loop of that total single-thread time should use (1: do not split);
//   parallel_for_cost(n, item_ns, fn) splits only over that many threads, with chunks of equal
//   cost. Kernels that split by "slots" (one chunk per thread, work taken from their own atomic
//   counter: the GEMM and conv cores) use threads_for to pick the slot count.
//   Rough rates on one core for estimates: ~50 GFLOP/s (GEMM-like), ~1 ns per 4 floats streamed
//   (elementwise, copies), ~5 ns per transcendental call in reference loops.
// - Workers spin (with pause) for about kSpinNs after their last job before sleeping on a futex,
//   as ORT's and pthreadpool's workers do: back-to-back parallel ops then start in ~100 ns instead
//   of a wake-up's ~10-50 µs. The caller takes chunks too, and when they are gone it waits only
//   for the workers that joined the job (they are running): a worker the OS has not scheduled
//   yet (a busy machine) finds the job closed and never holds the caller up.
// - fn must not throw: an exception escaping fn on a worker terminates the process; on the
//   caller it propagates after the workers finished.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace fusor {

class ThreadPool {
 public:
  using Fn = std::function<void(int64_t, int64_t)>;

  // A loop split over t threads should give each at least this much single-thread time (ns).
  static constexpr double kMinShareNs = 8000;
  // How long an idle worker spins before it sleeps (ns).
  static constexpr int64_t kSpinNs = 300'000;

  // num_threads counts the calling thread: 1 means no workers. 0 means all cores.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }

  // Threads worth using for a loop whose whole single-thread time is about work_ns (1..num_threads()).
  int threads_for(double work_ns) const;

  // See the contract above.
  void parallel_for(int64_t n, const Fn& fn, int64_t grain = 1);
  // Splits [0, n) over threads_for(n * item_ns) threads (serially when that is 1).
  void parallel_for_cost(int64_t n, double item_ns, const Fn& fn);
  // One chunk per slot: fn(s, s + 1) for each slot s in [0, slots), slot s run by thread s (the
  // caller is thread 0, worker i thread i) unless that thread is late or there is none, then by
  // whichever thread finds it unclaimed. Consecutive calls with the same slot count thus give slot s
  // the same core, and its cache (see kernels/common/slot_tasks.h). fn(0, slots) on the caller
  // where parallel_for would run serially; more than 64 slots are plain parallel_for chunks.
  void parallel_for_slots(int slots, const Fn& fn);

  // A process-wide pool with all cores, for code that has no session (tests, constant folding).
  static ThreadPool& serial();

 private:
  // Runs fn over [0, n) in `chunks` chunks (lengths differing by at most one, the longer first) on
  // the caller and `workers` workers.
  void fork_join(int64_t n, int64_t chunks, int workers, const Fn& fn, bool slots = false);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  int num_threads_;
};

}  // namespace fusor
