#include "cache/key.h"

#include <cpuid.h>
#include <elf.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace fusor::cache {

KeyBuilder::KeyBuilder() {
  h_.part("fusor-cache-key");
  h_.part(std::to_string(kCacheFormat));
}

void KeyBuilder::add(std::string_view field, std::string_view value) {
  h_.part(field);
  h_.part(value);
}

void KeyBuilder::add_file(std::string_view field, const std::string& path) {
  std::string hex;
  if (hash_file(path, hex))
    add(field, hex);
  else
    add(field, std::string("unreadable:").append(path));
}

std::string cpu_features() {
  std::string s;
  auto put = [&](const char* name, bool has) {
    if (!has) return;
    if (!s.empty()) s += ',';
    s += name;
  };
  __builtin_cpu_init();
  put("sse4.2", __builtin_cpu_supports("sse4.2"));
  put("avx", __builtin_cpu_supports("avx"));
  put("avx2", __builtin_cpu_supports("avx2"));
  put("fma", __builtin_cpu_supports("fma"));
  // f16c through cpuid (leaf 1, ecx bit 29): clang 14's __builtin_cpu_supports does not know it.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  put("f16c", __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C));
  put("avx512f", __builtin_cpu_supports("avx512f"));
  put("avx512bw", __builtin_cpu_supports("avx512bw"));
  put("avx512vl", __builtin_cpu_supports("avx512vl"));
  put("avx512dq", __builtin_cpu_supports("avx512dq"));
  put("avx512vnni", __builtin_cpu_supports("avx512vnni"));
  return s;
}

namespace {

// The loaded object that holds this function's code (the program, or a shared object).
struct Search {
  uintptr_t addr = 0;
  std::string id;
  std::string file;
};

// Reads the NT_GNU_BUILD_ID note of the object that contains Search::addr.
int find_build_id(struct dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<Search*>(data);
  bool contains = false;
  for (int i = 0; i < info->dlpi_phnum && !contains; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    contains = ph.p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph.p_memsz;
  }
  if (!contains) return 0;  // keep looking
  s->file = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const char* p = reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr);
    const char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto* n = reinterpret_cast<const ElfW(Nhdr)*>(p);
      const char* name = p + sizeof(ElfW(Nhdr));
      const char* desc = name + ((n->n_namesz + 3) & ~3u);
      if (desc + n->n_descsz > end) break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::string_view(name, 3) == "GNU") {
        char buf[3];
        for (unsigned k = 0; k < n->n_descsz; ++k) {
          std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(desc[k]));
          s->id += buf;
        }
        return 1;
      }
      p = desc + ((n->n_descsz + 3) & ~3u);
    }
  }
  return 1;  // found the object; it has no build-id
}

}  // namespace

std::string build_identity() {
  static const std::string id = [] {
    Search s;
    s.addr = reinterpret_cast<uintptr_t>(&find_build_id);
    dl_iterate_phdr(find_build_id, &s);
    if (!s.id.empty()) return "build-id:" + s.id;
    struct stat st {};
    const std::string file = s.file.empty() ? "/proc/self/exe" : s.file;
    if (::stat(file.c_str(), &st) == 0)
      return "file:" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
             std::to_string(st.st_mtim.tv_nsec);
    return std::string("unknown");
  }();
  return id;
}

}  // namespace fusor::cache
