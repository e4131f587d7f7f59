# Fuzz targets (tests/fuzz/README.md), one per entry point that reads untrusted bytes. With
# FUSOR_FUZZ=ON (clang, scripts/sanitize_build.sh) each is a libFuzzer binary; in any other build
# it is linked with a plain replay driver (tests/fuzz/replay_main.cpp). Either way FuzzReplay_TARGET
# runs the target once on each of its seeds and on every regression input, so every ctest replays
# the reproducers of past findings. Fuzzing itself: scripts/fuzz.sh.
set(_fuzz_seeds_model tests/fuzz/corpus/model)
set(_fuzz_seeds_rules rules examples/custom_fusion tests/dsl/golden)
set(_fuzz_seeds_provider providers tests/dsl/golden)
set(_fuzz_seeds_tensor tests/fuzz/corpus/tensor)
foreach(t model rules provider tensor)
  if(FUSOR_FUZZ)
    add_executable(fuzz_${t} ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_${t}.cpp)
    target_compile_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${t} PRIVATE -fsanitize=fuzzer)
    # libFuzzer: execute the corpus directories once, no mutation. Its first directory is the
    # one it may write to: a scratch folder in the build tree, never the source tree.
    file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz-replay/${t})
    set(_fuzz_runs -runs=0 ${PROJECT_BINARY_DIR}/fuzz-replay/${t})
  else()
    add_executable(fuzz_${t} ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_${t}.cpp
      ${PROJECT_SOURCE_DIR}/tests/fuzz/replay_main.cpp)
    set(_fuzz_runs)
  endif()
  target_link_libraries(fuzz_${t} PRIVATE fusor_session fusor_ruletest)
  target_compile_definitions(fuzz_${t} PRIVATE FUSOR_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set(_dirs)
  foreach(d ${_fuzz_seeds_${t}} tests/fuzz/regressions)
    list(APPEND _dirs ${PROJECT_SOURCE_DIR}/${d})
  endforeach()
  add_test(NAME FuzzReplay_${t} COMMAND fuzz_${t} ${_fuzz_runs} ${_dirs})
  set_tests_properties(FuzzReplay_${t} PROPERTIES LABELS fuzz TIMEOUT 900)
endforeach()
