# Providers on the command line (tests/layout/scripts/provider_cli.sh): unknown provider (exit 1),
# a bad provider definition (exit 2, FILE:LINE:COL), a node no provider can run (exit 2), the
# provider_nodes JSON key. The layout and xnnpack rule files' test blocks run in ruletest.cmake;
# the C++ checks are test_layout (tests/layout/*.cpp).
add_test(NAME layout_provider_cli
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/layout/scripts/provider_cli.sh $<TARGET_FILE:fusor>
          ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/layout_provider_cli)
set_tests_properties(layout_provider_cli PROPERTIES LABELS layout)
