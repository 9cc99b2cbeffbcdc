# LibTorch, found through the CMake package of a Python environment's torch
# (torch.utils.cmake_prefix_path). ATTNPROF_PYTHON names that python; when it is not given: under
# `pip install --no-build-isolation .` (scikit-build-core, pyproject.toml) the python pip installs
# for, so the executables go beside the torch they were built with; otherwise ci/setup.sh's
# pinned venv (ATTNPROF_VENV, else its default place), then any python3 on PATH. ci/build.sh
# passes the one its rule chose (ci/env.sh) and ATTNPROF_TORCH_SOURCE, that rule's name for it.
# A LibTorch without python (a libtorch zip) works too: -DTorch_DIR=<libtorch>/share/cmake/Torch
# or its prefix on CMAKE_PREFIX_PATH.
set(ATTNPROF_TORCH_SOURCE "" CACHE STRING
    "How this build's torch was chosen, as `attnprof env` prints it (default: worked out here)")
# LibTorch's package caches the paths it found (Torch_DIR, the libraries): once found, another
# python's torch would be mixed with them. A folder configured against one torch is configured
# afresh for another (ci/build.sh does that by itself).
if(Torch_DIR AND DEFINED _ATTNPROF_TORCH_PYTHON_USED AND DEFINED ATTNPROF_PYTHON
   AND NOT ATTNPROF_PYTHON STREQUAL _ATTNPROF_TORCH_PYTHON_USED)
  message(FATAL_ERROR "attnprof: this build folder found LibTorch through "
                      "${_ATTNPROF_TORCH_PYTHON_USED}; ATTNPROF_PYTHON now names "
                      "${ATTNPROF_PYTHON}. Configure it afresh: cmake --fresh ...")
endif()
set(_torch_error "")
if(NOT Torch_DIR)
  set(_venv "$ENV{ATTNPROF_VENV}")
  if(NOT _venv)
    set(_venv "$ENV{HOME}/.cache/attnprof/venv")
  endif()
  if(ATTNPROF_PYTHON)
    set(_how "ATTNPROF_PYTHON")
  elseif(DEFINED SKBUILD AND Python_EXECUTABLE)
    set(ATTNPROF_PYTHON "${Python_EXECUTABLE}" CACHE FILEPATH "The python whose torch this is")
    set(_how "pip install")
  else()
    find_program(ATTNPROF_PYTHON NAMES python3 python PATHS "${_venv}/bin" NO_DEFAULT_PATH)
    set(_how "pinned venv")
    if(NOT ATTNPROF_PYTHON)
      find_program(ATTNPROF_PYTHON NAMES python3 python)
      set(_how "python on PATH")
    endif()
  endif()
  execute_process(
    COMMAND "${ATTNPROF_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE _torch_error ERROR_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _torch_rc)
  if(NOT _torch_rc MATCHES "^[0-9]+$")
    set(_torch_error "${_torch_rc}")  # the python itself could not be started
  endif()
  if(_torch_rc EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
    set(_ATTNPROF_TORCH_PYTHON_USED "${ATTNPROF_PYTHON}" CACHE INTERNAL "")
    set(_ATTNPROF_TORCH_HOW "${_how}" CACHE INTERNAL "")
  endif()
endif()
if(NOT ATTNPROF_CUDA)
  # Without a toolkit a CUDA torch wheel cannot be configured (Caffe2Config is fatal about it);
  # a CPU LibTorch still works.
  set(CAFFE2_USE_CUDNN OFF)
endif()
find_package(Torch CONFIG)
if(NOT Torch_FOUND)
  # The last line of python's traceback says what is missing ("No module named 'torch'").
  string(REGEX REPLACE ".*\n" "" _torch_error "${_torch_error}")
  message(FATAL_ERROR
    "attnprof: no LibTorch: ${ATTNPROF_PYTHON} cannot import torch (${_torch_error}). Name a "
    "python whose environment has torch (-DATTNPROF_PYTHON=...), run ci/setup.sh for the "
    "pinned one, or give a LibTorch (-DTorch_DIR=<libtorch>/share/cmake/Torch). Under pip: "
    "`pip install --no-build-isolation .` in an environment that has torch (an isolated "
    "build environment has none).")
endif()

# Which torch, recorded for `attnprof env` (cmake/torch_source.h.in): how it was chosen, its
# python, its folder (the package's share/cmake/Torch is three levels below) and version.
if(ATTNPROF_TORCH_SOURCE)
  set(ATTNPROF_TORCH_HOW "${ATTNPROF_TORCH_SOURCE}")
elseif(DEFINED _ATTNPROF_TORCH_PYTHON_USED)
  set(ATTNPROF_TORCH_HOW "${_ATTNPROF_TORCH_HOW}")
else()
  set(ATTNPROF_TORCH_HOW "Torch_DIR")
endif()
set(ATTNPROF_TORCH_PYTHON_USED "")
set(_said "${ATTNPROF_TORCH_HOW}")
if(DEFINED _ATTNPROF_TORCH_PYTHON_USED)
  set(ATTNPROF_TORCH_PYTHON_USED "${_ATTNPROF_TORCH_PYTHON_USED}")
  string(APPEND _said " ${ATTNPROF_TORCH_PYTHON_USED}")
endif()
get_filename_component(ATTNPROF_TORCH_PACKAGE "${Torch_DIR}/../../.." ABSOLUTE)
message(STATUS "attnprof: LibTorch ${Torch_VERSION} from ${Torch_DIR} (${_said})")
configure_file(${CMAKE_CURRENT_LIST_DIR}/torch_source.h.in
               ${PROJECT_BINARY_DIR}/generated/attnprof/torch_source.h @ONLY)
add_library(attnprof_torch_source INTERFACE)
add_library(attnprof::torch_source ALIAS attnprof_torch_source)
target_include_directories(attnprof_torch_source INTERFACE ${PROJECT_BINARY_DIR}/generated)

# A CUDA build of attnprof needs a CUDA build of torch of the toolkit's major: a CPU torch has
# no ATen CUDA library to link, and a torch of another major would load a second CUDA runtime
# into the worker. torch's version.py (a wheel's; a libtorch zip has none) says what it was
# built for.
if(ATTNPROF_CUDA)
  set(_torch_cuda "")
  if(EXISTS "${ATTNPROF_TORCH_PACKAGE}/version.py")
    file(STRINGS "${ATTNPROF_TORCH_PACKAGE}/version.py" _torch_cuda REGEX "^cuda")
    string(REGEX MATCH "'([0-9.]+)'" _torch_cuda "${_torch_cuda}")
    set(_torch_cuda "${CMAKE_MATCH_1}")
  endif()
  if(NOT CAFFE2_USE_CUDA)
    message(FATAL_ERROR "attnprof: torch ${Torch_VERSION} at ${ATTNPROF_TORCH_PACKAGE} is a CPU "
                        "build: configure with -DATTNPROF_CUDA=OFF (pip: -C "
                        "cmake.define.ATTNPROF_CUDA=OFF), or use a CUDA build of torch")
  endif()
  if(_torch_cuda)
    string(REGEX MATCH "^[0-9]+" _torch_cuda_major "${_torch_cuda}")
    if(NOT _torch_cuda_major STREQUAL CUDAToolkit_VERSION_MAJOR)
      message(FATAL_ERROR "attnprof: torch ${Torch_VERSION} at ${ATTNPROF_TORCH_PACKAGE} is "
                          "built for CUDA ${_torch_cuda}, the toolkit at "
                          "${ATTNPROF_CUDA_TOOLKIT_ROOT} is ${CUDAToolkit_VERSION}: name a CUDA "
                          "${_torch_cuda_major} toolkit with CUDAToolkit_ROOT (and CUDACXX)")
    endif()
  endif()
endif()

# One interface target carries torch's flags, so the few torch-facing targets say
# "link attnprof::torch" and nothing else. TORCH_CXX_FLAGS holds the ABI define.
add_library(attnprof_torch INTERFACE)
add_library(attnprof::torch ALIAS attnprof_torch)
target_link_libraries(attnprof_torch INTERFACE ${TORCH_LIBRARIES})
separate_arguments(_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
target_compile_options(attnprof_torch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_torch_flags}>)
# torch's own headers are noisy under -Wall; mark them as system headers.
target_include_directories(attnprof_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
# The wheel ships its own {fmt} (v12) in its include folder, which shadows the system's (v9)
# in every torch-facing file. Header-only mode keeps the two apart: torch-facing code uses
# fmt::v12 inline, the other stages fmt::v9 from libfmt; the inline namespaces differ, so
# nothing clashes at link time.
target_compile_definitions(attnprof_torch INTERFACE FMT_HEADER_ONLY=1)
if(ATTNPROF_CUDA)
  # Torch-facing code may use ATen's CUDA headers (device properties, streams) only then.
  target_compile_definitions(attnprof_torch INTERFACE ATTNPROF_HAVE_CUDA=1)
  target_link_libraries(attnprof_torch INTERFACE CUDA::cudart)
endif()

# A precompiled header for the torch-facing targets. Parsing LibTorch's headers is most of what
# compiling a torch-facing file costs (<ATen/ATen.h> alone: about a minute at -O2 -g here,
# against 20-30 s for the rest of a typical runner file), and every such file parses them
# anew. attnprof_torch_pch compiles them once; the stages (cmake/Stage.cmake) and the
# executables that include LibTorch (attnprof_use_torch_pch) reuse that one header, so a build
# pays for it once, not once per target. -DATTNPROF_TORCH_PCH=OFF builds without (to measure
# the difference, or for a compiler that rejects it).
option(ATTNPROF_TORCH_PCH "Precompile LibTorch's heaviest headers for the torch-facing targets" ON)

# ccache caches compiles that use a precompiled header only with -fpch-preprocess and these
# sloppiness settings (its manual's "Precompiled headers"): the .gch is written moments before
# the files that use it, which ccache would otherwise take for a header changed during the
# build. Set per target, so every other compile keeps ccache's strict checks.
function(_attnprof_pch_ccache target)
  if(ATTNPROF_CCACHE)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fpch-preprocess>)
    set_target_properties(${target} PROPERTIES CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;${ATTNPROF_CCACHE}")
  endif()
endfunction()

if(ATTNPROF_TORCH_PCH)
  set(_pch_source ${PROJECT_BINARY_DIR}/generated/torch_pch.cpp)
  file(CONFIGURE OUTPUT ${_pch_source} CONTENT
       "// Generated by cmake/Torch.cmake: the empty source of the target that builds the\n// precompiled LibTorch header.\n")
  add_library(attnprof_torch_pch OBJECT ${_pch_source})
  target_link_libraries(attnprof_torch_pch PRIVATE attnprof_torch)
  set_target_properties(attnprof_torch_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # What the torch-facing files include between them; <ATen/ATen.h> is nearly all of the cost.
  target_precompile_headers(attnprof_torch_pch PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:<ATen/ATen.h$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<ATen/Parallel.h$<ANGLE-R>>
    $<$<COMPILE_LANGUAGE:CXX>:<ATen/record_function.h$<ANGLE-R>>)
  _attnprof_pch_ccache(attnprof_torch_pch)
endif()

# attnprof_use_torch_pch(TARGET): TARGET's C++ files start from the precompiled LibTorch header.
# Worth it where files include <ATen/ATen.h> (directly or through worker/kernel/registry.h and
# the runner's headers): measured side by side, such a file compiles about 4x faster with it;
# a file that includes only light LibTorch headers, or none, is slower with it (loading the
# header costs more than it saves): give such files the source property
# SKIP_PRECOMPILE_HEADERS ON, or leave their target without.
# GCC refuses a precompiled header built with other code-generation settings ("created and used
# with different settings of -fpie" under -Winvalid-pch) and then parses the whole header as
# text, slower than without one. The header is built -fPIC like the stages; CMake compiles
# position-independent executables with -fPIE, so an executable gets -fPIC instead (a PIE links
# PIC objects as well).
function(attnprof_use_torch_pch target)
  if(NOT ATTNPROF_TORCH_PCH)
    return()
  endif()
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fPIC>)
  else()
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_precompile_headers(${target} REUSE_FROM attnprof_torch_pch)
  _attnprof_pch_ccache(${target})
endfunction()
