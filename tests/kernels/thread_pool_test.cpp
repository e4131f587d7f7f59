// The intra-op pool (kernels/thread_pool.h): every index is covered exactly once, chunks respect
// the grain and differ by at most one item (the longer first), nested and concurrent calls, the
// cost model's serial cases run on the caller with one chunk, exceptions reach the caller, and
// sleeping workers wake up for the next job; slots run once each, mostly on their own thread, and
// SlotTasks (kernels/common/slot_tasks.h) runs a slot's own range first and every task once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/common/slot_tasks.h"
#include "kernels/thread_pool.h"

namespace fusor {
namespace {

// Runs one parallel_for and checks coverage and chunk sizes.
void check_cover(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  std::atomic<int64_t> short_chunks{0};
  pool.parallel_for(n, [&](int64_t b, int64_t e) {
    ASSERT_LT(b, e);
    if (e - b < grain && e != n) ++short_chunks;
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  }, grain);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " index " << i;
  EXPECT_EQ(short_chunks.load(), 0) << "n " << n << " grain " << grain;
}

TEST(ThreadPool, CoversEveryIndexOnce) {
  for (int threads : {1, 2, 3, 4}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 3, 7, 64, 1000, 100003})
      for (int64_t grain : {1, 5, 4096}) check_cover(pool, n, grain);
  }
}

TEST(ThreadPool, ChunksDifferByAtMostOneLongerFirst) {
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    for (int64_t n : {5, 9, 10, 13, 60, 1001})
      for (int64_t grain : {1, 2}) {
        std::mutex mu;
        std::vector<std::pair<int64_t, int64_t>> chunks;
        pool.parallel_for(n, [&](int64_t b, int64_t e) {
          std::lock_guard lock(mu);
          chunks.emplace_back(b, e);
        }, grain);
        std::sort(chunks.begin(), chunks.end());
        ASSERT_FALSE(chunks.empty());
        EXPECT_LE(static_cast<int64_t>(chunks.size()), 4 * threads) << "n " << n;
        for (size_t i = 0; i < chunks.size(); ++i) {
          const int64_t len = chunks[i].second - chunks[i].first;
          EXPECT_GE(len, grain) << "n " << n;
          EXPECT_LE(len - (chunks.back().second - chunks.back().first), 1) << "n " << n;
          if (i > 0) {
            EXPECT_LE(len, chunks[i - 1].second - chunks[i - 1].first) << "n " << n << " chunk " << i;
          }
        }
      }
  }
}

TEST(ThreadPool, UsesTheWorkers) {
  ThreadPool pool(2);
  std::mutex mu;
  std::set<std::thread::id> seen;
  // Chunks long enough that the worker takes some of them even if it has to wake up first.
  for (int round = 0; round < 20 && seen.size() < 2; ++round)
    pool.parallel_for(8, [&](int64_t, int64_t) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      std::lock_guard lock(mu);
      seen.insert(std::this_thread::get_id());
    });
  EXPECT_EQ(seen.size(), 2u);
}

TEST(ThreadPool, WorkersWakeAfterSleeping) {
  ThreadPool pool(2);
  for (int round = 0; round < 3; ++round) {
    // Longer than the spin: the worker has gone to sleep on its futex.
    std::this_thread::sleep_for(std::chrono::nanoseconds(ThreadPool::kSpinNs) + std::chrono::milliseconds(3));
    std::atomic<int64_t> sum{0};
    std::mutex mu;
    std::set<std::thread::id> seen;
    // 8 chunks of 5 ms: the woken worker has ~40 ms to be scheduled and take one, even on a
    // loaded machine (with 1 ms chunks it once missed all 8 while two compiles ran beside it).
    pool.parallel_for(16, [&](int64_t b, int64_t e) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      for (int64_t i = b; i < e; ++i) sum += i;
      std::lock_guard lock(mu);
      seen.insert(std::this_thread::get_id());
    });
    EXPECT_EQ(sum.load(), 120);
    EXPECT_EQ(seen.size(), 2u) << "round " << round;
  }
}

TEST(ThreadPool, SlotsRunOnceEach) {
  for (int threads : {1, 2, 3, 4})
    for (int slots : {1, 2, 3, 5, 64, 70}) {
      ThreadPool pool(threads);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(slots));
      pool.parallel_for_slots(slots, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
      });
      for (int i = 0; i < slots; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << threads << " threads, slot " << i;
    }
}

TEST(ThreadPool, SlotsStayOnTheirThread) {
  // Slot 0 on the caller, slot 1 on the worker: the mapping that gives consecutive ops the same
  // rows on the same core. A worker that is late may lose its slot to the caller (allowed), so
  // the test asks for most rounds, with slots long enough that the worker arrives in time.
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  int kept = 0;
  for (int round = 0; round < 20; ++round) {
    std::thread::id ran[2];
    pool.parallel_for_slots(2, [&](int64_t b, int64_t e) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      for (int64_t i = b; i < e; ++i) ran[i] = std::this_thread::get_id();
    });
    kept += ran[0] == caller && ran[1] != caller;
  }
  EXPECT_GE(kept, 10);
}

TEST(SlotTasks, OwnRangeFirstThenTheOthers) {
  // 10 tasks over 3 slots: ranges [0, 4), [4, 7), [7, 10). Run one slot alone: its own range in
  // order, then what is left of the next slots'.
  for (int first : {0, 1, 2}) {
    SlotTasks tasks(10, 3);
    std::vector<int64_t> order;
    tasks.run(first, [&](int64_t t) { order.push_back(t); });
    const std::vector<std::vector<int64_t>> want = {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                    {4, 5, 6, 7, 8, 9, 0, 1, 2, 3},
                                                    {7, 8, 9, 0, 1, 2, 3, 4, 5, 6}};
    EXPECT_EQ(order, want[static_cast<size_t>(first)]) << "slot " << first;
    tasks.run((first + 1) % 3, [&](int64_t t) { ADD_FAILURE() << "task " << t << " ran twice"; });
  }
  // Over threads: every task once.
  ThreadPool pool(2);
  for (int64_t n : {0, 1, 5, 97}) {
    SlotTasks tasks(n, 2);
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    pool.parallel_for_slots(2, [&](int64_t b, int64_t e) {
      for (int64_t s = b; s < e; ++s) tasks.run(static_cast<int>(s), [&](int64_t t) { ++hits[static_cast<size_t>(t)]; });
    });
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n " << n << " task " << i;
  }
}

TEST(ThreadPool, NestedCallsRunSerially) {
  ThreadPool pool(2);
  std::atomic<int64_t> total{0};
  pool.parallel_for(4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      int calls = 0;
      pool.parallel_for(1000, [&](int64_t ib, int64_t ie) {
        ++calls;
        total += ie - ib;
      });
      EXPECT_EQ(calls, 1);
    }
  });
  EXPECT_EQ(total.load(), 4000);
}

TEST(ThreadPool, ConcurrentCallersBothFinish) {
  ThreadPool pool(2);
  std::atomic<int64_t> a{0}, b{0};
  std::thread other([&] {
    for (int r = 0; r < 200; ++r) pool.parallel_for(1000, [&](int64_t s, int64_t e) { a += e - s; });
  });
  for (int r = 0; r < 200; ++r) pool.parallel_for(1000, [&](int64_t s, int64_t e) { b += e - s; });
  other.join();
  EXPECT_EQ(a.load(), 200000);
  EXPECT_EQ(b.load(), 200000);
}

TEST(ThreadPool, CostModel) {
  ThreadPool one(1), two(2), four(4);
  EXPECT_EQ(one.threads_for(1e9), 1);
  EXPECT_EQ(two.threads_for(0), 1);
  EXPECT_EQ(two.threads_for(ThreadPool::kMinShareNs), 1);  // half of it each would lose
  EXPECT_EQ(two.threads_for(2 * ThreadPool::kMinShareNs), 2);
  EXPECT_EQ(two.threads_for(1e9), 2);
  EXPECT_EQ(four.threads_for(3 * ThreadPool::kMinShareNs), 3);
  EXPECT_EQ(four.threads_for(1e9), 4);

  // Too small to split: one call on the caller.
  const std::thread::id me = std::this_thread::get_id();
  int calls = 0;
  two.parallel_for_cost(1000, 1.0, [&](int64_t b, int64_t e) {
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 1000);
    EXPECT_EQ(std::this_thread::get_id(), me);
  });
  EXPECT_EQ(calls, 1);
  // Large enough: still every index once, in more than one chunk.
  std::vector<std::atomic<int>> hits(100000);
  std::atomic<int> chunks{0};
  two.parallel_for_cost(100000, 10.0, [&](int64_t b, int64_t e) {
    ++chunks;
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_GT(chunks.load(), 1);
}

TEST(ThreadPool, ExceptionsReachTheCaller) {
  ThreadPool pool(2);
  for (int round = 0; round < 10; ++round) {
    EXPECT_THROW(pool.parallel_for(64, [&](int64_t b, int64_t) {
      if (b >= 32) throw std::runtime_error("chunk failed");
    }), std::runtime_error);
    check_cover(pool, 1000, 1);  // the pool still works
    // Slots: a throw on the caller (a worker's would end the process, as the contract says).
    const std::thread::id caller = std::this_thread::get_id();
    EXPECT_THROW(pool.parallel_for_slots(2, [&](int64_t, int64_t) {
      if (std::this_thread::get_id() == caller) throw std::runtime_error("slot failed");
    }), std::runtime_error);
    std::atomic<int> ran{0};
    pool.parallel_for_slots(2, [&](int64_t b, int64_t e) { ran += static_cast<int>(e - b); });
    EXPECT_EQ(ran.load(), 2);
  }
}

}  // namespace
}  // namespace fusor
