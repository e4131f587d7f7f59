// Opening and reading input files safely: only regular files (symlinks followed), never blocking
// on a FIFO and never reading a device such as /dev/zero without end, with a size cap.
// Functions here return the reason for a failure; callers turn it into their diagnostic.
#pragma once
#include <sys/types.h>
#include <cstddef>
#include <string>

namespace fusor {

// Opens `path` read-only and returns the descriptor with the file's size in *size, or -1 with
// the reason in *why ("No such file or directory", "not a regular file (a FIFO)").
// What a path that is not a regular file is, from its st_mode: "a directory", "a FIFO", ...
// ("not a regular file" for anything else).
const char* file_kind_name(mode_t m);

int open_regular_file(const std::string& path, size_t* size, std::string* why);

// Reads the whole regular file into `out` when it is at most `max_bytes` long. Returns "" on
// success, else the reason (as open_regular_file, or "1073741824 bytes, over the 8388608-byte
// limit").
std::string read_regular_file(const std::string& path, std::string& out, size_t max_bytes);

}  // namespace fusor
