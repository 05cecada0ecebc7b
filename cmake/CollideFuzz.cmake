# collide_fuzz_target(<name> SOURCES <harness.cc...> LIBS <targets...> CORPUS <dir...>)
# A harness defines LLVMFuzzerTestOneInput. CORPUS takes several folders so that a component's
# test fixtures (testdata) seed its fuzzer where they are, and its fuzz_corpus folder holds only
# inputs of its own: one copy of each file. This defines:
# - <name>_replay and the unit test <name>_corpus, which feeds every file under each CORPUS
#   folder to the harness once, so CI replays the corpus with any compiler;
# - with clang, <name>: a libFuzzer binary with AddressSanitizer and UBSan for fuzzing by hand,
#   given every CORPUS folder after a scratch one (where libFuzzer writes what it finds), e.g.
#   `<name> -max_total_time=60 <scratch dir> <CORPUS dir>...`.
function(collide_fuzz_target name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;CORPUS" ${ARGN})
  # A misspelt or moved folder would otherwise just replay less.
  if(NOT ARG_CORPUS)
    message(FATAL_ERROR "collide_fuzz_target(${name}): no CORPUS folder")
  endif()
  foreach(dir IN LISTS ARG_CORPUS)
    if(NOT IS_DIRECTORY ${dir})
      message(FATAL_ERROR "collide_fuzz_target(${name}): CORPUS ${dir} is not a folder")
    endif()
  endforeach()
  add_executable(${name}_replay ${ARG_SOURCES} ${PROJECT_SOURCE_DIR}/common/fuzz/corpus_replay_main.cc)
  collide_warnings(${name}_replay)
  target_link_libraries(${name}_replay PRIVATE ${ARG_LIBS})
  add_test(NAME ${name}_corpus COMMAND ${name}_replay ${ARG_CORPUS})
  set_tests_properties(${name}_corpus PROPERTIES LABELS "unit;fuzz" TIMEOUT 300)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    add_executable(${name} ${ARG_SOURCES})
    collide_warnings(${name})
    target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  endif()
endfunction()
