# The fusor Python package (python/, docs/python.md), when it was built (pybind11 and Python's
# headers found): the API tests and an ONNX Runtime-style script run with `import fusor as ort`.
if(TARGET fusor_python AND TARGET fusor)
  set(_py_env "PYTHONPATH=${FUSOR_PYTHON_DIR};FUSOR_BIN=$<TARGET_FILE:fusor>;FUSOR_RULES_DIR=${PROJECT_SOURCE_DIR}")
  add_test(NAME python_api COMMAND ${FUSOR_PYTHON_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/python/test_api.py)
  add_test(NAME python_ort_style_optimize
    COMMAND ${FUSOR_PYTHON_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tests/python/run_ort_style.py ${PROJECT_SOURCE_DIR}
            ${PROJECT_SOURCE_DIR}/examples/models/squeezenet1_1.onnx ${CMAKE_CURRENT_BINARY_DIR}/python_ort_style)
  set_tests_properties(python_api python_ort_style_optimize PROPERTIES LABELS python TIMEOUT 600
    ENVIRONMENT "${_py_env}")
endif()
