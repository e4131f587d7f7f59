# ONNX backend node-test conformance (tests/conformance): a plain executable, run as one ctest test.
# It fails when any test whose ops all have kernels fails; unsupported tests are listed, not hidden.
add_executable(conformance ${CMAKE_CURRENT_SOURCE_DIR}/conformance/conformance.cpp)
target_link_libraries(conformance PRIVATE fusor_exec fusor_onnx fusor_kernels)
add_test(NAME conformance COMMAND conformance)
set_tests_properties(conformance PROPERTIES LABELS conformance TIMEOUT 1800)
