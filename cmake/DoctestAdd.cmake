# Registers each doctest test case of a test binary as exactly one ctest test, so that ctest's
# closing line counts test cases, not binaries, and every test case runs.
#
# Not doctest's own doctest_discover_tests: it splits the binary's list of test cases as a CMake
# list, so a name holding a `;` (or an unbalanced `[`) became two ctest tests whose filters
# matched nothing, and doctest, asked for a test case that does not exist, exits 0. Here the
# discovery (cmake/DoctestAddTests.cmake, run after each link) reads the names line by line and
# writes each into the ctest file as one bracket argument, and every registered test fails
# unless its run executed exactly one test case. tests/registered_check.py checks, on every
# ctest run, that each binary's test cases and its ctest tests are the same set.
#
# A test that cannot decide here prints "SKIPPED: why" and returns (tests/skip.h; GPU tests
# print "SKIPPED: no GPU (...)" where there is none); ctest then reports it as skipped, not
# passed, so a green run says what it did not test.
set(ATTNPROF_DOCTEST_ADD_TESTS ${CMAKE_CURRENT_LIST_DIR}/DoctestAddTests.cmake)

function(attnprof_add_doctests target)
  cmake_parse_arguments(A "" "LABEL" "" ${ARGN})
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_tests.cmake")
  add_custom_command(
    TARGET ${target} POST_BUILD
    BYPRODUCTS "${ctest_file}"
    COMMAND "${CMAKE_COMMAND}"
            -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "TEST_WORKING_DIR=${CMAKE_CURRENT_BINARY_DIR}"
            -D "TEST_LABEL=${A_LABEL}"
            -D "CTEST_FILE=${ctest_file}"
            -P "${ATTNPROF_DOCTEST_ADD_TESTS}"
    VERBATIM)
  # Before the first build the list does not exist yet: a test that fails says so, instead of
  # a ctest run that silently lacks the binary's tests.
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  file(WRITE "${include_file}"
       "if(EXISTS [==[${ctest_file}]==])\n"
       "  include([==[${ctest_file}]==])\n"
       "else()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
  set_property(GLOBAL APPEND PROPERTY ATTNPROF_DOCTEST_TARGETS ${target})
endfunction()
