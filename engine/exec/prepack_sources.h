// The engine's sources of prepacked constants (kernels/prepack.h has the kernels' side):
//
// - RecordingPrepackSource fills every buffer fresh, as a kernel without a source would, and keeps
//   it with its (kernel id, name): a session built on a cache miss hands them to the session
//   image, so the next session maps them.
// - StoredPrepackSource serves buffers from a table (a session restored from an image: the bytes
//   are the mapped image's). A buffer it does not hold with the asked size (an image written by
//   a kernel that packs differently under FUSOR_ISA/FUSOR_GEMM_TILE, say) is filled fresh and
//   counted; it never hands out bytes of another size.
// Both are called while a plan is built (one thread) but lock anyway; they outlive the plan's
// kernels only through the buffers they hand out (which own their memory).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kernels/prepack.h"

namespace fusor {

struct PrepackRecord {
  uint64_t kernel_id = 0;
  std::string name;
  PrepackedBuffer buffer;
};

class RecordingPrepackSource : public PrepackSource {
 public:
  PrepackedBuffer get(uint64_t kernel_id, std::string_view name, size_t bytes, const PrepackFill& fill) override;
  // In the order they were asked for.
  std::vector<PrepackRecord> records() const;

 private:
  mutable std::mutex mu_;
  std::vector<PrepackRecord> records_;
};

class StoredPrepackSource : public PrepackSource {
 public:
  void add(uint64_t kernel_id, std::string name, PrepackedBuffer buffer);
  PrepackedBuffer get(uint64_t kernel_id, std::string_view name, size_t bytes, const PrepackFill& fill) override;
  size_t served() const;
  size_t filled() const;  // asked for but not held: filled fresh

 private:
  mutable std::mutex mu_;
  std::map<std::pair<uint64_t, std::string>, PrepackedBuffer, std::less<>> table_;
  size_t served_ = 0, filled_ = 0;
};

}  // namespace fusor
