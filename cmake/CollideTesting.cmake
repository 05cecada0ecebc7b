# collide_test(name LABELS <labels...> SOURCES <files...> LIBS <targets...>)
# Unit tests run anywhere without root; label `privileged` marks tests that need namespaces, BPF or
# DPDK and skip (or, with COLLIDE_REQUIRE_PRIVILEGED=1, fail) where the capability is missing.
function(collide_test name)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  collide_warnings(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  # Labels are set after discovery by a script of our own: gtest_discover_tests would split a
  # list of labels into separate properties, and a test would keep only the first label.
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_TESTS
                       PROPERTIES TIMEOUT 300)
  set(labels_script ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${labels_script}
       "if(${name}_TESTS)\n"
       "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${ARG_LABELS}\")\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_script})
endfunction()
