# tests/exec/cli_run_test.cpp drives the fusor binary ($FUSOR_BIN): build it with the test.
if(TARGET test_exec AND TARGET fusor)
  add_dependencies(test_exec fusor)
endif()
