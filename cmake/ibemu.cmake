# SPDX-License-Identifier: MIT
# Build helpers shared by the folders, in the manner of rdma-core's
# buildlib/rdma_functions.cmake: one call per ABI-compatible client library
# and per fuzz target, so that adding one is a few lines.

set(IBEMU_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# ibemu_abi_library(<name> SOVERSION <n> MAP <file> REFERENCE <path>
#                   SOURCES <src>... [VERSION <full version>]
#                   [EXTRA_VERSION <node>])
#
# lib<name>.so.<SOVERSION> in build/lib, a shared library that stands in
# for the system library at REFERENCE: built with -fvisibility=hidden (the
# API is exported by attribute), the linker version script MAP (relative
# to the calling folder) and --no-undefined. VERSION defaults to
# <SOVERSION>.<project version>. Adds the ctest entry abi.<name>, which
# fails unless the library defines the same dynamic symbols with the same
# versions and has the same SONAME as REFERENCE (skipped when REFERENCE is
# absent). EXTRA_VERSION names the one version node of ibemu's own that the
# library may add (its symbols are listed, the rest must match exactly). Include directories and link libraries are the caller's
# (target_include_directories, target_link_libraries on <name>).
function(ibemu_abi_library name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG ""
    "SOVERSION;VERSION;MAP;REFERENCE;EXTRA_VERSION" "SOURCES")
  foreach(req SOVERSION MAP REFERENCE SOURCES)
    if(NOT ARG_${req})
      message(FATAL_ERROR "ibemu_abi_library(${name}): ${req} is required")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "ibemu_abi_library(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_VERSION)
    set(ARG_VERSION ${ARG_SOVERSION}.${PROJECT_VERSION})
  endif()
  get_filename_component(map ${ARG_MAP} ABSOLUTE
    BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})

  add_library(${name} SHARED ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES
    OUTPUT_NAME ${name}
    SOVERSION ${ARG_SOVERSION}
    VERSION ${ARG_VERSION}
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib
    LINK_DEPENDS ${map})
  target_link_options(${name} PRIVATE
    -Wl,--version-script=${map}
    -Wl,--no-undefined)

  add_test(NAME abi.${name}
    COMMAND ${IBEMU_CMAKE_DIR}/abi-check ${CMAKE_OBJDUMP}
      $<TARGET_FILE:${name}> ${ARG_REFERENCE} ${ARG_EXTRA_VERSION})
  set_tests_properties(abi.${name} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77)
endfunction()

# ibemu_fuzz_target(<name> SOURCES <src>... [LIBS <lib>...] RUNS <n>
#                   MAX_LEN <bytes> SEEDS <dir>... [TIMEOUT <s>])
#
# The libFuzzer program fuzz-<name> and the ctest entry fuzz.<name>, which
# runs it RUNS times on inputs of at most MAX_LEN bytes. libFuzzer writes
# the inputs it finds into its first corpus directory, so that one is
# fuzz-<name>-corpus in the build tree; the SEEDS directories (relative to
# the calling folder) are only read. TIMEOUT defaults to 600 s. Only for
# builds with IBEMU_FUZZ (clang). The target fuzz-all builds every
# fuzz-<name>: these calls are the one list of fuzz targets, which
# ./ibemu.sh test builds and runs (ctest -R '^fuzz\.').
function(ibemu_fuzz_target name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "RUNS;MAX_LEN;TIMEOUT"
    "SOURCES;LIBS;SEEDS")
  foreach(req SOURCES RUNS MAX_LEN SEEDS)
    if(NOT ARG_${req})
      message(FATAL_ERROR "ibemu_fuzz_target(${name}): ${req} is required")
    endif()
  endforeach()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
      "ibemu_fuzz_target(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  set(seeds)
  foreach(dir ${ARG_SEEDS})
    get_filename_component(dir ${dir} ABSOLUTE
      BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND seeds ${dir})
  endforeach()
  set(corpus ${CMAKE_CURRENT_BINARY_DIR}/fuzz-${name}-corpus)

  add_executable(fuzz-${name} ${ARG_SOURCES})
  if(NOT TARGET fuzz-all)
    add_custom_target(fuzz-all)
  endif()
  add_dependencies(fuzz-all fuzz-${name})
  target_link_libraries(fuzz-${name} PRIVATE ${ARG_LIBS})
  target_compile_options(fuzz-${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz-${name} PRIVATE -fsanitize=fuzzer)
  file(MAKE_DIRECTORY ${corpus})
  add_test(NAME fuzz.${name}
    COMMAND fuzz-${name} -runs=${ARG_RUNS} -max_len=${ARG_MAX_LEN}
      ${corpus} ${seeds})
  set_tests_properties(fuzz.${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT})
endfunction()
