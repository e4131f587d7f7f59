# ONNX I/O checks driven by Python's onnx: saved models must pass onnx.checker (tests/onnx).
add_executable(onnx_roundtrip_tool ${CMAKE_CURRENT_SOURCE_DIR}/onnx/tools/roundtrip_tool.cpp)
target_link_libraries(onnx_roundtrip_tool PRIVATE fusor_onnx)
add_test(NAME onnx_python_checker
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/onnx/python_checker.py $<TARGET_FILE:onnx_roundtrip_tool>)
set_tests_properties(onnx_python_checker PROPERTIES LABELS onnx TIMEOUT 600)
