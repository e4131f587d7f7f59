# Every shipped rule has a test block, and it passes: `fusor rules test --require-tests` on each
# rule file under rules/ (basic, extended, layout, provider folders: globbed, so files and
# folders added later are covered; the glob re-runs when a file is added). One ctest per file,
# ruletest_<folder>_<file>.
file(GLOB _ruletest_files CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/rules/*/*.rules)
foreach(_f ${_ruletest_files})
  get_filename_component(_stem ${_f} NAME_WE)
  get_filename_component(_dir ${_f} DIRECTORY)
  get_filename_component(_level ${_dir} NAME)
  add_test(NAME ruletest_${_level}_${_stem} COMMAND $<TARGET_FILE:fusor> rules test --require-tests ${_f})
  set_tests_properties(ruletest_${_level}_${_stem} PROPERTIES LABELS ruletest)
endforeach()
