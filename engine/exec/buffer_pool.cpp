#include "engine/exec/buffer_pool.h"

namespace fusor {

std::shared_ptr<Buffer> BufferPool::acquire(size_t bytes, int64_t* allocs) {
  bytes = (bytes + 63) / 64 * 64;
  if (bytes == 0) bytes = 64;
  int best = -1, smallest_free = -1;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    const auto& b = buffers_[i];
    if (b.use_count() != 1) continue;
    if (b->size() >= bytes && (best < 0 || b->size() < buffers_[best]->size())) best = static_cast<int>(i);
    if (smallest_free < 0 || b->size() < buffers_[smallest_free]->size()) smallest_free = static_cast<int>(i);
  }
  if (best >= 0) return buffers_[best];
  if (allocs) ++*allocs;
  auto fresh = make_aligned_buffer(bytes, false);
  if (buffers_.size() < max_buffers_) buffers_.push_back(fresh);
  else if (smallest_free >= 0) buffers_[smallest_free] = fresh;  // a free buffer too small: replace it
  return fresh;
}

}  // namespace fusor
