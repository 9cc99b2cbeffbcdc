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
  # CUPTI's profiler host API (the range-profiler counters) loads libnvperf_host.so with a bare
  # dlopen, and libcupti has no RUNPATH: ld.so finds it only through its cache, where a system
  # toolkit registers its lib folder and a venv's toolkit (NVIDIA's pip wheels) never does; there
  # every host API call fails with CUPTI_ERROR_NOT_INITIALIZED. Linking it to whatever links
  # CUPTI makes it load at start through our binaries' RUNPATH, and CUPTI's dlopen then finds it
  # loaded (by its SONAME). --no-as-needed: no symbol of ours refers to it, and linkers that
  # default to --as-needed (Ubuntu's) would drop it.
  get_target_property(_cupti_lib CUDA::cupti IMPORTED_LOCATION)
  get_filename_component(_cupti_dir "${_cupti_lib}" DIRECTORY)
  find_library(ATTNPROF_NVPERF_HOST nvperf_host HINTS "${_cupti_dir}" NO_DEFAULT_PATH)
  if(ATTNPROF_NVPERF_HOST)
    set(CMAKE_LINK_LIBRARY_USING_ATTNPROF_NO_AS_NEEDED
        "LINKER:--push-state,--no-as-needed" "<LINK_ITEM>" "LINKER:--pop-state")
    set(CMAKE_LINK_LIBRARY_USING_ATTNPROF_NO_AS_NEEDED_SUPPORTED TRUE)
    set_property(TARGET CUDA::cupti APPEND PROPERTY INTERFACE_LINK_LIBRARIES
                 "$<LINK_LIBRARY:ATTNPROF_NO_AS_NEEDED,${ATTNPROF_NVPERF_HOST}>")
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
  # Which toolkit, said at configure time and compiled in (below): a system one and the one
  # ci/setup.sh puts into the venv from NVIDIA's pip wheels build alike, but when a build
  # misbehaves on one machine and not on another, this is the first thing to compare.
  get_filename_component(ATTNPROF_CUDA_TOOLKIT_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
  set(ATTNPROF_CUDA_TOOLKIT_VERSION "${CUDAToolkit_VERSION}")
  if(ATTNPROF_CUDA_TOOLKIT_ROOT MATCHES "/site-packages/nvidia/")
    set(ATTNPROF_CUDA_TOOLKIT_SOURCE "pip wheels")
  else()
    set(ATTNPROF_CUDA_TOOLKIT_SOURCE "system")
  endif()
  # LibTorch's CMake package still finds CUDA through the old FindCUDA, which looks for nvcc on
  # PATH, not where FindCUDAToolkit found it (a venv's toolkit is never on PATH): name the same
  # toolkit to it.
  if(NOT CUDA_TOOLKIT_ROOT_DIR)
    set(CUDA_TOOLKIT_ROOT_DIR "${ATTNPROF_CUDA_TOOLKIT_ROOT}" CACHE PATH
        "The CUDA toolkit LibTorch's CMake package uses (the one attnprof found)")
  endif()
  message(STATUS "attnprof: CUDA ${CUDAToolkit_VERSION} from ${ATTNPROF_CUDA_TOOLKIT_ROOT} "
                 "(${ATTNPROF_CUDA_TOOLKIT_SOURCE}), architectures ${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(ATTNPROF_CUDA_TOOLKIT_ROOT "")
  set(ATTNPROF_CUDA_TOOLKIT_VERSION "")
  set(ATTNPROF_CUDA_TOOLKIT_SOURCE "none")
  message(STATUS "attnprof: CUDA OFF (no toolkit found or ATTNPROF_CUDA=OFF): CPU only")
endif()

# attnprof::cuda_toolkit: the generated header attnprof/cuda_toolkit.h, which says which
# toolkit this build used (`attnprof env` prints it). A header rather than a compile definition,
# so that only the files that include it are rebuilt, and ccache still hits for the others, when
# the toolkit changes.
configure_file(${CMAKE_CURRENT_LIST_DIR}/cuda_toolkit.h.in
               ${PROJECT_BINARY_DIR}/generated/attnprof/cuda_toolkit.h @ONLY)
add_library(attnprof_cuda_toolkit INTERFACE)
add_library(attnprof::cuda_toolkit ALIAS attnprof_cuda_toolkit)
target_include_directories(attnprof_cuda_toolkit INTERFACE ${PROJECT_BINARY_DIR}/generated)
