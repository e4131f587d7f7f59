#include "engine/exec/memory_planner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace fusor {
namespace {

// The last step at which a value's memory must still hold it: its own last use, or that of any
// view of it (transitively), computed independently of the planner.
std::vector<int> extended_end(const std::vector<PlannedValue>& v) {
  std::vector<int> end(v.size());
  for (size_t i = 0; i < v.size(); ++i) end[i] = v[i].last;
  // Views are defined after their sources; iterate to a fixed point to stay order-independent.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < v.size(); ++i) {
      int s = v[i].alias_of;  // views outside the arena (graph outputs) are copies at run time
      if (s >= 0 && v[i].in_arena && end[i] > end[s]) {
        end[s] = end[i];
        changed = true;
      }
    }
  }
  return end;
}

// Every pair of non-view arena values whose memory overlaps must not be alive at the same time,
// except a value taking over, in place, a candidate input that dies exactly where it is defined.
void expect_no_live_overlap(const std::vector<PlannedValue>& v, const MemoryLayout& m) {
  auto end = extended_end(v);
  for (size_t a = 0; a < v.size(); ++a) {
    if (!v[a].in_arena || v[a].alias_of >= 0) continue;
    ASSERT_GE(m.offset[a], 0) << "value " << a << " was not placed";
    EXPECT_EQ(m.offset[a] % 64, 0);
    EXPECT_LE(static_cast<size_t>(m.offset[a]) + v[a].bytes, m.arena_bytes);
    for (size_t b = a + 1; b < v.size(); ++b) {
      if (!v[b].in_arena || v[b].alias_of >= 0) continue;
      int64_t a0 = m.offset[a], a1 = a0 + static_cast<int64_t>(v[a].bytes);
      int64_t b0 = m.offset[b], b1 = b0 + static_cast<int64_t>(v[b].bytes);
      bool mem = a0 < b1 && b0 < a1;
      bool live = v[a].def <= end[b] && v[b].def <= end[a];
      if (!mem || !live) continue;
      // A candidate may be `from` itself or a view of it (whose memory is from's).
      auto root = [&](int c) {
        while (c >= 0 && v[c].in_arena && v[c].alias_of >= 0) c = v[c].alias_of;
        return c;
      };
      auto handoff = [&](size_t from, size_t to) {
        bool candidate = false;
        for (int c : v[to].inplace_candidates) candidate = candidate || root(c) == static_cast<int>(from);
        return m.inplace[to] && end[from] == v[to].def && v[from].bytes == v[to].bytes && candidate;
      };
      EXPECT_TRUE(handoff(a, b) || handoff(b, a))
          << "values " << a << " [" << v[a].def << "," << end[a] << "] and " << b << " [" << v[b].def << ","
          << end[b] << "] share memory while both alive";
    }
  }
}

TEST(MemoryPlanner, RandomDagsNeverOverlapLiveBuffers) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    int steps = 5 + static_cast<int>(rng() % 40);
    std::vector<PlannedValue> v;
    // One or two outputs per step; inputs are earlier values, chosen at random.
    std::vector<std::vector<int>> consumers_inputs(steps);
    for (int s = 0; s < steps; ++s) {
      int outs = 1 + static_cast<int>(rng() % 2);
      for (int o = 0; o < outs; ++o) {
        PlannedValue p;
        p.def = s;
        p.last = s;
        p.bytes = (rng() % 4 == 0) ? 4096 : 64 * (1 + rng() % 20) - (rng() % 3) * 4;
        p.in_arena = rng() % 10 != 0;  // some graph outputs
        v.push_back(p);
      }
    }
    // Uses: each step reads up to 3 earlier values.
    for (int s = 1; s < steps; ++s) {
      std::vector<int> earlier;
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i].def < s) earlier.push_back(static_cast<int>(i));
      int nin = 1 + static_cast<int>(rng() % 3);
      std::vector<int> ins;
      for (int k = 0; k < nin; ++k) ins.push_back(earlier[rng() % earlier.size()]);
      for (int i : ins) v[i].last = std::max(v[i].last, s);
      for (size_t o = 0; o < v.size(); ++o) {
        if (v[o].def != s) continue;
        int pick = rng() % 4;
        if (pick == 0) {
          v[o].alias_of = ins[0];  // a view of the first input
          v[o].bytes = v[ins[0]].bytes;
        } else if (pick == 1) {
          v[o].inplace_candidates = ins;
          if (rng() % 2) v[o].bytes = v[ins[0]].bytes;
        }
      }
    }
    // A value read after its view's last use, etc.: lifetimes stay as generated.
    MemoryLayout m = plan_memory(v);
    expect_no_live_overlap(v, m);
    if (HasFailure()) {
      ADD_FAILURE() << "trial " << trial;
      return;
    }
    EXPECT_LE(m.arena_bytes, m.naive_bytes + 64 * v.size());
  }
}

TEST(MemoryPlanner, ReusesBuffersOfDeadValues) {
  // A chain: value i is defined at step i and read at step i+1.
  std::vector<PlannedValue> v;
  for (int i = 0; i < 10; ++i) v.push_back(PlannedValue{i, i + 1, 1000, true, -1, {}});
  MemoryLayout m = plan_memory(v);
  expect_no_live_overlap(v, m);
  EXPECT_EQ(m.naive_bytes, 10000u);
  // Only two are alive at a time: two 1024-byte slots suffice.
  EXPECT_EQ(m.arena_bytes, 2048u);
  EXPECT_EQ(m.offset[0], m.offset[2]);
}

TEST(MemoryPlanner, InPlaceTakesOverADyingInputOfEqualSize) {
  std::vector<PlannedValue> v = {
      {0, 1, 512, true, -1, {}},   // x, read by step 1 only
      {1, 2, 512, true, -1, {0}},  // y = f(x) in place
      {2, 3, 512, true, -1, {1}},  // z = g(y) in place: a chain
  };
  MemoryLayout m = plan_memory(v);
  expect_no_live_overlap(v, m);
  EXPECT_TRUE(m.inplace[1]);
  EXPECT_TRUE(m.inplace[2]);
  EXPECT_EQ(m.offset[0], m.offset[1]);
  EXPECT_EQ(m.offset[1], m.offset[2]);
  EXPECT_EQ(m.arena_bytes, 512u);
  EXPECT_EQ(m.num_inplace, 2);
}

TEST(MemoryPlanner, NoInPlaceWhenTheInputLivesOnOrSizesDiffer) {
  std::vector<PlannedValue> v = {
      {0, 3, 512, true, -1, {}},   // x, read again at step 3
      {1, 2, 512, true, -1, {0}},  // y = f(x): x still alive
      {0, 1, 256, true, -1, {}},   // w, dies at step 1
      {1, 3, 512, true, -1, {2}},  // u = h(w): sizes differ
  };
  MemoryLayout m = plan_memory(v);
  expect_no_live_overlap(v, m);
  EXPECT_FALSE(m.inplace[1]);
  EXPECT_FALSE(m.inplace[3]);
  EXPECT_NE(m.offset[0], m.offset[1]);
}

TEST(MemoryPlanner, ViewsKeepTheirSourceAlive) {
  std::vector<PlannedValue> v = {
      {0, 1, 1024, true, -1, {}},  // x, last read at step 1 (by the view's producer)
      {1, 5, 1024, true, 0, {}},   // view of x, read until step 5
      {2, 3, 1024, true, -1, {}},  // z, alive while the view is: must not take x's memory
  };
  MemoryLayout m = plan_memory(v);
  expect_no_live_overlap(v, m);
  EXPECT_TRUE(m.is_view[1]);
  EXPECT_EQ(m.offset[1], m.offset[0]);
  EXPECT_NE(m.offset[2], m.offset[0]);
  EXPECT_EQ(m.naive_bytes, 2048u);  // the view takes no space
}

TEST(MemoryPlanner, ViewOfAnOutsideValueIsOutside) {
  std::vector<PlannedValue> v = {
      {0, 2, 1024, false, -1, {}},  // a graph output
      {1, 2, 1024, true, 0, {}},    // a view of it
  };
  MemoryLayout m = plan_memory(v);
  EXPECT_EQ(m.offset[0], -1);
  EXPECT_EQ(m.offset[1], -1);
  EXPECT_EQ(m.arena_bytes, 0u);
}

TEST(MemoryPlanner, BestFitPicksTheSmallestGapThatFits) {
  // Long-lived A, C, E interleaved with short-lived B and D: once B and D die they leave gaps of
  // 4096 and 1024 bytes between live buffers; F (1000 bytes) must take the 1024-byte gap.
  std::vector<PlannedValue> v = {
      {0, 9, 8192, true, -1, {}},  // A
      {0, 1, 4096, true, -1, {}},  // B
      {0, 9, 2048, true, -1, {}},  // C
      {0, 1, 1024, true, -1, {}},  // D
      {0, 9, 1010, true, -1, {}},  // E (placed after D, before F: sizes decide the order)
      {2, 3, 1000, true, -1, {}},  // F
  };
  MemoryLayout m = plan_memory(v);
  expect_no_live_overlap(v, m);
  EXPECT_EQ(m.offset[5], m.offset[3]);
  EXPECT_EQ(m.arena_bytes, 8192u + 4096 + 2048 + 1024 + 1024);
}

}  // namespace
}  // namespace fusor
