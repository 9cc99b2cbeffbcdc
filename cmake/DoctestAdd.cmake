# Registers each doctest test case as its own ctest test (doctest's own doctest_discover_tests),
# so ctest's closing line counts test cases, not binaries.
include(${doctest_DIR}/doctest.cmake OPTIONAL RESULT_VARIABLE _have_doctest_cmake)
if(NOT _have_doctest_cmake)
  find_file(_doctest_cmake doctest.cmake PATHS /usr/lib/cmake/doctest /usr/share/doctest/cmake
            ${doctest_DIR} NO_DEFAULT_PATH)
  include(${_doctest_cmake})
endif()
# GPU tests print "SKIPPED: no GPU (...)" and return where there is none; ctest then reports
# them as skipped, not passed, so a green run on a GPU-less machine says what it did not test.
function(attnprof_add_doctests target)
  cmake_parse_arguments(A "" "LABEL" "" ${ARGN})
  doctest_discover_tests(${target} PROPERTIES LABELS ${A_LABEL}
                         SKIP_REGULAR_EXPRESSION "SKIPPED: no GPU")
endfunction()
