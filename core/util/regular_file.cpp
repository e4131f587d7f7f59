#include "core/util/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fusor {

const char* file_kind_name(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

int open_regular_file(const std::string& path, size_t* size, std::string* why) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. It has no
  // effect on reading a regular file.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (why) *why = std::strerror(errno);
    return -1;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    if (why) *why = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    if (why) *why = std::string("not a regular file (") + file_kind_name(st.st_mode) + ")";
    ::close(fd);
    return -1;
  }
  *size = static_cast<size_t>(st.st_size);
  return fd;
}

std::string read_regular_file(const std::string& path, std::string& out, size_t max_bytes) {
  size_t size = 0;
  std::string why;
  int fd = open_regular_file(path, &size, &why);
  if (fd < 0) return why;
  if (size > max_bytes) {
    ::close(fd);
    return std::to_string(size) + " bytes, over the " + std::to_string(max_bytes) + "-byte limit";
  }
  out.assign(size, '\0');
  size_t got = 0;
  // The size from fstat bounds the read even when the file grows meanwhile.
  while (got < size) {
    ssize_t r = ::read(fd, out.data() + got, size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      std::string e = std::string("read error: ") + std::strerror(errno);
      ::close(fd);
      return e;
    }
    if (r == 0) break;  // shrank meanwhile
    got += static_cast<size_t>(r);
  }
  out.resize(got);
  ::close(fd);
  return "";
}

}  // namespace fusor
