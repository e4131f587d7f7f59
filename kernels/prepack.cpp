#include "kernels/prepack.h"

#include <algorithm>
#include <new>

namespace fusor {

PrepackedBuffer fill_fresh(size_t bytes, const PrepackFill& fill) {
  const size_t n = std::max<size_t>(bytes, 1);
  void* p = ::operator new(n, std::align_val_t(64));
  std::shared_ptr<const void> owner(p, [](const void* q) { ::operator delete(const_cast<void*>(q), std::align_val_t(64)); });
  if (fill) fill(p);
  return PrepackedBuffer(std::move(owner), p, bytes);
}

}  // namespace fusor
