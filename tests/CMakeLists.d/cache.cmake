# The optimized-session cache: tests/cache drives the fusor binary too (through tests/cli's
# harness), and a script runs 4 concurrent processes x 20 optimizes on one cache file.
if(TARGET test_cache)
  target_sources(test_cache PRIVATE ${PROJECT_SOURCE_DIR}/tests/cli/cli_harness.cpp)
  if(TARGET fusor)
    add_dependencies(test_cache fusor)
  endif()
endif()
add_test(NAME cache_concurrent_processes
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cache/concurrent.sh $<TARGET_FILE:fusor>
          ${PROJECT_SOURCE_DIR}/examples/models/squeezenet1_1.onnx ${CMAKE_CURRENT_BINARY_DIR}/cache_concurrent)
set_tests_properties(cache_concurrent_processes PROPERTIES LABELS cache TIMEOUT 600)
