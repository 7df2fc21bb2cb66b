# One helper per kind of target, so that every target is built the same way:
# C++20, warnings as errors for project code, and third-party headers as system headers.

set(BSW_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Werror)

# BSW_SANITIZE=address,undefined or thread instruments every target (make test-sanitize). A finding
# ends the process with an error (-fno-sanitize-recover), so the test that hit it fails.
set(BSW_SANITIZE "" CACHE STRING "Sanitizers to build with: address,undefined or thread")
if(BSW_SANITIZE)
  add_compile_options(-fsanitize=${BSW_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${BSW_SANITIZE})
  # GCC 12 reports false -Wmaybe-uninitialized, -Wstringop-overflow and -Warray-bounds inside
  # libstdc++ once instrumented (the instrumentation defeats its flow analysis).
  list(APPEND BSW_WARNINGS -Wno-maybe-uninitialized -Wno-stringop-overflow -Wno-array-bounds)
endif()

# bsw_cc_library(NAME name SRCS a.cc ... DEPS target ...)
function(bsw_cc_library)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PUBLIC ${PROJECT_SOURCE_DIR})
  target_compile_options(${ARG_NAME} PRIVATE ${BSW_WARNINGS})
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS})
endfunction()

# bsw_cc_binary(NAME name SRCS main.cc ... DEPS target ...)
function(bsw_cc_binary)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${ARG_NAME} ${ARG_SRCS})
  target_include_directories(${ARG_NAME} PRIVATE ${PROJECT_SOURCE_DIR})
  target_compile_options(${ARG_NAME} PRIVATE ${BSW_WARNINGS})
  target_link_libraries(${ARG_NAME} PRIVATE ${ARG_DEPS})
endfunction()

# bsw_cc_test(NAME name SRCS a_test.cc ... DEPS target ... LABELS unit|e2e|trainer)
# Registers each gtest case with ctest on its own, so ctest's summary counts test cases. A case
# that hangs fails after 300 s (the slowest take under a minute, sanitized) instead of holding
# `make test` until CI's limit ends it unnamed.
function(bsw_cc_test)
  cmake_parse_arguments(ARG "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  bsw_cc_binary(NAME ${ARG_NAME} SRCS ${ARG_SRCS} DEPS ${ARG_DEPS} GTest::gmock_main)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  gtest_discover_tests(${ARG_NAME}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 300
    DISCOVERY_TIMEOUT 60)
endfunction()
