// Tests that run a kernel on each instruction-set path set FUSOR_ISA through these: active_isa()
// reads the variable once and keeps it (kernels/cpu_features.h), so a change made with setenv
// alone would not be seen.
#pragma once
#include <cstdlib>

#include "kernels/cpu_features.h"

namespace fusor {

// Sets FUSOR_ISA to `name` (nullptr: unsets it) and has active_isa() read it again.
inline void set_isa_env(const char* name) {
  if (name) {
    setenv("FUSOR_ISA", name, 1);
  } else {
    unsetenv("FUSOR_ISA");
  }
  reload_isa_env();
}

// FUSOR_ISA for the scope's lifetime.
struct IsaScope {
  explicit IsaScope(Isa isa) { set_isa_env(isa_name(isa)); }
  ~IsaScope() { set_isa_env(nullptr); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;
};

}  // namespace fusor
