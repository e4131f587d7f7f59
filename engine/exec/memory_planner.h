// Static memory planning: every intermediate tensor gets an offset in one arena.
//
// Input: one PlannedValue per tensor, with its lifetime in execution steps (the step that defines
// it and the last step that reads it, both inclusive: an output is written while the inputs of
// the same step are still being read, so [def, last] intervals that touch must not share memory).
//
// - Views (alias_of) take no space; they keep their source's buffer alive until their own last
//   use. A view of a value that is not in the arena is not in the arena either.
// - In-place: a value may take over the buffer of one of its inplace_candidates (an input of its
//   defining step) when that buffer's lifetime, views included, ends exactly at this step, the
//   byte sizes are equal and no other output of the step took it already.
// - The resulting buffers are placed greedily, largest first, each at the best-fitting gap among
//   the already placed buffers whose lifetimes overlap its own (smallest gap that fits, else on
//   top of them). Offsets are aligned to `alignment`.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusor {

struct PlannedValue {
  int def = 0;        // step that writes it
  int last = 0;       // last step that reads it (>= def)
  size_t bytes = 0;
  bool in_arena = true;           // false: graph inputs, constants, graph outputs, captures
  int alias_of = -1;              // index of the value this is a view of
  std::vector<int> inplace_candidates;  // indices of values whose buffer it may reuse
};

struct MemoryLayout {
  // Per value: the arena offset, or -1 when not in the arena. Views get their source's offset.
  std::vector<int64_t> offset;
  // Per value: the bytes available at offset (the buffer's planned size); 0 when not placed.
  std::vector<size_t> capacity;
  // Per value: the buffer (group) index, -1 when not in the arena. Values sharing a buffer are
  // views of one another or in-place successors.
  std::vector<int> buffer;
  // Per value: whether it reuses an input's buffer in place.
  std::vector<char> inplace;
  // Per value: whether it is a view placed on its source's arena buffer (takes no space).
  std::vector<char> is_view;
  size_t arena_bytes = 0;   // high-water mark of the placement
  size_t naive_bytes = 0;   // sum of the bytes of every in-arena non-view value (no reuse)
  int num_buffers = 0;
  int num_inplace = 0;
};

MemoryLayout plan_memory(const std::vector<PlannedValue>& values, size_t alignment = 64);

}  // namespace fusor
