# The benchmark scripts' own logic that needs no ORT: the agreement check's float tolerance
# (bench/compare_ort.py compare_float), on outputs the test writes itself.
add_test(NAME bench_compare_tolerance
  COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tests/bench/compare_tolerance_test.py)
set_tests_properties(bench_compare_tolerance PROPERTIES LABELS bench TIMEOUT 120)
