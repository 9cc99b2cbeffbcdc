# LibTorch from the pinned PyPI torch wheel (ci/torch-version.txt), found through its CMake
# package. A user's own LibTorch (libtorch zip, conda env) works the same way: pass
# -DTorch_DIR=<libtorch>/share/cmake/Torch or put it on CMAKE_PREFIX_PATH.
if(NOT Torch_DIR)
  # ci/setup.sh's venv first (ATTNPROF_VENV, else its default place), then any python3.
  set(_venv "$ENV{ATTNPROF_VENV}")
  if(NOT _venv)
    set(_venv "$ENV{HOME}/.cache/attnprof/venv")
  endif()
  find_program(ATTNPROF_PYTHON NAMES python3 python PATHS "${_venv}/bin" NO_DEFAULT_PATH)
  if(NOT ATTNPROF_PYTHON)
    find_program(ATTNPROF_PYTHON NAMES python3 python)
  endif()
  execute_process(
    COMMAND "${ATTNPROF_PYTHON}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
    OUTPUT_VARIABLE _torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _torch_rc ERROR_QUIET)
  if(_torch_rc EQUAL 0)
    list(APPEND CMAKE_PREFIX_PATH "${_torch_prefix}")
  endif()
endif()
if(NOT ATTNPROF_CUDA)
  # Without a toolkit a CUDA torch wheel cannot be configured (Caffe2Config is fatal about it);
  # a CPU LibTorch still works.
  set(CAFFE2_USE_CUDNN OFF)
endif()
find_package(Torch REQUIRED CONFIG)
message(STATUS "attnprof: LibTorch ${Torch_VERSION} from ${Torch_DIR}")

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
