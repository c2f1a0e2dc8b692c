# build.no_cuda_libraries: libxp.so and the xp CLI must not need any CUDA library at load time
# (docs/design.md, "Principles", 1: libcuda, NVRTC, cuBLAS and NVML are opened with dlopen at run time).
# Checked three ways: the direct DT_NEEDED entries (readelf -d), the whole resolved dependency tree
# (ldd), and the dynamic symbol table: no CUDA API name (cuInit, cudaMalloc, nvrtcCompileProgram,
# nvmlInit, cublasCreate...) may be imported or exported, which would also catch a static cudart.
cmake_minimum_required(VERSION 3.22)
include("${INFO}")

set(forbidden_lib "lib(cuda|cudart|nvrtc|nvidia-ml|cublas|cublasLt|nvJitLink|nvptxcompiler|cufft|curand|cusparse|cusolver|nppc|cudnn)([._-][^ /]*)?\\.so")
set(forbidden_sym "^(cu[A-Z][A-Za-z0-9_]*|cuda[A-Z][A-Za-z0-9_]*|nvrtc[A-Z][A-Za-z0-9_]*|nvml[A-Z][A-Za-z0-9_]*|cublas[A-Z][A-Za-z0-9_]*|__cuda[A-Za-z0-9_]*)(@.*)?$")

set(failures "")
foreach(file IN ITEMS "${XP_LIBRARY}" "${XP_CLI}")
  if(NOT EXISTS "${file}")
    list(APPEND failures "${file} does not exist: build first")
    continue()
  endif()

  execute_process(COMMAND readelf -d --wide "${file}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(APPEND failures "readelf -d ${file} failed: ${err}")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" needed "${out}")
  message(STATUS "${file}:")
  foreach(n IN LISTS needed)
    message(STATUS "  ${n}")
    if(n MATCHES "${forbidden_lib}")
      list(APPEND failures "${file} has a DT_NEEDED entry on a CUDA library: ${n}")
    endif()
  endforeach()

  execute_process(COMMAND ldd "${file}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(APPEND failures "ldd ${file} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line MATCHES "${forbidden_lib}")
      list(APPEND failures "ldd ${file} loads a CUDA library: ${line}")
    endif()
  endforeach()

  execute_process(COMMAND nm -D "${file}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    list(APPEND failures "nm -D ${file} failed: ${err}")
  endif()
  string(REPLACE "\n" ";" lines "${out}")
  foreach(line IN LISTS lines)
    # "                 U cuInit" or "0000000000012340 T cudaMalloc"
    if(line MATCHES "^[0-9a-fA-F ]+ [A-Za-z] ([^ ]+)$")
      if(CMAKE_MATCH_1 MATCHES "${forbidden_sym}")
        list(APPEND failures "${file} has a dynamic symbol from a CUDA API: ${line}")
      endif()
    endif()
  endforeach()
endforeach()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "CUDA libraries at build/link time:\n  ${text}")
endif()
message(STATUS "OK: neither libxp nor the CLI needs or references a CUDA library")
