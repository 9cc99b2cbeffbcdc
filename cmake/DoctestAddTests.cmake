# Writes the ctest file of one doctest binary: one add_test per test case it lists. Run after
# each link by attnprof_add_doctests (cmake/DoctestAdd.cmake) as
#   cmake -D TEST_EXECUTABLE=... -D TEST_WORKING_DIR=... -D TEST_LABEL=... -D CTEST_FILE=...
#         -P DoctestAddTests.cmake
# The names are never held in a CMake list (a `;` or `[` in a name would split or join them):
# the listing is cut at newlines by hand, and each name is written as one bracket argument.
cmake_minimum_required(VERSION 3.25)

execute_process(
  COMMAND "${TEST_EXECUTABLE}" --list-test-cases --no-version=true
  OUTPUT_VARIABLE listing
  RESULT_VARIABLE result
  WORKING_DIRECTORY "${TEST_WORKING_DIR}")
if(NOT result EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --list-test-cases failed (${result}):\n${listing}")
endif()

# A bracket argument that holds TEXT whatever it contains: [=[...]=] with enough '='.
function(bracket text out)
  set(eq "=")
  while(text MATCHES "\\]${eq}\\]")
    string(APPEND eq "=")
  endwhile()
  set(${out} "[${eq}[${text}]${eq}]" PARENT_SCOPE)
endfunction()

# Every registered test must run exactly one test case: doctest exits 0 when its filter matches
# none, and a name holding doctest's wildcards (* or ?) could match several. Its summary line
# reads "[doctest] test cases:      1 |      1 passed | ...".
bracket("test cases: +([02-9]|[1-9][0-9]+) \\|" fail_regex)
# A test that cannot decide here (no GPU, a busy machine) prints "SKIPPED: why" and returns
# (tests/skip.h): reported as skipped, never as passed.
bracket("SKIPPED: " skip_regex)
bracket("${TEST_WORKING_DIR}" workdir)
bracket("${TEST_EXECUTABLE}" exe)

set(script "")
set(count 0)
set(rest "${listing}")
while(NOT rest STREQUAL "")
  string(FIND "${rest}" "\n" nl)
  if(nl EQUAL -1)
    set(line "${rest}")
    set(rest "")
  else()
    string(SUBSTRING "${rest}" 0 ${nl} line)
    math(EXPR next "${nl} + 1")
    string(SUBSTRING "${rest}" ${next} -1 rest)
  endif()
  string(REGEX REPLACE "\r$" "" line "${line}")
  # doctest's own lines: rulers of '=' and lines starting "[doctest] ".
  if(line STREQUAL "" OR line MATCHES "^=+$" OR line MATCHES "^\\[doctest\\] ")
    continue()
  endif()
  # doctest's --test-case splits its value at ',' unless escaped, and '\' escapes.
  string(REPLACE "\\" "\\\\" filter "${line}")
  string(REPLACE "," "\\," filter "${filter}")
  bracket("${line}" name)
  bracket("--test-case=${filter}" arg)
  # A test case whose name ends "(runs alone)" measures the machine itself (a CPU hog beside
  # a case, or its absence): ctest runs it with no other test beside it.
  set(serial "")
  if(line MATCHES "\\(runs alone\\)$")
    set(serial " RUN_SERIAL TRUE")
  endif()
  string(APPEND script
    "add_test(${name} ${exe} ${arg} --case-sensitive=true --no-version=true)\n"
    "set_tests_properties(${name} PROPERTIES WORKING_DIRECTORY ${workdir} LABELS ${TEST_LABEL}"
    " FAIL_REGULAR_EXPRESSION ${fail_regex} SKIP_REGULAR_EXPRESSION ${skip_regex}${serial})\n")
  math(EXPR count "${count} + 1")
endwhile()
if(count EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} lists no test case:\n${listing}")
endif()
file(WRITE "${CTEST_FILE}" "${script}")
