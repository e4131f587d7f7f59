# The tree's layering (issue 19): top-level folders include one way only (core <- dsl, kernels,
# cache <- engine <- cli, python), and no library file writes to stdout/stderr.
add_test(NAME check_layers COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/scripts/check_layers.py ${PROJECT_SOURCE_DIR})
set_tests_properties(check_layers PROPERTIES LABELS layers)
