// The int8 paths (kernels/cpu_features.h, Int8Isa) this machine can run, lowest first: the int8
// kernel tests run every one of them.
#pragma once
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

}  // namespace fusor::int8
