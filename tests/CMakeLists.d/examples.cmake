# The examples/ walkthroughs, run as their READMEs describe.
# custom_fusion: a fusion added by a rule file alone (rules check/test, optimize --rules, explain,
# and the outputs against NumPy).
add_test(NAME example_custom_fusion
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/examples/custom_fusion/check_example.py $<TARGET_FILE:fusor>)
set_tests_properties(example_custom_fusion PROPERTIES LABELS examples)
