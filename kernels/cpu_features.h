// Run-time instruction-set detection and the choice of kernel path.
//
// detect_isa() asks the CPU (cpuid) and the OS (xgetbv: the AVX/AVX-512 register state is
// enabled) what can run. active_isa() is what the fast kernels use: the detected level, lowered
// by the environment variable FUSOR_ISA=scalar|avx2|avx512 (tests force each path with it), read
// on first use and kept (reload_isa_env() reads it again). A request above what the machine has
// is clamped to the detected level, never executed.
#pragma once
#include <optional>
#include <string_view>

namespace fusor {

// Ordered: a higher value can run everything a lower one can.
enum class Isa : int { Scalar = 0, Avx2 = 1, Avx512 = 2 };

struct CpuFeatures {
  bool avx2_fma = false;     // AVX2 + FMA3 + OS support for YMM state
  bool avx512 = false;       // AVX-512 F, BW, DQ, VL + OS support for ZMM/opmask state
  bool avx512_vnni = false;  // + AVX512_VNNI (vpdpbusd on ZMM)
  bool avx_vnni = false;     // AVX-VNNI (vpdpbusd on YMM, VEX-encoded), with avx2_fma
  bool avx512_vbmi = false;  // + AVX512_VBMI (byte permutes: vpermb, vpermi2b)
  // AMX-TILE + AMX-INT8 with AVX512-VNNI, the OS saving the tile state (XCR0 bits 17, 18) and,
  // on Linux, this process granted it (arch_prctl ARCH_REQ_XCOMP_PERM, asked once at detection).
  bool amx_int8 = false;
};

const CpuFeatures& cpu_features();
Isa detect_isa();
// The detected ISA lowered by FUSOR_ISA (read once; cheap enough to call per row).
Isa active_isa();
// Makes active_isa() and active_int8_isa() read FUSOR_ISA / FUSOR_INT8_ISA again (tests that
// switch paths with setenv; not safe while kernels run on other threads).
void reload_isa_env();
// The smaller of `want` and the detected ISA.
Isa clamp_isa(Isa want);
const char* isa_name(Isa isa);
// "scalar" / "avx2" / "avx512"; nullopt for anything else.
std::optional<Isa> parse_isa(std::string_view name);

// The int8 kernels' paths (kernels/int8): u8 x s8 dot products by vpdpbusd on ZMM (Avx512Vnni) or
// YMM (AvxVnni), by 16-bit vpmaddwd on AVX2 (exact: no vpmaddubsw saturation), or scalar.
// active_int8_isa() follows active_isa() (FUSOR_ISA=avx2 gives AvxVnni where the CPU has it),
// lowered further by FUSOR_INT8_ISA=scalar|avx2|avxvnni|avx512vnni; never above the hardware.
enum class Int8Isa : int { Scalar = 0, Avx2 = 1, AvxVnni = 2, Avx512Vnni = 3 };
Int8Isa detect_int8_isa();
Int8Isa active_int8_isa();
// Whether the Avx512Vnni path adds AMX tiles (kernels/int8/qgemm_amx.cpp): the hardware and OS
// have them (CpuFeatures::amx_int8), active_int8_isa() is Avx512Vnni, and FUSOR_INT8_AMX is not
// "0" (comparisons). Cached like active_int8_isa() (reload_isa_env() reads it again).
bool active_int8_amx();
const char* int8_isa_name(Int8Isa isa);
std::optional<Int8Isa> parse_int8_isa(std::string_view name);

}  // namespace fusor
