// Byte counts for people: binary units, as the flags that take sizes count them
// (--cache-max-mb, FUSOR_MEMORY_LIMIT_MB: 1 MB = 2^20 bytes).
#pragma once
#include <cstdint>
#include <string>

namespace fusor {

// "512 B", "1.5 KiB", "1.0 GiB" (1024-based, one decimal).
std::string bytes_text(uint64_t bytes);

}  // namespace fusor
