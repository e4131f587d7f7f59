#include "cache/image_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "cache/store.h"
#include "core/util/error.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace fusor::cache {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'F', 'U', 'S', 'O', 'R', 'I', 'M', 'G'};
constexpr uint64_t kHeaderBytes = 4096;
constexpr uint64_t kPage = 4096;
enum : uint32_t { kMeta = 1, kData = 2 };

struct Section {
  uint32_t kind = 0;
  uint32_t reserved = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  uint64_t checksum = 0;
};

struct Header {
  char magic[8];
  uint32_t layout_version;
  uint32_t identity_bytes;
  uint64_t file_size;
  Section sections[2];
  char identity[4000];
  uint64_t header_checksum;  // XXH3-64 of every byte before it
};
static_assert(sizeof(Header) == kHeaderBytes, "the header fills one page");

uint64_t round_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

std::string full_identity(std::string_view identity) {
  return std::string(identity) + " layout=" + std::to_string(kImageLayoutVersion);
}

uint64_t header_sum(const Header& h) { return XXH3_64bits(&h, offsetof(Header, header_checksum)); }

// Writes all of [p, p + n) at the current position; throws with the path on failure.
void write_all(int fd, const void* p, size_t n, const std::string& path) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, std::min<size_t>(n, size_t{1} << 30));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw_bad_input(path + ": cannot write the session image: " + std::strerror(errno));
    c += w;
    n -= static_cast<size_t>(w);
  }
}

// Writes zeros up to `to` and hashes them with the section.
void pad_to(int fd, uint64_t& pos, uint64_t to, XXH3_state_t* h, const std::string& path) {
  static const char zeros[4096] = {};
  while (pos < to) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof zeros, to - pos));
    write_all(fd, zeros, n, path);
    if (h) XXH3_64bits_update(h, zeros, n);
    pos += n;
  }
}

std::string hex128(const void* data, size_t bytes) {
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, XXH3_128bits(data, bytes));
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char b : c.digest) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace

uint64_t ImageDataBuilder::add(const void* data, size_t bytes) {
  if (bytes == 0) return 0;  // an empty tensor has no bytes to place
  const std::pair<const void*, size_t> k{data, bytes};
  auto it = std::lower_bound(seen_.begin(), seen_.end(), k, [](const auto& a, const auto& b) { return a.first < b; });
  if (it != seen_.end() && it->first == k) return it->second;
  const uint64_t off = round_up(size_, kImageDataAlign);
  blobs_.push_back({off, ImageBlob{data, bytes}});
  seen_.insert(it, {k, off});
  size_ = off + bytes;
  return off;
}

bool is_image_name(std::string_view n) {
  if (n.size() != 32 + 5 || n.substr(32) != ".fimg") return false;
  return std::all_of(n.begin(), n.begin() + 32, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_temp_image_name(std::string_view n) { return n.rfind("tmp-", 0) == 0 && n.size() > 5 && n.substr(n.size() - 5) == ".part"; }

WrittenImage write_image_tmp(const std::string& dir, std::string_view identity, std::string_view meta,
                             const ImageDataBuilder& data) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(dir, ec);
  WrittenImage out;
  out.tmp_path = dir + "/tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".part";
  const std::string ident = full_identity(identity);
  Header h{};
  if (ident.size() > sizeof h.identity) throw_internal("session image: identity text too long");
  int fd = ::open(out.tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw_bad_input(out.tmp_path + ": cannot create the session image: " + std::strerror(errno));
  try {
    uint64_t pos = 0;
    pad_to(fd, pos, kHeaderBytes, nullptr, out.tmp_path);  // the header is written last
    XXH3_state_t* st = XXH3_createState();
    struct Free {
      XXH3_state_t* s;
      ~Free() { XXH3_freeState(s); }
    } free_state{st};

    Section& ms = h.sections[0];
    ms.kind = kMeta;
    ms.offset = pos;
    ms.bytes = meta.size();
    ms.checksum = XXH3_64bits(meta.data(), meta.size());
    write_all(fd, meta.data(), meta.size(), out.tmp_path);
    pos += meta.size();
    test_kill_point("image-write");
    pad_to(fd, pos, round_up(pos, kPage), nullptr, out.tmp_path);

    Section& ds = h.sections[1];
    ds.kind = kData;
    ds.offset = pos;
    ds.bytes = round_up(data.size(), kImageDataAlign);
    XXH3_64bits_reset(st);
    for (const auto& [off, blob] : data.blobs()) {
      pad_to(fd, pos, ds.offset + off, st, out.tmp_path);
      write_all(fd, blob.data, blob.bytes, out.tmp_path);
      XXH3_64bits_update(st, blob.data, blob.bytes);
      pos += blob.bytes;
    }
    pad_to(fd, pos, ds.offset + ds.bytes, st, out.tmp_path);
    ds.checksum = XXH3_64bits_digest(st);

    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.layout_version = kImageLayoutVersion;
    h.identity_bytes = static_cast<uint32_t>(ident.size());
    std::memcpy(h.identity, ident.data(), ident.size());
    h.file_size = pos;
    h.header_checksum = header_sum(h);
    if (::pwrite(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h))
      throw_bad_input(out.tmp_path + ": cannot write the session image header: " + std::strerror(errno));
    if (::fsync(fd) != 0) throw_bad_input(out.tmp_path + ": fsync failed: " + std::strerror(errno));
    ::close(fd);
    fd = -1;
    out.bytes = pos;
    out.name = hex128(&h, sizeof h) + ".fimg";
    return out;
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(out.tmp_path.c_str());
    throw;
  }
}

void publish_image(const WrittenImage& img, const std::string& dir) {
  const std::string to = dir + "/" + img.name;
  if (::rename(img.tmp_path.c_str(), to.c_str()) != 0) {
    int e = errno;
    ::unlink(img.tmp_path.c_str());
    throw_bad_input(to + ": cannot publish the session image: " + std::strerror(e));
  }
  // The rename is durable once the folder is synced.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::shared_ptr<const MappedImage> MappedImage::open(const std::string& path, std::string_view identity,
                                                     ImageCheck check, std::string* why) {
  auto fail = [&](std::string msg) -> std::shared_ptr<const MappedImage> {
    if (why) *why = std::move(msg);
    return nullptr;
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(errno == ENOENT ? "missing" : std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail("not a regular file");
  }
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size < kHeaderBytes) {
    ::close(fd);
    return fail("truncated (" + std::to_string(size) + " bytes)");
  }
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return fail(std::string("cannot map: ") + std::strerror(errno));
  std::shared_ptr<MappedImage> img(new MappedImage());
  img->map_ = p;
  img->size_ = size;
  Header h;
  std::memcpy(&h, p, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return fail("not a fusor session image");
  if (h.header_checksum != header_sum(h)) return fail("header checksum mismatch");
  if (h.layout_version != kImageLayoutVersion)
    return fail("layout version " + std::to_string(h.layout_version) + ", this engine reads " +
                std::to_string(kImageLayoutVersion));
  if (h.identity_bytes > sizeof h.identity ||
      (!identity.empty() && std::string_view(h.identity, h.identity_bytes) != full_identity(identity)))
    return fail("made by another engine build or for another CPU");
  if (h.file_size != size)
    return fail("truncated or extended: " + std::to_string(size) + " bytes, the header says " + std::to_string(h.file_size));
  const char* base = static_cast<const char*>(p);
  for (const Section& s : h.sections)
    if (s.offset < kHeaderBytes || s.offset > size || s.bytes > size - s.offset) return fail("section out of bounds");
  const Section& ms = h.sections[0];
  const Section& ds = h.sections[1];
  if (ms.kind != kMeta || ds.kind != kData || ds.offset % kPage != 0) return fail("unexpected section table");
  if (XXH3_64bits(base + ms.offset, ms.bytes) != ms.checksum) return fail("META section checksum mismatch");
  if (check == ImageCheck::Full && XXH3_64bits(base + ds.offset, ds.bytes) != ds.checksum)
    return fail("DATA section checksum mismatch");
  img->meta_ = std::string_view(base + ms.offset, ms.bytes);
  img->data_ = base + ds.offset;
  img->data_size_ = ds.bytes;
  return img;
}

MappedImage::~MappedImage() {
  if (map_) ::munmap(map_, size_);
}

}  // namespace fusor::cache
