# collide_test(name LABELS <labels...> SOURCES <files...> LIBS <targets...>)
# Unit tests run anywhere without root; label `privileged` marks tests that need namespaces, BPF or
# DPDK and skip (or, with COLLIDE_REQUIRE_PRIVILEGED=1, fail) where the capability is missing.
function(collide_test name)
  cmake_parse_arguments(ARG "" "" "LABELS;SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  collide_warnings(${name})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gtest_main)
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 300)
endfunction()
