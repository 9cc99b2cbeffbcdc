# CUDA and CUPTI: ON when a toolkit is found. With it ON, kernels/cuda and the CUPTI tracer are
# compiled and linked, which works on machines without a GPU (nothing runs there).
include(CheckLanguage)
check_language(CUDA)
set(_attnprof_cuda_default OFF)
if(CMAKE_CUDA_COMPILER)
  set(_attnprof_cuda_default ON)
endif()
option(ATTNPROF_CUDA "Build CUDA kernels and the CUPTI tracer" ${_attnprof_cuda_default})

if(ATTNPROF_CUDA)
  # The GPUs people run CI on: A100 (80), L4/L40/RTX 40xx (89), H100/H200 (90). nvcc 13's own
  # default is sm_75, which would run none of our Hopper-tuned paths. Override with
  # -DCMAKE_CUDA_ARCHITECTURES=... (e.g. "90" alone for a faster build).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 89 90)
  endif()
  # CMake 3.25 knows no CUDA20 dialect for nvcc; the kernels need only C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  # torch's cuda.cmake resets CMAKE_CUDA_ARCHITECTURES; CUDA targets use this copy.
  set(ATTNPROF_CUDA_ARCHITECTURES ${CMAKE_CUDA_ARCHITECTURES} CACHE STRING "" FORCE)
  find_package(CUDAToolkit REQUIRED)
  # torch's cmake compares the toolkit's version with the compiler's ("Found two conflicting
  # CUDA versions"); pointing both at the same toolkit avoids it.
  if(NOT CUDAToolkit_VERSION VERSION_EQUAL CMAKE_CUDA_COMPILER_VERSION)
    message(WARNING "nvcc ${CMAKE_CUDA_COMPILER_VERSION} and CUDA toolkit ${CUDAToolkit_VERSION} "
                    "differ; set CUDAToolkit_ROOT and CMAKE_CUDA_COMPILER to one toolkit")
  endif()
  if(NOT TARGET CUDA::cupti)
    message(FATAL_ERROR "ATTNPROF_CUDA is ON but CUPTI was not found in the toolkit "
                        "(install the nvidia-cuda-cupti wheel or turn ATTNPROF_CUDA OFF)")
  endif()
  # CUDA 12.9+ dropped CUDA::nvToolsExt; the torch wheel's cmake still names it. Alias it to the
  # header-only nvtx3 before find_package(Torch) (pytorch#155196).
  if(NOT TARGET CUDA::nvToolsExt AND TARGET CUDA::nvtx3)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
    target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
  endif()
  # Tell torch's cmake the same architectures, so it neither probes for a GPU (there is none
  # on CI) nor falls back to "all known architectures".
  if(NOT DEFINED TORCH_CUDA_ARCH_LIST AND NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST})
    set(_arch_list "")
    foreach(a IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX REPLACE "^([0-9]+)([0-9])(-real|-virtual)?$" "\\1.\\2" _dotted "${a}")
      list(APPEND _arch_list "${_dotted}")
    endforeach()
    set(TORCH_CUDA_ARCH_LIST "${_arch_list}")
  endif()
  message(STATUS "attnprof: CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  message(STATUS "attnprof: CUDA OFF (no toolkit found or ATTNPROF_CUDA=OFF): CPU only")
endif()
