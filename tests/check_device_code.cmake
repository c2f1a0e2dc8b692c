# build.device_code: compiles the CUDA backend's device code (src/backend/cuda/device/*.cuh) with
# nvcc, through the small programs of tests/nvcc/ that paste the files in the order the generators
# do and instantiate their templates, so that a syntax or type error in a .cuh fails here and not
# only when NVRTC compiles a kernel at run time (tests/test_cuda_*.cpp compile every generated
# kernel with NVRTC where it is found). nvcc is looked for on PATH, then in $CUDA_PATH/bin,
# $CUDA_HOME/bin and /usr/local/cuda/bin; without one the check is skipped, saying so.
# Run alone: cmake -DXP_SOURCE_DIR=<source tree> -DXP_BINARY_DIR=<build tree> -P check_device_code.cmake
cmake_minimum_required(VERSION 3.22)
if(DEFINED INFO)
  include("${INFO}")
endif()
if(NOT XP_SOURCE_DIR OR NOT XP_BINARY_DIR)
  message(FATAL_ERROR "check_device_code.cmake: give -DINFO=<build_checks_info file> or -DXP_SOURCE_DIR and -DXP_BINARY_DIR")
endif()

find_program(nvcc nvcc HINTS "$ENV{CUDA_PATH}/bin" "$ENV{CUDA_HOME}/bin" /usr/local/cuda/bin NO_CACHE)
if(NOT nvcc)
  message("XP_CHECK_SKIPPED: no nvcc on PATH, in $CUDA_PATH/bin, $CUDA_HOME/bin or /usr/local/cuda/bin")
  return()
endif()

# Each program, with the definitions it is compiled with (one line each).
set(programs
  "elementwise.cu"
  "reduce_float.cu"
  "reduce_half.cu"
  "scan.cu|-DXP_SCAN_SERIAL=1"
  "scan.cu|-DXP_SCAN_SERIAL=0"
  "scan_prod.cu|-DXP_SCAN_SERIAL=1"
  "scan_prod.cu|-DXP_SCAN_SERIAL=0"
  "take.cu"
  "sort.cu|-DXP_SORT_WIDE=0"
  "sort.cu|-DXP_SORT_WIDE=1"
  "matmul_int.cu|-DXP_MATMUL_LOGICAL=0"
  "matmul_int.cu|-DXP_MATMUL_LOGICAL=1"
  "random.cu")
set(out "${XP_BINARY_DIR}/device_code_check")
file(MAKE_DIRECTORY "${out}")
set(failures 0)
set(n 0)
foreach(p IN LISTS programs)
  string(REPLACE "|" ";" p "${p}")
  list(GET p 0 file)
  list(LENGTH p len)
  set(defs "")
  if(len GREATER 1)
    list(GET p 1 defs)
  endif()
  math(EXPR n "${n} + 1")
  # The generators' options that matter to the front end: C++ (NVRTC gets -std=c++17 or later) and
  # no FMA contraction; PTX for sm_90 is enough to check the code.
  execute_process(
    COMMAND "${nvcc}" -std=c++20 -arch=sm_90 --fmad=false --ptx ${defs}
      -I "${XP_SOURCE_DIR}/src" -I "${XP_SOURCE_DIR}/include"
      -o "${out}/${n}.ptx" "${XP_SOURCE_DIR}/tests/nvcc/${file}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(rc EQUAL 0 AND NOT stderr MATCHES "warning")
    message(STATUS "ok: ${file} ${defs}")
  else()
    math(EXPR failures "${failures} + 1")
    message("FAILED: nvcc ${file} ${defs} (exit ${rc}):\n${stdout}${stderr}")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "build.device_code: ${failures} of ${n} programs failed with ${nvcc}")
endif()
message(STATUS "build.device_code: ${n} programs compiled with ${nvcc}")
