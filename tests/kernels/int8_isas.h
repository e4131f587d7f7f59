// The int8 paths (kernels/cpu_features.h, Int8Isa) this machine can run, lowest first: the int8
// kernel tests run every one of them.
#pragma once
#include <cstdlib>
#include <vector>

#include "kernels/cpu_features.h"

namespace fusor::int8 {

inline std::vector<Int8Isa> runnable_int8_isas() {
  std::vector<Int8Isa> v;
  const Int8Isa hw = detect_int8_isa();
  for (Int8Isa i : {Int8Isa::Scalar, Int8Isa::Avx2, Int8Isa::AvxVnni, Int8Isa::Avx512Vnni}) {
    if (static_cast<int>(i) > static_cast<int>(hw)) continue;
    if (i == Int8Isa::AvxVnni && !cpu_features().avx_vnni) continue;
    if (i != Int8Isa::Scalar && !cpu_features().avx2_fma) continue;
    v.push_back(i);
  }
  return v;
}

// The AVX512-VNNI path with and without AMX tiles (FUSOR_INT8_AMX) where the machine has them;
// every other path once (the switch does nothing there).
inline std::vector<bool> amx_modes(Int8Isa isa) {
  if (isa == Int8Isa::Avx512Vnni && cpu_features().amx_int8) return {false, true};
  return {false};
}

// An environment switch of the int8 paths (FUSOR_INT8_ISA, FUSOR_INT8_AMX: read once and kept,
// so reload_isa_env() makes the kernels read it again) set for the scope's lifetime.
class Int8EnvScope {
 public:
  Int8EnvScope(const char* name, const char* value) : name_(name) {
    setenv(name, value, 1);
    reload_isa_env();
  }
  ~Int8EnvScope() {
    unsetenv(name_);
    reload_isa_env();
  }
  Int8EnvScope(const Int8EnvScope&) = delete;
  Int8EnvScope& operator=(const Int8EnvScope&) = delete;

 private:
  const char* name_;
};

// FUSOR_INT8_AMX on or off for the scope's lifetime.
struct AmxScope : Int8EnvScope {
  explicit AmxScope(bool on) : Int8EnvScope("FUSOR_INT8_AMX", on ? "1" : "0") {}
};

}  // namespace fusor::int8
