# Saved fused models (fusor-domain ops) pass Python's onnx.checker with the fusor opset import.
add_executable(fused_model_tool ${CMAKE_CURRENT_SOURCE_DIR}/onnx/tools/fused_model_tool.cpp)
target_link_libraries(fused_model_tool PRIVATE fusor_onnx)
target_include_directories(fused_model_tool PRIVATE ${PROJECT_SOURCE_DIR})
add_test(NAME onnx_python_fused_checker
  COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/onnx/python_fused_checker.py $<TARGET_FILE:fused_model_tool>)
set_tests_properties(onnx_python_fused_checker PROPERTIES LABELS onnx TIMEOUT 300)
