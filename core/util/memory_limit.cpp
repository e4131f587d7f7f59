#include "core/util/memory_limit.h"

#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "core/util/bytes_text.h"
#include "core/util/error.h"

namespace fusor {

namespace {

constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

void lower(MemoryLimit& m, uint64_t bytes, const char* source) {
  if (bytes > 0 && bytes < m.bytes) {
    m.bytes = bytes;
    m.source = source;
  }
}

// A number of bytes from a one-line file ("max" or unreadable: unbounded).
uint64_t file_bytes(const char* path) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s == "max") return kUnbounded;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  return end && *end == 0 ? v : kUnbounded;
}

// sysinfo(2), not /proc/meminfo: the kernel builds that whole file on each read (measured as a
// visible part of restoring a cached session).
uint64_t swap_bytes() {
  struct sysinfo si {};
  if (::sysinfo(&si) != 0) return 0;
  return static_cast<uint64_t>(si.totalswap) * (si.mem_unit ? si.mem_unit : 1);
}

MemoryLimit compute() {
  MemoryLimit m{kUnbounded, ""};
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) lower(m, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) + swap_bytes(), "RAM + swap");
  struct rlimit rl {};
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) lower(m, rl.rlim_cur, "RLIMIT_AS (ulimit -v)");
  if (getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) lower(m, rl.rlim_cur, "RLIMIT_DATA (ulimit -d)");
  lower(m, file_bytes("/sys/fs/cgroup/memory.max"), "the cgroup's memory limit");
  lower(m, file_bytes("/sys/fs/cgroup/memory/memory.limit_in_bytes"), "the cgroup's memory limit");
  if (const char* v = std::getenv("FUSOR_MEMORY_LIMIT_MB"); v && *v) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(v, &end, 10);
    if (end && *end == 0 && mb > 0 && mb < (kUnbounded >> 20)) lower(m, mb << 20, "FUSOR_MEMORY_LIMIT_MB");
  }
  return m;
}

}  // namespace

const MemoryLimit& memory_limit() {
  static const MemoryLimit m = compute();
  return m;
}

std::string bytes_with_unit(uint64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  return bytes < 1024 ? s : s + " (" + bytes_text(bytes) + ")";
}

void check_memory(uint64_t bytes, const std::string& what) {
  const MemoryLimit& m = memory_limit();
  if (bytes <= m.bytes) return;
  throw_bad_input(what + " needs " + bytes_with_unit(bytes) + " but this process can use at most " +
                  bytes_with_unit(m.bytes) + " (" + m.source + ")");
}

}  // namespace fusor
