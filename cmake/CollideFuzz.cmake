# collide_fuzz_target(<name> SOURCES <harness.cc...> LIBS <targets...> CORPUS <dir>)
# A harness defines LLVMFuzzerTestOneInput. This defines:
# - <name>_replay and the unit test <name>_corpus, which feeds every file under CORPUS to the
#   harness once, so CI replays the corpus with any compiler;
# - with clang, <name>: a libFuzzer binary with AddressSanitizer and UBSan for fuzzing by hand,
#   e.g. `<name> -max_total_time=60 <scratch dir> <CORPUS>`.
function(collide_fuzz_target name)
  cmake_parse_arguments(ARG "" "CORPUS" "SOURCES;LIBS" ${ARGN})
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
