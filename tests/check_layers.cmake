# build.layers: every #include of one of xp's own files under src/, include/xp and tools/ goes down
# the layers of docs/design.md ("Layers"), never up or sideways:
#
#   runtime < memory < jit < backend < backend/cpu, backend/cuda < array
#
# - `backend` is the folder src/backend itself (the table, ir, the registry, the reduction ops,
#   philox); each folder under it (cpu, cuda, and any backend to come) is a backend, and backends
#   are siblings: none includes another.
# - A layer may include its own folder, any layer below it, and the public headers (xp/...).
# - include/xp includes only xp/; tools/ includes only xp/ and its own files (the public API).
# - src/array reaches the backends through the table alone (backend/backend.hpp, backend/ir.hpp):
#   it includes nothing of backend/cpu or backend/cuda, although they are below it.
# - src/array never includes the CUDA side of the runtime (the driver tables, the CUDA ABI, NVML,
#   NVRTC's search): it asks a backend or a runtime function that does not name CUDA.
# Both "..." and <...> includes are read; a <...> one that is not one of xp's files is a system or
# third-party header and is ignored, while a "..." one that resolves nowhere is an error (a file
# that moved, or a CUDA source in a raw string that begins a line: write it another way).
# Exceptions are listed below with their reasons; an exception that no longer occurs is an error
# too, so that the list stays true. Run alone: cmake -DXP_SOURCE_DIR=<source tree> -P check_layers.cmake
cmake_minimum_required(VERSION 3.22)
if(DEFINED INFO)
  include("${INFO}")
endif()
if(NOT XP_SOURCE_DIR)
  message(FATAL_ERROR "check_layers.cmake: give -DINFO=<build_checks_info file> or -DXP_SOURCE_DIR=<source tree>")
endif()

# The allowed crossings: "<including file>|<include as written>", each with its reason. None today.
set(allowed_crossings
)

# Headers generated into the build tree, and the layer (and rank, below) each belongs to.
set(generated_headers
  "xp_generated/philox_text.hpp|backend|4"  # the text of src/backend/philox.hpp (CMakeLists.txt)
  "xp_generated/device_code.hpp|backend/cuda|5"  # the text of src/backend/cuda/device/*.cuh
  "xp_generated/cpu_prelude.hpp|jit|3"  # the text of src/jit/cpu_device/*.h
)

# Headers of src/runtime that name CUDA (its ABI, the driver's tables, NVML, NVRTC's search).
set(cuda_runtime_headers runtime/cuda_abi.hpp runtime/driver.hpp runtime/nvml.hpp
  runtime/nvrtc_search.hpp)

# The layer of a path relative to the source tree ("" when it is in none), and its rank: a file may
# include a layer of lower rank, or its own. Every folder under src/backend/ is a backend, a
# sibling of the others.
function(layer_of rel out_layer out_rank)
  if(rel MATCHES "^include/xp/")
    set(l xp)
    set(r 0)
  elseif(rel MATCHES "^src/runtime/")
    set(l runtime)
    set(r 1)
  elseif(rel MATCHES "^src/memory/")
    set(l memory)
    set(r 2)
  elseif(rel MATCHES "^src/jit/")
    set(l jit)
    set(r 3)
  elseif(rel MATCHES "^src/backend/[^/]+$")
    set(l backend)
    set(r 4)
  elseif(rel MATCHES "^src/backend/([^/]+)/")
    set(l backend/${CMAKE_MATCH_1})
    set(r 5)
  elseif(rel MATCHES "^src/array/")
    set(l array)
    set(r 6)
  elseif(rel MATCHES "^tools/")
    set(l tools)
    set(r 7)
  else()
    set(l "")
    set(r -1)
  endif()
  set(${out_layer} "${l}" PARENT_SCOPE)
  set(${out_rank} "${r}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files LIST_DIRECTORIES false
  "${XP_SOURCE_DIR}/include/xp/*" "${XP_SOURCE_DIR}/src/*" "${XP_SOURCE_DIR}/tools/*")
list(FILTER files INCLUDE REGEX "\\.(c|cc|cpp|cxx|h|hh|hpp|hxx|inl|cu|cuh)$")
list(SORT files)
set(failures "")
set(used_exceptions "")
set(edges 0)
foreach(f IN LISTS files)
  file(RELATIVE_PATH rel "${XP_SOURCE_DIR}" "${f}")
  layer_of("${rel}" from from_rank)
  if(from STREQUAL "")
    list(APPEND failures "${rel}: in no layer (add its folder to docs/design.md, \"Layers\", and to this check)")
    continue()
  endif()
  get_filename_component(dir "${f}" DIRECTORY)
  file(READ "${f}" text)
  # One list element per line: characters that CMake's lists treat specially are masked first.
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE ";" "<sc>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*([<\"])([^\">]+)[\">]")
      continue()
    endif()
    set(quoted OFF)
    if(CMAKE_MATCH_1 STREQUAL "\"")
      set(quoted ON)
    endif()
    set(inc "${CMAKE_MATCH_2}")
    # Where the compiler finds it: the including file's folder first (for "..."), then include/ and
    # src/ (xp's include path; tools/ compile without src/, so such an include there fails to build
    # as well as here), then the generated headers.
    set(target "")
    set(to "")
    set(to_rank -1)
    if(quoted AND EXISTS "${dir}/${inc}" AND NOT IS_DIRECTORY "${dir}/${inc}")
      file(RELATIVE_PATH target "${XP_SOURCE_DIR}" "${dir}/${inc}")
    elseif(inc MATCHES "^xp/" AND EXISTS "${XP_SOURCE_DIR}/include/${inc}")
      set(target "include/${inc}")
    elseif(EXISTS "${XP_SOURCE_DIR}/src/${inc}" AND NOT IS_DIRECTORY "${XP_SOURCE_DIR}/src/${inc}")
      set(target "src/${inc}")
    else()
      foreach(g IN LISTS generated_headers)
        string(REPLACE "|" ";" g "${g}")
        list(GET g 0 g_path)
        list(GET g 1 g_layer)
        if(inc STREQUAL g_path)
          set(target "(generated) ${inc}")
          list(GET g 2 to_rank)
          set(to "${g_layer}")
        endif()
      endforeach()
    endif()
    if(target STREQUAL "")
      if(quoted)
        list(APPEND failures "${rel}:${n}: #include \"${inc}\" resolves to no file of xp's")
      endif()
      continue()
    endif()
    if(to STREQUAL "")
      layer_of("${target}" to to_rank)
    endif()
    math(EXPR edges "${edges} + 1")
    set(why "")
    if(from STREQUAL "xp")
      if(NOT to STREQUAL "xp")
        set(why "the public headers include only xp/")
      endif()
    elseif(from STREQUAL "tools")
      if(NOT to STREQUAL "xp" AND NOT to STREQUAL "tools")
        set(why "tools/ use the public API only")
      endif()
    elseif(to STREQUAL "tools" OR to STREQUAL "")
      set(why "${target} is in no layer a library file may include")
    elseif(to_rank GREATER from_rank)
      set(why "upward: ${to} is above ${from}")
    elseif(to_rank EQUAL from_rank AND NOT to STREQUAL from)
      set(why "sideways: ${from} and ${to} are siblings")
    elseif(from STREQUAL "array" AND to MATCHES "^backend/")
      set(why "the array layer reaches a backend through its table (backend/backend.hpp), never its own files")
    elseif(from STREQUAL "array" AND inc IN_LIST cuda_runtime_headers)
      set(why "the array layer names no CUDA: ${inc} is the CUDA side of the runtime")
    endif()
    if(why STREQUAL "")
      continue()
    endif()
    if("${rel}|${inc}" IN_LIST allowed_crossings)
      list(APPEND used_exceptions "${rel}|${inc}")
      continue()
    endif()
    list(APPEND failures "${rel}:${n}: #include \"${inc}\" (${from} -> ${to}): ${why}")
  endforeach()
endforeach()
foreach(e IN LISTS allowed_crossings)
  if(NOT e IN_LIST used_exceptions)
    list(APPEND failures "allowed crossing '${e}' no longer occurs: remove it from tests/check_layers.cmake")
  endif()
endforeach()
if(failures)
  list(JOIN failures "\n  " text)
  string(REPLACE "<sc>" ";" text "${text}")
  string(REPLACE "<lb>" "[" text "${text}")
  string(REPLACE "<rb>" "]" text "${text}")
  string(REPLACE "<bs>" "\\" text "${text}")
  message(FATAL_ERROR "includes that cross xp's layers (docs/design.md, \"Layers\"):\n  ${text}")
endif()
list(LENGTH files nfiles)
list(LENGTH allowed_crossings nallowed)
message(STATUS "OK: ${edges} includes of xp's own files in ${nfiles} files under include/xp src/ tools/ follow the "
               "layers (${nallowed} listed exceptions)")
