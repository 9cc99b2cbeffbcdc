# attnprof_stage(NAME [TORCH | CUDA] SOURCES ... DEPS ...)
# One library per harness stage, target attnprof_<NAME>, alias attnprof::<NAME>. Stages that
# need no LibTorch are recorded in the global property ATTNPROF_HOST_STAGES, torch-facing ones
# in ATTNPROF_TORCH_STAGES, ones that need the CUDA toolkit (not LibTorch) in ATTNPROF_CUDA_STAGES; the test binaries link what is recorded there, so adding a stage
# touches only its own folder.
function(attnprof_stage name)
  cmake_parse_arguments(S "TORCH;CUDA" "" "SOURCES;DEPS" ${ARGN})
  add_library(attnprof_${name} STATIC ${S_SOURCES})
  add_library(attnprof::${name} ALIAS attnprof_${name})
  target_include_directories(attnprof_${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(attnprof_${name} PUBLIC ${S_DEPS})
  target_compile_options(attnprof_${name} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra>)
  set_target_properties(attnprof_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(S_CUDA)
    set_property(GLOBAL APPEND PROPERTY ATTNPROF_CUDA_STAGES attnprof_${name})
    set_target_properties(attnprof_${name} PROPERTIES CUDA_ARCHITECTURES "${ATTNPROF_CUDA_ARCHITECTURES}")
  elseif(S_TORCH)
    set_property(GLOBAL APPEND PROPERTY ATTNPROF_TORCH_STAGES attnprof_${name})
    attnprof_use_torch_pch(attnprof_${name})  # cmake/Torch.cmake
  else()
    set_property(GLOBAL APPEND PROPERTY ATTNPROF_HOST_STAGES attnprof_${name})
  endif()
endfunction()
