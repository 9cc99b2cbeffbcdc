# What makes a clean build fast on a small machine (a first run builds attnprof and its worker
# from nothing, on 2 cores in CI). Both are on by default and can be turned off.
#
# Unity builds: most of a translation unit's time here goes to the same headers and the same
# inline code, compiled again in every file: CLI11 alone costs about 5 s per file at -O2 -g (it
# defines global validator objects in its headers), LibTorch's templates more. Combining a
# target's files into a few units pays that once per unit. File-local names (anonymous
# namespaces, statics) must then be unique within a target: the build fails, naming both, when
# two files clash.
option(ATTNPROF_UNITY "Compile each target's sources in combined units of up to 8 files" ON)
if(ATTNPROF_UNITY)
  set(CMAKE_UNITY_BUILD ON)
  set(CMAKE_UNITY_BUILD_BATCH_SIZE 8)
endif()

# Line tables (-g1) instead of full debug info in the default RelWithDebInfo build: backtraces,
# perf and sanitizer reports keep function names with file:line, and a file compiles about a
# quarter faster. -DATTNPROF_FULL_DEBUG_INFO=ON keeps -g (variables and types for a debugger).
option(ATTNPROF_FULL_DEBUG_INFO "Full debug info (-g) in RelWithDebInfo builds, not line tables" OFF)
if(NOT ATTNPROF_FULL_DEBUG_INFO)
  foreach(lang C CXX)
    string(REGEX REPLACE "(^| )-g( |$)" "\\1-g1\\2" CMAKE_${lang}_FLAGS_RELWITHDEBINFO
           "${CMAKE_${lang}_FLAGS_RELWITHDEBINFO}")
  endforeach()
endif()
