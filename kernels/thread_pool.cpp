#include "kernels/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace fusor {

namespace {
thread_local bool tl_in_parallel = false;
}

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable cv, done_cv;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0, chunk = 1;
  std::atomic<int64_t> next{0};
  int active = 0;
  uint64_t generation = 0;
  bool stop = false;
  std::mutex call_mu;  // one parallel_for at a time per pool

  void run_chunks() {
    for (;;) {
      int64_t b = next.fetch_add(chunk);
      if (b >= n) break;
      (*fn)(b, std::min(n, b + chunk));
    }
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(std::make_unique<Impl>()) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads_ = num_threads;
  for (int i = 1; i < num_threads; ++i) {
    impl_->workers.emplace_back([this] {
      Impl& im = *impl_;
      uint64_t seen = 0;
      for (;;) {
        {
          std::unique_lock lock(im.mu);
          im.cv.wait(lock, [&] { return im.stop || im.generation != seen; });
          if (im.stop) return;
          seen = im.generation;
        }
        tl_in_parallel = true;
        im.run_chunks();
        tl_in_parallel = false;
        {
          std::lock_guard lock(im.mu);
          if (--im.active == 0) im.done_cv.notify_one();
        }
      }
    });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  for (auto& t : impl_->workers) t.join();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (num_threads_ == 1 || tl_in_parallel || n <= grain) {
    fn(0, n);
    return;
  }
  std::unique_lock call_lock(impl_->call_mu, std::try_to_lock);
  if (!call_lock.owns_lock()) {  // another run is using the pool: do it here rather than wait
    fn(0, n);
    return;
  }
  Impl& im = *impl_;
  int64_t chunks = std::min<int64_t>((n + grain - 1) / grain, static_cast<int64_t>(num_threads_) * 4);
  {
    std::lock_guard lock(im.mu);
    im.fn = &fn;
    im.n = n;
    im.chunk = (n + chunks - 1) / chunks;
    im.next = 0;
    im.active = static_cast<int>(im.workers.size());
    ++im.generation;
  }
  im.cv.notify_all();
  tl_in_parallel = true;
  im.run_chunks();
  tl_in_parallel = false;
  std::unique_lock lock(im.mu);
  im.done_cv.wait(lock, [&] { return im.active == 0; });
  im.fn = nullptr;
}

ThreadPool& ThreadPool::serial() {
  static ThreadPool* pool = new ThreadPool(0);
  return *pool;
}

}  // namespace fusor
