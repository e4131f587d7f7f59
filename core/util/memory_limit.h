// How much memory this process can hope to get, and the check that turns a request beyond it into
// bad input (exit 2) before anything is allocated: a model or input too big for the machine is
// the user's problem to hear about, not an internal error or a process killed by the kernel.
//
// The limit is the smallest of: physical RAM plus swap, RLIMIT_AS and RLIMIT_DATA (`ulimit -v`,
// `ulimit -d`), the cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes), and
// $FUSOR_MEMORY_LIMIT_MB (megabytes of 2^20 bytes) when set. It is read once per process.
#pragma once
#include <cstdint>
#include <string>

namespace fusor {

struct MemoryLimit {
  uint64_t bytes = 0;   // UINT64_MAX when nothing bounds it
  std::string source;   // "RAM + swap", "RLIMIT_AS (ulimit -v)", "the cgroup's memory limit", ...
};

const MemoryLimit& memory_limit();

// "8589934592 bytes (8.0 GiB)"
std::string bytes_with_unit(uint64_t bytes);

// Throws BadInput "WHAT needs N bytes (X GiB) but this process can use at most M (SOURCE)" when
// `bytes` exceeds the limit. `what` names the thing: "node 'c' (ConstantOfShape): output 'y'".
void check_memory(uint64_t bytes, const std::string& what);

}  // namespace fusor
