// Shared by the libFuzzer targets (tests/fuzz/README.md): the process set-up and the one rule of
// every target: the entry point may fail only with fusor's documented bad-input errors
// (fusor::Error of kind Usage, BadInput or Cancelled). An internal error, another exception, a
// crash, a sanitizer report, a hang or unbounded memory is a finding.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/util/error.h"
#include "core/util/log.h"

namespace fusor::fuzz {

// Once per process: quiet logs, and a memory limit below libFuzzer's -rss_limit_mb so a model
// asking for gigabytes is refused as bad input (core/util/memory_limit.h) instead of ending the
// campaign with an out-of-memory report.
inline void init() {
  setenv("FUSOR_MEMORY_LIMIT_MB", "512", 0);
  set_log_level(LogLevel::Error);
}

template <typename F>
void expect_documented_errors(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::Internal) {
      std::fprintf(stderr, "fuzz: internal error (a bug): %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: undocumented exception: %s\n", e.what());
    std::abort();
  }
}

}  // namespace fusor::fuzz
