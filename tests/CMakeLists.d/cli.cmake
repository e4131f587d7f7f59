# Script checks for the CLI area: the shell scripts parse, the Python exporters compile.
foreach(script tests/session/install_test.sh scripts/setup.sh scripts/demo.sh scripts/test.sh scripts/fuzz.sh .ci/run bench/load_save.sh)
  string(REPLACE "/" "_" tname "${script}")
  add_test(NAME cli_syntax_${tname} COMMAND bash -n ${PROJECT_SOURCE_DIR}/${script})
  set_tests_properties(cli_syntax_${tname} PROPERTIES LABELS cli)
endforeach()
foreach(py examples/export_example.py scripts/make_test_models.py)
  string(REPLACE "/" "_" tname "${py}")
  add_test(NAME cli_pycompile_${tname}
    COMMAND /usr/bin/python3 -c "import ast,sys; ast.parse(open(sys.argv[1]).read())" ${PROJECT_SOURCE_DIR}/${py})
  set_tests_properties(cli_pycompile_${tname} PROPERTIES LABELS cli)
endforeach()
