// A small pool of heap buffers that are handed out and come back on their own: a buffer is free
// again when nobody but the pool holds it (use_count() == 1). Graph outputs and subgraph outputs
// are allocated from it, so a caller that drops the previous run's outputs (or a Loop that drops
// the previous iteration's values) gets the same memory back without a system allocation.
//
// Not thread-safe: each run context owns one. Holders may drop their references from any thread
// (shared_ptr's count is atomic; a count of 1 means only the pool can still touch the buffer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/ir/tensor.h"

namespace fusor {

class BufferPool {
 public:
  explicit BufferPool(size_t max_buffers = 64) : max_buffers_(max_buffers) {}
  // A buffer of at least `bytes`; counts a system allocation in *allocs when it has to make one.
  std::shared_ptr<Buffer> acquire(size_t bytes, int64_t* allocs);
  size_t size() const { return buffers_.size(); }

 private:
  size_t max_buffers_;
  std::vector<std::shared_ptr<Buffer>> buffers_;
};

}  // namespace fusor
