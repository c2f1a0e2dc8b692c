# build.exported_symbols: the ABI of libxp.so is what include/xp promises, no more.
# The rule, on the dynamic symbols the library defines (`nm -D --defined-only -C`):
#   allowed:  names that begin with "xp::", and the compiler's companions of xp classes:
#             "typeinfo for xp::", "typeinfo name for xp::", "vtable for xp::", "VTT for xp::",
#             "construction vtable for xp::", "(non-)virtual thunk to xp::",
#             "covariant return thunk to xp::", "guard variable for xp::"; and the linker's own
#             markers (_init, _fini, _edata, _end, __bss_start) should they appear;
#   refused:  everything else: anything in xp::detail or an anonymous namespace, and every std::
#             symbol. libstdc++ declares namespace std with explicit default visibility, which
#             -fvisibility=hidden cannot override, so without help GCC exports the weak copies of
#             std templates that xp instantiates (std::set<std::string>::insert, the control block
#             of std::make_shared<xp::Stream::State>, std::to_chars' digit table). The linker
#             version script cmake/xp.map (global: xp::*, typeinfo and vtables of xp; local: *)
#             hides them; this check is what notices if it goes.
# Template functions returning a non-xp type demangle as "<type> xp::f<...>(...)"; xp has none in
# its API today. If one is added, extend the rule here rather than loosening it.
# And: the library has a SONAME (readelf -d), libxp.so.<major>.<minor>, present next to it, and is
# linked with -z now (BIND_NOW).
cmake_minimum_required(VERSION 3.22)
include("${INFO}")

set(failures "")
execute_process(COMMAND nm -D --defined-only -C "${XP_LIBRARY}" OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm -D --defined-only -C ${XP_LIBRARY} failed: ${err}")
endif()
string(REPLACE ";" "\\;" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
list(FILTER lines EXCLUDE REGEX "^$")

set(companions "typeinfo for |typeinfo name for |vtable for |VTT for |construction vtable for |non-virtual thunk to |virtual thunk to |covariant return thunk to |guard variable for ")
set(n_xp 0)
foreach(line IN LISTS lines)
  if(NOT line MATCHES "^[0-9a-fA-F]+ [A-Za-z] (.+)$")
    list(APPEND failures "unexpected nm line: ${line}")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  if(name MATCHES "^(_init|_fini|_edata|_end|__bss_start)$")
    continue()
  endif()
  if(name MATCHES "^(${companions})?xp::" AND NOT name MATCHES "^(${companions})?xp::(detail|\\(anonymous namespace\\))::")
    math(EXPR n_xp "${n_xp} + 1")
    continue()
  endif()
  list(APPEND failures "exported but not public API: ${line}")
endforeach()
message(STATUS "${n_xp} exported xp:: symbols")
if(n_xp EQUAL 0)
  list(APPEND failures "no xp:: symbol is exported at all: is XP_API broken?")
endif()

execute_process(COMMAND readelf -d --wide "${XP_LIBRARY}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(out MATCHES "\\(SONAME\\)[^\n]*\\[([^]]+)\\]")
  set(soname "${CMAKE_MATCH_1}")
  message(STATUS "SONAME ${soname}")
  if(NOT soname MATCHES "^libxp\\.so\\.[0-9]+")
    list(APPEND failures "SONAME '${soname}' is not libxp.so.<version>")
  endif()
  get_filename_component(libdir "${XP_LIBRARY}" DIRECTORY)
  if(NOT EXISTS "${libdir}/${soname}")
    list(APPEND failures "no file or link named ${soname} next to ${XP_LIBRARY}")
  endif()
else()
  list(APPEND failures "${XP_LIBRARY} has no SONAME")
endif()
# Linked with -z now: imports bound at load, none left to a kernel launch's first call.
if(NOT out MATCHES "\\(FLAGS_1\\)[^\n]*NOW" AND NOT out MATCHES "\\(FLAGS\\)[^\n]*BIND_NOW")
  list(APPEND failures "${XP_LIBRARY} is not linked with -z now (no BIND_NOW in readelf -d)")
endif()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "libxp.so breaks its rules:\n  ${text}")
endif()
message(STATUS "OK: libxp.so exports only xp:: API and has a SONAME")
