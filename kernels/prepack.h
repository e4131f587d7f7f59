// Prepacked constants: read-only buffers a kernel derives once from its constant inputs (GEMM
// panels, reordered or transformed filters), which a session image (issue 17) stores so that a
// session restored from the image maps them instead of computing them again.
//
// A kernel asks through its KernelInfo (kernels/kernel.h), at creation, never in compute():
//
//   PrepackedBuffer buf = info.prepacked("w", bytes, [&](void* dst) { ...write bytes bytes... });
//
// On a fresh session `fill` runs at once, into new 64-byte aligned memory. On a session restored
// from an image that holds a buffer of this kernel, name and size, the bytes come from the image
// (memory-mapped, shared between processes) and `fill` is not called. The kernel never knows which.
//
// Contract (a kernel that breaks it computes wrong answers on a restored session):
// 1. `fill(dst)` writes all `bytes` bytes (dst is 64-byte aligned and uninitialized). It is a pure
//    function of the node: its attributes, its constant inputs, its statically known input types
//    and the instruction set the kernel chose. The same node must give the same bytes, bit for bit.
// 2. `bytes` follows from shapes, attributes and the ISA only, never from the constant's values.
//    A stored buffer of another size is not used (fill runs instead).
// 3. `name` tells the node's buffers apart ("b", "w.g3") and must spell every run-time choice
//    that changes the layout and is not fixed by the image's identity. An image is tied to the
//    engine build (any code change is another image) and the CPU's features, but NOT to
//    FUSOR_ISA, FUSOR_KERNELS or the thread count: put the ISA (or tile) in the name when the
//    layout depends on it (PackedA/PackedB in kernels/gemm/gemm.h do: "b/avx512_14x32").
//    Kernels a kernel creates from its own KernelInfo (fallbacks, inner ops) share its names:
//    give their buffers other names.
// 4. The buffer is read-only (an image is mapped PROT_READ: a write crashes).
// 5. Keep the PrepackedBuffer (or a pointer made with share<T>()) as long as the data is used: it
//    owns the memory (a heap block or a reference to the mapped image).
// 6. Ask only for constant inputs (KernelInfo::const_inputs); a non-constant weight is packed per
//    run from the context's scratch as before.
// A kernel created outside a session (tests, benchmarks) gets a default Prepacker: fill always.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace fusor {

// Read-only bytes with shared ownership of their storage.
class PrepackedBuffer {
 public:
  PrepackedBuffer() = default;
  PrepackedBuffer(std::shared_ptr<const void> owner, const void* data, size_t bytes)
      : owner_(std::move(owner)), data_(data), size_(bytes) {}

  bool empty() const { return data_ == nullptr; }
  const void* data() const { return data_; }
  size_t size() const { return size_; }
  template <class T>
  const T* as() const { return static_cast<const T*>(data_); }
  // A pointer to the bytes (plus `offset`) that keeps their storage alive.
  template <class T>
  std::shared_ptr<const T> share(size_t offset = 0) const {
    return std::shared_ptr<const T>(owner_, reinterpret_cast<const T*>(static_cast<const char*>(data_) + offset));
  }

 private:
  std::shared_ptr<const void> owner_;
  const void* data_ = nullptr;
  size_t size_ = 0;
};

// Writes a buffer's bytes into dst (64-byte aligned, the size given with it).
using PrepackFill = std::function<void(void* dst)>;

// Where prepacked buffers come from, implemented by the engine (engine/exec/prepack_sources.h):
// a fresh session fills and records them for the image, a restored one maps them from it.
class PrepackSource {
 public:
  virtual ~PrepackSource() = default;
  // Buffer `name` of kernel `kernel_id` (unique per node in a session, given by the planner).
  virtual PrepackedBuffer get(uint64_t kernel_id, std::string_view name, size_t bytes, const PrepackFill& fill) = 0;
};

// New 64-byte aligned memory of `bytes` bytes (at least one), filled by `fill`.
PrepackedBuffer fill_fresh(size_t bytes, const PrepackFill& fill);

// A node's access to its source. Default-constructed (no source): fill_fresh.
struct Prepacker {
  PrepackSource* source = nullptr;
  uint64_t kernel_id = 0;
  PrepackedBuffer get(std::string_view name, size_t bytes, const PrepackFill& fill) const {
    return source ? source->get(kernel_id, name, bytes, fill) : fill_fresh(bytes, fill);
  }
};

}  // namespace fusor
