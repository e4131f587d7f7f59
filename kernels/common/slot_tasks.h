// Tasks split into contiguous per-slot ranges, with stealing: for ThreadPool::parallel_for_slots,
// each slot running its share of a task list (slot s on thread s, so on the same core every op).
//
// Contract: SlotTasks(n, slots) divides tasks [0, n) into `slots` contiguous ranges (lengths
// differing by at most one). run(slot, f) calls f(task) for the tasks of its own range in order,
// then takes what is left of the other ranges; every task runs exactly once over all run() calls,
// whichever threads make them and however late (a slot nobody runs is taken by the others). Why:
// consecutive ops of a CNN split their rows the same way, so slot s finds in its own core's cache
// the rows it wrote in the previous op (one shared counter interleaves the tasks over the cores,
// and each then reads half of its input from the other core's cache).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

namespace fusor {

class SlotTasks {
 public:
  SlotTasks(int64_t n, int slots) : n_(n), slots_(std::max(1, slots)), next_(new Counter[static_cast<size_t>(slots_)]) {
    for (int s = 0; s < slots_; ++s) next_[s].v.store(begin(s), std::memory_order_relaxed);
  }

  template <class F>
  void run(int slot, F&& f) {
    for (int k = 0; k < slots_; ++k) {
      const int s = (slot + k) % slots_;
      const int64_t end = begin(s + 1);
      for (int64_t t = next_[s].v.fetch_add(1, std::memory_order_relaxed); t < end;
           t = next_[s].v.fetch_add(1, std::memory_order_relaxed))
        f(t);
    }
  }

 private:
  struct alignas(64) Counter {
    std::atomic<int64_t> v{0};
  };
  int64_t begin(int s) const {
    const int64_t q = n_ / slots_, r = n_ % slots_;
    return s * q + std::min<int64_t>(s, r);
  }

  int64_t n_;
  int slots_;
  std::unique_ptr<Counter[]> next_;
};

}  // namespace fusor
