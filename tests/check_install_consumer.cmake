# build.install_consumer: `cmake --install` into a temporary prefix gives a usable package:
#   - the tree has include/xp/xp.hpp, <libdir>/libxp.so*, bin/xp, <libdir>/cmake/xp/xpConfig.cmake,
#     and share/xp/bench (the kernel and Python rows of `xp bench launch`);
#   - the installed CLI runs (its RPATH finds the installed library) and prints the version;
#   - tests/consumer, a separate project, finds it with find_package(xp REQUIRED) through
#     CMAKE_PREFIX_PATH, links xp::xp, builds with the same generator and compiler, runs, and
#     prints "xp <version>".
# In a sanitizer build the consumer is compiled with the same sanitizers (libxp needs their runtime).
cmake_minimum_required(VERSION 3.22)
include("${INFO}")

set(work "${XP_BINARY_DIR}/build_checks/install_consumer")
set(prefix "${work}/prefix")
file(REMOVE_RECURSE "${work}")
file(MAKE_DIRECTORY "${work}")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(run_out "${out}" PARENT_SCOPE)
endfunction()

run("${CMAKE_COMMAND}" --install "${XP_TOP_BINARY_DIR}" --prefix "${prefix}")

set(missing "")
foreach(f IN ITEMS "${XP_INSTALL_INCLUDEDIR}/xp/xp.hpp" "${XP_INSTALL_BINDIR}/xp"
                   "${XP_INSTALL_LIBDIR}/cmake/xp/xpConfig.cmake" "${XP_INSTALL_LIBDIR}/cmake/xp/xpConfigVersion.cmake"
                   "${XP_INSTALL_LIBDIR}/libxp.so"
                   # what `xp bench launch` reads beside the installed program, not from the source tree
                   "${XP_INSTALL_DATADIR}/xp/bench/kernels/vector_add.cu"
                   "${XP_INSTALL_DATADIR}/xp/bench/python/launch_rows.py")
  if(NOT EXISTS "${prefix}/${f}")
    list(APPEND missing "${f}")
  endif()
endforeach()
file(GLOB libs RELATIVE "${prefix}" "${prefix}/${XP_INSTALL_LIBDIR}/libxp.so.*")
list(LENGTH libs n_libs)
if(n_libs EQUAL 0)
  list(APPEND missing "${XP_INSTALL_LIBDIR}/libxp.so.<version>")
endif()
if(missing)
  file(GLOB_RECURSE tree RELATIVE "${prefix}" "${prefix}/*")
  list(JOIN missing ", " m)
  list(JOIN tree "\n  " t)
  message(FATAL_ERROR "the installed tree lacks: ${m}\ninstalled:\n  ${t}")
endif()
message(STATUS "installed: ${libs}")

run("${prefix}/${XP_INSTALL_BINDIR}/xp" version)
string(STRIP "${run_out}" cli_version)
# "0.1.0 (source <64 hex digits>)": the version, and the hash of the tree it was built from
if(NOT cli_version MATCHES "^${XP_VERSION} \\(source [0-9a-f]+\\)$")
  message(FATAL_ERROR "installed bin/xp version printed '${cli_version}', expected '${XP_VERSION} (source <hash>)'")
endif()

set(args -S "${XP_SOURCE_DIR}/tests/consumer" -B "${work}/build" -G "${XP_GENERATOR}"
  "-DCMAKE_CXX_COMPILER=${XP_CXX_COMPILER}" "-DCMAKE_PREFIX_PATH=${prefix}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
if(XP_MAKE_PROGRAM)
  list(APPEND args "-DCMAKE_MAKE_PROGRAM=${XP_MAKE_PROGRAM}")
endif()
if(XP_BUILD_TYPE)
  list(APPEND args "-DCMAKE_BUILD_TYPE=${XP_BUILD_TYPE}")
endif()
if(XP_SANITIZE)
  list(APPEND args "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-omit-frame-pointer"
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
endif()
run("${CMAKE_COMMAND}" ${args})
# The package must come from the prefix, not from xp's build tree.
file(STRINGS "${work}/build/CMakeCache.txt" xp_dir REGEX "^xp_DIR:")
string(REGEX REPLACE "^xp_DIR:[A-Z]+=" "" xp_dir "${xp_dir}")
file(REAL_PATH "${xp_dir}" xp_dir_real)
file(REAL_PATH "${prefix}/${XP_INSTALL_LIBDIR}/cmake/xp" want)
if(NOT xp_dir_real STREQUAL want)
  message(FATAL_ERROR "find_package(xp) found ${xp_dir}, not the installed ${want}")
endif()

run("${CMAKE_COMMAND}" --build "${work}/build")
run("${work}/build/xp_consumer")
message(STATUS "consumer says:\n${run_out}")
if(NOT run_out MATCHES "^xp ${XP_VERSION}\n")
  message(FATAL_ERROR "the consumer did not print 'xp ${XP_VERSION}'")
endif()
if(NOT run_out MATCHES "\ncuda: [a-z_]+")
  message(FATAL_ERROR "the consumer did not print a CUDA status reason")
endif()
message(STATUS "OK: installed package found by find_package(xp), consumer built and ran")
