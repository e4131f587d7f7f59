#include "cache/identify.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/util/regular_file.h"

namespace fusor::cache {

namespace {

// "file:" URI for sqlite3_open_v2 with SQLITE_OPEN_URI: '%', '?' and '#' (and bytes outside
// printable ASCII) percent-encoded.
std::string file_uri(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string u = "file:";
  for (unsigned char c : path) {
    if (c == '%' || c == '?' || c == '#' || c <= 0x20 || c >= 0x7f) {
      u += '%';
      u += hex[c >> 4];
      u += hex[c & 15];
    } else {
      u += static_cast<char>(c);
    }
  }
  return u;
}

// A pre-application_id fusor cache: the `meta` table names a fusor cache format. Read with the
// `immutable` URI parameter: no locks, no -wal/-shm files created, nothing written.
bool has_fusor_meta(const std::string& path) {
  sqlite3* db = nullptr;
  std::string uri = file_uri(path) + "?immutable=1";
  bool ours = false;
  if (sqlite3_open_v2(uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='format'", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      const unsigned char* v = sqlite3_column_text(st, 0);
      ours = v && std::strncmp(reinterpret_cast<const char*>(v), "fusor-cache-", 12) == 0;
    }
    sqlite3_finalize(st);
  }
  sqlite3_close_v2(db);
  return ours;
}

}  // namespace

PathIdentity identify_cache_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {PathKind::Missing, ""};
    return {PathKind::Unreadable, std::strerror(errno)};
  }
  if (!S_ISREG(st.st_mode)) return {PathKind::NotACache, file_kind_name(st.st_mode)};
  if (st.st_size == 0) return {PathKind::NotACache, "an empty file"};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {PathKind::Unreadable, std::strerror(errno)};
  unsigned char header[100];
  ssize_t n = ::pread(fd, header, sizeof header, 0);
  int read_errno = errno;
  ::close(fd);
  if (n < 0) return {PathKind::Unreadable, std::strerror(read_errno)};
  static const char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (n < static_cast<ssize_t>(sizeof header) || std::memcmp(header, kMagic, sizeof kMagic) != 0)
    return {PathKind::NotACache, "not an SQLite database"};
  // Offset 68: the application id, big-endian.
  uint32_t app = (uint32_t{header[68]} << 24) | (uint32_t{header[69]} << 16) | (uint32_t{header[70]} << 8) | header[71];
  if (app == static_cast<uint32_t>(kApplicationId)) return {PathKind::FusorCache, ""};
  if (app != 0) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "an SQLite database of another program (application_id 0x%08x)", app);
    return {PathKind::NotACache, buf};
  }
  if (has_fusor_meta(path)) return {PathKind::FusorCache, ""};
  return {PathKind::NotACache, "an SQLite database without fusor's tables"};
}

}  // namespace fusor::cache
