// The session-image container (issue 17): one file laid out to be memory-mapped and used in place.
//
// Layout (little-endian):
//   [0, 4096)         header: magic "FUSORIMG", layout version, file size, the identity text
//                     (engine version + build, CPU features, layout version), a section table
//                     {kind, offset, size, XXH3-64 of the section}, and the header's own checksum.
//   META section      at 4096: the FlatBuffer of cache/image.fbs (graph, facts, plan), verified
//                     with FlatBuffers' verifier before any field is read.
//   DATA section      page-aligned: tensor bytes and prepacked buffers, each 64-byte aligned, so
//                     a mapped image serves them to kernels with no copy.
//
// Writing: write_image_tmp writes DIR/tmp-PID-N.part and fsyncs it; publish_image renames it to its
// content name (the XXH3-128 of the header, which covers every section's checksum) and fsyncs
// the folder. A process killed before the rename leaves a .part file that is never read (the
// store sweeps them); the store renames inside its write transaction (cache/store.h).
//
// Opening checks, always: the file size, magic, layout version, header checksum, identity (an
// image of another engine build, CPU or layout is refused: a miss, never a crash), section bounds
// and the META checksum (cache/image_model.h then runs FlatBuffers' verifier over META before
// reading a field). The DATA checksum (the weights: tens of megabytes) is checked by `fusor cache
// verify` and by ImageCheck::Full, not on every hit: hashing it would cost a hit more than
// everything else together; a hit maps it unread, and the kernels touch what they use.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fusor::cache {

// Bumped whenever the container, the schema's meaning or a prepacked layout outside the engine
// build changes (the engine build identity is part of the identity already).
inline constexpr uint32_t kImageLayoutVersion = 1;
inline constexpr size_t kImageDataAlign = 64;

// One blob of the DATA section while writing: `bytes` bytes at `data` (kept alive by the caller
// until write_image returns).
struct ImageBlob {
  const void* data = nullptr;
  size_t bytes = 0;
};

// Assigns DATA offsets (64-byte aligned) to blobs, the same memory once.
class ImageDataBuilder {
 public:
  uint64_t add(const void* data, size_t bytes);
  const std::vector<std::pair<uint64_t, ImageBlob>>& blobs() const { return blobs_; }
  uint64_t size() const { return size_; }

 private:
  std::vector<std::pair<uint64_t, ImageBlob>> blobs_;
  std::vector<std::pair<std::pair<const void*, size_t>, uint64_t>> seen_;  // sorted by address
  uint64_t size_ = 0;
};

struct WrittenImage {
  std::string tmp_path;  // the fsynced temporary file
  std::string name;      // its content name, "<32 hex>.fimg"
  uint64_t bytes = 0;
};

// Writes an image into a temporary file in `dir` (created if missing). `identity`: the engine
// build, CPU features and whatever else must match on open (the caller's; kImageLayoutVersion is
// added). Throws fusor::Error on I/O failure (the temporary file is removed).
WrittenImage write_image_tmp(const std::string& dir, std::string_view identity, std::string_view meta,
                             const ImageDataBuilder& data);
// Renames the temporary file to DIR/NAME and syncs the folder; throws fusor::Error on failure.
void publish_image(const WrittenImage& img, const std::string& dir);
// Whether a file name in an image folder is a published image / a temporary one.
bool is_image_name(std::string_view file_name);
bool is_temp_image_name(std::string_view file_name);

enum class ImageCheck { Structure, Full };

// A mapped image whose header, identity and META section have been checked.
class MappedImage {
 public:
  // nullptr with `why` set when the file is missing, damaged, truncated or foreign. An empty
  // `identity` accepts any engine's image (`fusor cache verify` checks integrity, not origin).
  static std::shared_ptr<const MappedImage> open(const std::string& path, std::string_view identity,
                                                 ImageCheck check, std::string* why);
  ~MappedImage();
  MappedImage(const MappedImage&) = delete;
  MappedImage& operator=(const MappedImage&) = delete;

  std::string_view meta() const { return meta_; }
  const char* data() const { return data_; }
  uint64_t data_size() const { return data_size_; }
  uint64_t file_size() const { return size_; }
  // Whether [offset, offset + bytes) lies inside the DATA section.
  bool data_range_ok(uint64_t offset, uint64_t bytes) const {
    return offset <= data_size_ && bytes <= data_size_ - offset;
  }

 private:
  MappedImage() = default;
  void* map_ = nullptr;
  uint64_t size_ = 0;
  std::string_view meta_;
  const char* data_ = nullptr;
  uint64_t data_size_ = 0;
};

}  // namespace fusor::cache
