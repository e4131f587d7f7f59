#include "engine/exec/memory_planner.h"

#include <algorithm>
#include <numeric>

#include "core/util/error.h"

namespace fusor {

namespace {

struct Group {
  int start = 0, end = 0;
  size_t bytes = 0;
  int taken_at = -1;  // step at which an in-place successor took it (one per step)
  int64_t offset = -1;
};

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

}  // namespace

MemoryLayout plan_memory(const std::vector<PlannedValue>& values, size_t alignment) {
  const int n = static_cast<int>(values.size());
  MemoryLayout out;
  out.offset.assign(n, -1);
  out.capacity.assign(n, 0);
  out.buffer.assign(n, -1);
  out.inplace.assign(n, 0);
  out.is_view.assign(n, 0);

  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  // By definition step; within a step, views first, so a view that keeps an input alive past
  // this step is seen before an output considers reusing that input in place.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (values[a].def != values[b].def) return values[a].def < values[b].def;
    return (values[a].alias_of >= 0) > (values[b].alias_of >= 0);
  });

  std::vector<Group> groups;
  for (int v : order) {
    const PlannedValue& pv = values[v];
    if (pv.last < pv.def) throw_internal("memory planner: value " + std::to_string(v) + " dies before it is defined");
    if (!pv.in_arena) continue;
    if (pv.alias_of >= 0) {
      if (pv.alias_of >= n) throw_internal("memory planner: alias of an unknown value");
      int g = out.buffer[pv.alias_of];
      if (g < 0) continue;  // a view of something outside the arena
      out.buffer[v] = g;
      out.is_view[v] = 1;
      groups[g].end = std::max(groups[g].end, pv.last);
      continue;
    }
    out.naive_bytes += pv.bytes;
    int chosen = -1;
    for (int c : pv.inplace_candidates) {
      if (c < 0 || c >= n) continue;
      int g = out.buffer[c];
      if (g < 0 || groups[g].taken_at == pv.def || groups[g].end != pv.def || groups[g].bytes != pv.bytes) continue;
      chosen = g;
      break;
    }
    if (chosen >= 0) {
      groups[chosen].taken_at = pv.def;
      groups[chosen].end = pv.last;
      out.buffer[v] = chosen;
      out.inplace[v] = 1;
      ++out.num_inplace;
      continue;
    }
    out.buffer[v] = static_cast<int>(groups.size());
    groups.push_back(Group{pv.def, pv.last, pv.bytes, -1, -1});
  }
  // Greedy by size: largest buffers first, each at the best-fitting gap.
  std::vector<int> gorder(groups.size());
  std::iota(gorder.begin(), gorder.end(), 0);
  std::stable_sort(gorder.begin(), gorder.end(), [&](int a, int b) {
    if (groups[a].bytes != groups[b].bytes) return groups[a].bytes > groups[b].bytes;
    return groups[a].start < groups[b].start;
  });
  std::vector<int> placed;
  std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of overlapping placed groups
  for (int g : gorder) {
    Group& gr = groups[g];
    size_t size = align_up(std::max<size_t>(gr.bytes, 1), alignment);
    busy.clear();
    for (int p : placed) {
      const Group& o = groups[p];
      if (o.start <= gr.end && gr.start <= o.end)
        busy.emplace_back(o.offset, o.offset + static_cast<int64_t>(align_up(std::max<size_t>(o.bytes, 1), alignment)));
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [b, e] : busy) {
      int64_t gap = b - cursor;
      if (gap >= static_cast<int64_t>(size) && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, e);
    }
    gr.offset = best >= 0 ? best : cursor;
    out.arena_bytes = std::max(out.arena_bytes, static_cast<size_t>(gr.offset) + size);
    placed.push_back(g);
  }
  for (int v = 0; v < n; ++v) {
    int g = out.buffer[v];
    if (g < 0) continue;
    out.offset[v] = groups[g].offset;
    out.capacity[v] = groups[g].bytes;
  }
  out.num_buffers = static_cast<int>(groups.size());
  return out;
}

}  // namespace fusor
