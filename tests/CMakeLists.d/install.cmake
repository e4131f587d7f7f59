# cmake --install into a temporary prefix, then the installed fusor and a host app built with
# find_package(fusor) (examples/host_app) run on SqueezeNet with the source tree out of reach.
add_test(NAME install_host_app
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/session/install_test.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(install_host_app PROPERTIES LABELS session TIMEOUT 900)
# test_session drives the fusor binary (inspect, run) through the CLI harness of tests/cli.
if(TARGET test_session)
  target_sources(test_session PRIVATE ${PROJECT_SOURCE_DIR}/tests/cli/cli_harness.cpp)
  if(TARGET fusor)
    add_dependencies(test_session fusor)
  endif()
endif()
