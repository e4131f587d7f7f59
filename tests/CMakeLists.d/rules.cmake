# fusor rules check / list and optimize with rules, end to end through the binary.
set(_fusor $<TARGET_FILE:fusor>)
set(_src ${PROJECT_SOURCE_DIR})
function(fusor_rules_test name expect_exit)
  add_test(NAME rules_cli_${name}
    COMMAND bash -c "\"$0\" \"$@\" >/dev/null 2>&1; rc=$?; if [ $rc -ne ${expect_exit} ]; then echo \"exit $rc, expected ${expect_exit}\"; exit 1; fi" ${ARGN})
  set_tests_properties(rules_cli_${name} PROPERTIES LABELS cli)
endfunction()
fusor_rules_test(check_basic 0 ${_fusor} rules check ${_src}/rules/basic/identity.rules ${_src}/rules/basic/shape_chains.rules
  ${_src}/rules/basic/transpose.rules ${_src}/rules/basic/arithmetic_noops.rules ${_src}/rules/basic/data_movement_noops.rules)
fusor_rules_test(check_bad 2 ${_fusor} rules check ${_src}/tests/dsl/golden/attributes.rules)
fusor_rules_test(check_missing 2 ${_fusor} rules check ${_src}/no/such.rules)
fusor_rules_test(check_no_file 1 ${_fusor} rules check)
fusor_rules_test(bad_action 1 ${_fusor} rules frobnicate)
fusor_rules_test(list_basic 0 ${_fusor} rules list --level basic)
fusor_rules_test(list_json 0 ${_fusor} rules list --json --provider cpu)
fusor_rules_test(list_bad_provider 1 ${_fusor} rules list --provider gpu9)
fusor_rules_test(optimize_bad_rules 2 ${_fusor} optimize ${_src}/examples/models/squeezenet1_1.onnx
  -o ${CMAKE_CURRENT_BINARY_DIR}/rules_bad_out.onnx --rules ${_src}/tests/dsl/golden/attributes.rules)
fusor_rules_test(optimize_bad_disable 1 ${_fusor} optimize ${_src}/examples/models/squeezenet1_1.onnx
  -o ${CMAKE_CURRENT_BINARY_DIR}/rules_dis_out.onnx --level basic --disable no_such_rule)
fusor_rules_test(optimize_basic 0 ${_fusor} optimize ${_src}/examples/models/squeezenet1_1.onnx
  -o ${CMAKE_CURRENT_BINARY_DIR}/rules_basic_out.onnx --level basic --trace)
