# cmake --install + find_package(fusor) from a host app (examples/host_app), run on SqueezeNet.
add_test(NAME install_host_app
  COMMAND ${CMAKE_COMMAND} -DBUILD_DIR=${PROJECT_BINARY_DIR} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/install_host_app -P ${PROJECT_SOURCE_DIR}/tests/session/install_test.cmake)
set_tests_properties(install_host_app PROPERTIES LABELS session TIMEOUT 900)
# test_session drives the fusor binary (inspect, run) through the CLI harness of tests/cli.
if(TARGET test_session)
  target_sources(test_session PRIVATE ${PROJECT_SOURCE_DIR}/tests/cli/cli_harness.cpp)
  if(TARGET fusor)
    add_dependencies(test_session fusor)
  endif()
endif()
