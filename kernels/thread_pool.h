// A fixed pool of worker threads created once per session, for intra-op parallelism.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

namespace fusor {

class ThreadPool {
 public:
  // num_threads counts the calling thread: 1 means no workers. 0 means all cores.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return num_threads_; }
  // Calls fn(begin, end) over disjoint chunks covering [0, n), on the workers and the caller,
  // and returns when all are done. Chunks are at least `grain` long. Nested calls run serially.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1);

  // A process-wide pool with all cores, for code that has no session (tests, constant folding).
  static ThreadPool& serial();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int num_threads_;
};

}  // namespace fusor
