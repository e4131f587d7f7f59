#include "kernels/cpu_features.h"

#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace fusor {

namespace {

uint64_t read_xcr0() {
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// Linux hands out the AMX tile data state only to processes that ask for it (kernel 5.16+): a
// tile instruction before the request faults. Asked once, for the whole process.
bool amx_permitted() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  constexpr int kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27), avx = c & (1u << 28), fma = c & (1u << 12);
  if (!osxsave || !avx) return f;
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;           // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;         // + opmask, ZMM_Hi256, Hi16_ZMM
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
  const bool avx2 = b & (1u << 5);
  const bool f512 = b & (1u << 16), dq = b & (1u << 17), bw = b & (1u << 30), vl = b & (1u << 31);
  f.avx2_fma = ymm_state && avx2 && fma;
  f.avx512 = f.avx2_fma && zmm_state && f512 && dq && bw && vl;
  f.avx512_vnni = f.avx512 && (c & (1u << 11));
  f.avx512_vbmi = f.avx512 && (c & (1u << 1));
  const bool amx_tile = d & (1u << 24), amx_int8 = d & (1u << 25);
  const bool tile_state = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  f.amx_int8 = f.avx512_vnni && amx_tile && amx_int8 && tile_state && amx_permitted();
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = f.avx2_fma && (a & (1u << 4));
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

Isa detect_isa() {
  const CpuFeatures& f = cpu_features();
  return f.avx512 ? Isa::Avx512 : f.avx2_fma ? Isa::Avx2 : Isa::Scalar;
}

Isa clamp_isa(Isa want) {
  Isa hw = detect_isa();
  return static_cast<int>(want) < static_cast<int>(hw) ? want : hw;
}

namespace {

// The paths FUSOR_ISA / FUSOR_INT8_ISA select, read on first use (getenv scans the environment:
// too slow for the kernels that ask per row); -1 = not read yet.
std::atomic<int> g_isa{-1};
std::atomic<int> g_int8_isa{-1};
std::atomic<int> g_int8_amx{-1};

// slot's value, computed by read() on first use.
template <class T, class F>
T cached(std::atomic<int>& slot, F read) {
  int v = slot.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(read());
    slot.store(v, std::memory_order_relaxed);
  }
  return static_cast<T>(v);
}

Isa isa_from_env() {
  const char* env = std::getenv("FUSOR_ISA");
  if (env && *env) {
    if (auto want = parse_isa(env)) return clamp_isa(*want);
  }
  return detect_isa();
}

}  // namespace

Isa active_isa() { return cached<Isa>(g_isa, isa_from_env); }

void reload_isa_env() {
  g_isa.store(-1, std::memory_order_relaxed);
  g_int8_isa.store(-1, std::memory_order_relaxed);
  g_int8_amx.store(-1, std::memory_order_relaxed);
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view name) {
  if (name == "scalar") return Isa::Scalar;
  if (name == "avx2") return Isa::Avx2;
  if (name == "avx512") return Isa::Avx512;
  return std::nullopt;
}

Int8Isa detect_int8_isa() {
  const CpuFeatures& f = cpu_features();
  if (f.avx512_vnni) return Int8Isa::Avx512Vnni;
  if (f.avx_vnni) return Int8Isa::AvxVnni;
  return f.avx2_fma ? Int8Isa::Avx2 : Int8Isa::Scalar;
}

namespace {

Int8Isa int8_isa_from_env() {
  const CpuFeatures& f = cpu_features();
  Int8Isa isa = Int8Isa::Scalar;
  switch (active_isa()) {
    case Isa::Avx512: isa = f.avx512_vnni ? Int8Isa::Avx512Vnni : f.avx_vnni ? Int8Isa::AvxVnni : Int8Isa::Avx2; break;
    case Isa::Avx2: isa = f.avx_vnni ? Int8Isa::AvxVnni : Int8Isa::Avx2; break;
    case Isa::Scalar: isa = Int8Isa::Scalar; break;
  }
  const char* env = std::getenv("FUSOR_INT8_ISA");
  if (env && *env) {
    if (auto want = parse_int8_isa(env)) {
      // Only downwards, and only to a path the hardware has (AvxVnni needs the VEX form).
      if (static_cast<int>(*want) < static_cast<int>(isa) && (*want != Int8Isa::AvxVnni || f.avx_vnni)) isa = *want;
    }
  }
  return isa;
}

}  // namespace

Int8Isa active_int8_isa() { return cached<Int8Isa>(g_int8_isa, int8_isa_from_env); }

bool active_int8_amx() {
  return cached<bool>(g_int8_amx, [] {
    const char* env = std::getenv("FUSOR_INT8_AMX");
    return cpu_features().amx_int8 && active_int8_isa() == Int8Isa::Avx512Vnni &&
           !(env && std::string_view(env) == "0");
  });
}

const char* int8_isa_name(Int8Isa isa) {
  switch (isa) {
    case Int8Isa::Scalar: return "scalar";
    case Int8Isa::Avx2: return "avx2";
    case Int8Isa::AvxVnni: return "avxvnni";
    case Int8Isa::Avx512Vnni: return "avx512vnni";
  }
  return "?";
}

std::optional<Int8Isa> parse_int8_isa(std::string_view name) {
  if (name == "scalar") return Int8Isa::Scalar;
  if (name == "avx2") return Int8Isa::Avx2;
  if (name == "avxvnni") return Int8Isa::AvxVnni;
  if (name == "avx512vnni") return Int8Isa::Avx512Vnni;
  return std::nullopt;
}

}  // namespace fusor
