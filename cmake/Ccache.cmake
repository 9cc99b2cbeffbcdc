# ccache makes the second build of a fresh clone (CI, a new worktree) nearly free: LibTorch's
# headers dominate compile time and do not change between builds.
find_program(ATTNPROF_CCACHE ccache)
if(ATTNPROF_CCACHE)
  set(CMAKE_C_COMPILER_LAUNCHER ${ATTNPROF_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${ATTNPROF_CCACHE})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${ATTNPROF_CCACHE})
endif()
