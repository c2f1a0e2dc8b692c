# Build-level checks, run by CTest after the build (labels "build" and "format"):
#   build.no_cuda_libraries  libxp.so and the CLI neither need nor reference CUDA libraries
#   build.no_cuda_headers    nothing compiled into xp or xp_cli includes a CUDA header or has a
#                            CUDA toolkit on its include path (reads the compiler's depfiles)
#   build.exported_symbols   libxp.so exports only xp:: names (no xp::detail, no std::), has a SONAME
#                            and is linked with -z now
#   build.install_consumer   cmake --install, then find_package(xp) from tests/consumer, built and run
#   build.getenv_only_in_config  only src/runtime/config.cpp reads the environment (include/ src/ tools/)
#   build.layers             every #include of xp's own files in include/xp src/ tools/ goes down the
#                            layers of docs/design.md ("Layers"); exceptions listed in the script
#   build.device_code        the CUDA backend's device code (src/backend/cuda/device/) compiles with nvcc
#                            (tests/nvcc/), skipped where there is no nvcc
#   format.clang_format      clang-format 14 --dry-run --Werror over include/ src/ tools/ tests/ bench/
# Each check is a `cmake -P` script next to this file; one that cannot run here prints
# "XP_CHECK_SKIPPED: <reason>" and is reported as skipped, never as passed. Facts about this build
# (paths, generator, compiler, object files) reach the scripts through one generated file.
set(_xp_checks_info "${CMAKE_CURRENT_BINARY_DIR}/build_checks_info-$<CONFIG>.cmake")

# The targets whose objects end up in libxp.so or the CLI: xp, xp_cli and the object libraries
# they take objects from ($<TARGET_OBJECTS:...> in SOURCES, or an OBJECT library they link).
set(_xp_object_targets "")
foreach(_t IN ITEMS xp xp_cli)
  list(APPEND _xp_object_targets ${_t})
  get_target_property(_srcs ${_t} SOURCES)
  get_target_property(_libs ${_t} LINK_LIBRARIES)
  foreach(_s IN LISTS _srcs _libs)
    if(_s MATCHES "^\\$<TARGET_OBJECTS:([^>]+)>$")
      list(APPEND _xp_object_targets ${CMAKE_MATCH_1})
    elseif(TARGET "${_s}")
      get_target_property(_type "${_s}" TYPE)
      if(_type STREQUAL "OBJECT_LIBRARY")
        list(APPEND _xp_object_targets ${_s})
      endif()
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES _xp_object_targets)
set(_xp_objects_genex "")
foreach(_t IN LISTS _xp_object_targets)
  string(APPEND _xp_objects_genex "$<TARGET_OBJECTS:${_t}>$<SEMICOLON>")
endforeach()

set(_xp_checks_content "")
foreach(_pair
    "XP_LIBRARY=$<TARGET_FILE:xp>"
    "XP_CLI=$<TARGET_FILE:xp_cli>"
    "XP_OBJECTS=${_xp_objects_genex}"
    "XP_OBJECT_TARGETS=${_xp_object_targets}"
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
    "XP_INSTALL_DATADIR=${CMAKE_INSTALL_DATADIR}"
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
# The checks of the sources alone give the same answer in every build: they run in the builds
# without sanitizers (the release stage of scripts/test.sh), not again under each sanitizer.
if(NOT XP_SANITIZE AND NOT XP_SANITIZE_THREAD)
  xp_add_build_check(build.getenv_only_in_config check_getenv.cmake LABELS build)
  xp_add_build_check(build.layers check_layers.cmake LABELS build)
  xp_add_build_check(build.device_code check_device_code.cmake LABELS build TIMEOUT 600)
  xp_add_build_check(format.clang_format check_format.cmake LABELS format)
endif()
