// A file's stamp: what fstat says about its identity (device, inode) and its last change (size,
// modification and status-change times in nanoseconds). The store remembers a model file's hash
// against its stamp (Store::remembered_file), so a cache hit need not read the whole model again.
//
// Why that is safe: any write to a file's bytes sets its ctime to the current time, and no
// user-level call can set ctime back (touch -r, utimensat and copies that keep times set mtime
// only); replacing a file (rename, a new copy) gives it another inode. So a changed file never
// shows an old stamp, with one exception: a write in the same clock tick as the hashing (file
// times come from a coarse clock, a few milliseconds). A stamp is therefore remembered only when
// it is settled, its ctime and mtime at least kSettleNs in the past when the hash was taken.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace fusor::cache {

struct FileStamp {
  int64_t dev = 0, ino = 0, size = 0, mtime_ns = 0, ctime_ns = 0;

  bool operator==(const FileStamp&) const = default;
  // "dev:ino" (the store's row name) and "size mtime ctime" (what must still match).
  std::string identity() const;
  std::string change() const;
};

inline constexpr int64_t kSettleNs = int64_t(2) * 1000 * 1000 * 1000;

// The stamp of an open regular file; nullopt when fstat fails.
std::optional<FileStamp> stamp_of_fd(int fd);
// Whether a hash taken at `now_ns` (CLOCK_REALTIME) may be remembered against `s`.
bool settled(const FileStamp& s, int64_t now_ns);
int64_t realtime_ns();

}  // namespace fusor::cache
