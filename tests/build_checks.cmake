# Build-level checks, run by CTest after the build (labels "build" and "format"):
#   build.no_cuda_libraries  libxp.so and the CLI neither need nor reference CUDA libraries
#   build.no_cuda_headers    nothing compiled into xp or xp_cli includes a CUDA header or has a
#                            CUDA toolkit on its include path (reads the compiler's depfiles)
#   build.exported_symbols   libxp.so exports only xp:: names (no xp::detail, no std::) and has a SONAME
#   build.install_consumer   cmake --install, then find_package(xp) from tests/consumer, built and run
#   format.clang_format      clang-format 14 --dry-run --Werror over include/ src/ tools/ tests/ bench/
# Each check is a `cmake -P` script next to this file; one that cannot run here prints
# "XP_CHECK_SKIPPED: <reason>" and is reported as skipped, never as passed. Facts about this build (paths, generator,
# compiler, object files) reach the scripts through one generated file.
set(_xp_checks_info "${CMAKE_CURRENT_BINARY_DIR}/build_checks_info-$<CONFIG>.cmake")
set(_xp_checks_content "")
foreach(_pair
    "XP_LIBRARY=$<TARGET_FILE:xp>"
    "XP_CLI=$<TARGET_FILE:xp_cli>"
    "XP_OBJECTS=$<TARGET_OBJECTS:xp>$<SEMICOLON>$<TARGET_OBJECTS:xp_cli>"
    "XP_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    "XP_BINARY_DIR=${PROJECT_BINARY_DIR}"
    "XP_TOP_BINARY_DIR=${CMAKE_BINARY_DIR}"
    "XP_VERSION=${PROJECT_VERSION}"
    "XP_GENERATOR=${CMAKE_GENERATOR}"
    "XP_MAKE_PROGRAM=${CMAKE_MAKE_PROGRAM}"
    "XP_CXX_COMPILER=${CMAKE_CXX_COMPILER}"
    "XP_BUILD_TYPE=$<CONFIG>"
    "XP_INSTALL_LIBDIR=${CMAKE_INSTALL_LIBDIR}"
    "XP_INSTALL_BINDIR=${CMAKE_INSTALL_BINDIR}"
    "XP_INSTALL_INCLUDEDIR=${CMAKE_INSTALL_INCLUDEDIR}"
    "XP_SANITIZE=${XP_SANITIZE}")
  string(FIND "${_pair}" "=" _eq)
  string(SUBSTRING "${_pair}" 0 ${_eq} _name)
  math(EXPR _eq "${_eq} + 1")
  string(SUBSTRING "${_pair}" ${_eq} -1 _value)
  string(APPEND _xp_checks_content "set(${_name} [==[${_value}]==])\n")
endforeach()
file(GENERATE OUTPUT "${_xp_checks_info}" CONTENT "${_xp_checks_content}")

function(xp_add_build_check name script)
  cmake_parse_arguments(C "" "TIMEOUT" "LABELS" ${ARGN})
  add_test(NAME ${name}
    COMMAND ${CMAKE_COMMAND} -DINFO=${_xp_checks_info} -P ${CMAKE_CURRENT_SOURCE_DIR}/${script})
  if(NOT C_TIMEOUT)
    set(C_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${C_LABELS}" TIMEOUT ${C_TIMEOUT}
    SKIP_REGULAR_EXPRESSION "XP_CHECK_SKIPPED:")
endfunction()

xp_add_build_check(build.no_cuda_libraries check_no_cuda_libraries.cmake LABELS build)
xp_add_build_check(build.no_cuda_headers check_no_cuda_headers.cmake LABELS build)
xp_add_build_check(build.exported_symbols check_exported_symbols.cmake LABELS build)
xp_add_build_check(build.install_consumer check_install_consumer.cmake LABELS "build;install" TIMEOUT 600)
xp_add_build_check(format.clang_format check_format.cmake LABELS format)
