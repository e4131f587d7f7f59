# examples/python/inspect_optimized.py (python3-onnx only) on a model fusor optimized at level
# extended; the driver checks the printed counts and provenance, and onnx.checker (tests/session).
if(TARGET fusor)
  add_test(NAME examples_python_inspect_optimized
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/session/inspect_optimized_test.sh $<TARGET_FILE:fusor>
            ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/examples_python_inspect_optimized)
  set_tests_properties(examples_python_inspect_optimized PROPERTIES LABELS session TIMEOUT 300)
endif()
