#include "cache/file_stamp.h"

#include <sys/stat.h>

#include <algorithm>
#include <ctime>

namespace fusor::cache {

namespace {
int64_t ns_of(const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }
}  // namespace

std::string FileStamp::identity() const { return std::to_string(dev) + ":" + std::to_string(ino); }

std::string FileStamp::change() const {
  return std::to_string(size) + " " + std::to_string(mtime_ns) + " " + std::to_string(ctime_ns);
}

std::optional<FileStamp> stamp_of_fd(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  FileStamp s;
  s.dev = static_cast<int64_t>(st.st_dev);
  s.ino = static_cast<int64_t>(st.st_ino);
  s.size = static_cast<int64_t>(st.st_size);
  s.mtime_ns = ns_of(st.st_mtim);
  s.ctime_ns = ns_of(st.st_ctim);
  return s;
}

bool settled(const FileStamp& s, int64_t now_ns) { return now_ns - std::max(s.mtime_ns, s.ctime_ns) >= kSettleNs; }

int64_t realtime_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return ns_of(t);
}

}  // namespace fusor::cache
