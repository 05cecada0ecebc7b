# Known-flaky tests, from tests/quarantine.txt: each keeps its own labels and gets `quarantine`
# too, which ci/test.sh runs apart (reported, not failing the build). A line is a test's full
# ctest name and, after a space, why it is there (a line without a reason is refused).
set(COLLIDE_QUARANTINE_LIST ${CMAKE_SOURCE_DIR}/tests/quarantine.txt)
set_property(DIRECTORY ${CMAKE_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${COLLIDE_QUARANTINE_LIST})
file(STRINGS ${COLLIDE_QUARANTINE_LIST} quarantine_lines)
set(COLLIDE_QUARANTINED "")
set(quarantine_line_number 0)
foreach(line IN LISTS quarantine_lines)
  math(EXPR quarantine_line_number "${quarantine_line_number} + 1")
  if(line MATCHES "^[ \t]*(#|$)")
    continue()
  endif()
  if(NOT line MATCHES "^([^ \t#]+)[ \t]+[^ \t]")
    message(FATAL_ERROR "${COLLIDE_QUARANTINE_LIST}:${quarantine_line_number}: \"${line}\": a "
                        "quarantined test needs its full name, a space and why it is quarantined")
  endif()
  list(APPEND COLLIDE_QUARANTINED ${CMAKE_MATCH_1})
endforeach()

# collide_test(name [USES_COLLIDE] LABELS <labels...> SOURCES <files...> LIBS <targets...>)
# Unit tests run anywhere without root; label `privileged` marks tests that need namespaces, BPF or
# DPDK and skip (or, with COLLIDE_REQUIRE_PRIVILEGED=1, fail) where the capability is missing.
# USES_COLLIDE: the test runs the `collide` command, at COLLIDE_BIN, on the shipped scenarios
# under COLLIDE_CONFIGS_DIR; the command is built first.
function(collide_test name)
  cmake_parse_arguments(ARG "USES_COLLIDE" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  collide_warnings(${name})
  # A test's own files are optimised for compiling, not for running (-Og): at -O2 the gtest
  # macros' expansions took half of a from-scratch build. What they test is the product's
  # libraries, which keep the build type's optimisation.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${name} PRIVATE -Og)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  if(ARG_USES_COLLIDE)
    target_compile_definitions(${name} PRIVATE COLLIDE_BIN="$<TARGET_FILE:collide>"
                               COLLIDE_CONFIGS_DIR="${PROJECT_SOURCE_DIR}/configs")
    add_dependencies(${name} collide)
  endif()
  # Labels are set after discovery by a script of our own: gtest_discover_tests would split a
  # list of labels into separate properties, and a test would keep only the first label.
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_TESTS
                       PROPERTIES TIMEOUT 300)
  set(labels_script ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${labels_script}
       "if(${name}_TESTS)\n"
       "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\n"
       "endif()\n"
       "foreach(quarantined_test ${COLLIDE_QUARANTINED})\n"
       "  list(FIND ${name}_TESTS \${quarantined_test} found)\n"
       "  if(NOT found EQUAL -1)\n"
       "    set_tests_properties(\${quarantined_test} PROPERTIES LABELS \"${ARG_LABELS};quarantine\")\n"
       "  endif()\n"
       "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_script})
endfunction()
