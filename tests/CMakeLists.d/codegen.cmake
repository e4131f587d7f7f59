# The AVX2 int8 tiles keep their accumulators in registers: GCC has moved them to the stack after
# unrelated edits (a lambda, an inlined store, a branch beside a tile) without changing a result,
# 10-30% slower. scripts/check_tile_spills.py compiles the kernels to assembly with their own
# commands and fails on YMM stack traffic in a tile's inner loop. GCC on x86-64 only (the flags and
# the assembly syntax it reads), in optimized builds only (at -O0 or -O1 everything lives on the
# stack).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND
   CMAKE_BUILD_TYPE MATCHES "^(Release|RelWithDebInfo)$")
  add_test(NAME check_tile_spills
           COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/check_tile_spills.py ${PROJECT_BINARY_DIR})
  set_tests_properties(check_tile_spills PROPERTIES LABELS codegen)
endif()
