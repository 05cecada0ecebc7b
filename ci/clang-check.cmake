# Writes a ninja file that runs the product's compile commands of a finished build through clang
# with -fsyntax-only: clang parses and type-checks each translation unit with the project's own flags
# (warnings as errors) and generates no code. That is what a second compiler adds over the gcc
# build, at a fraction of a second full build's time, and it reuses the generated headers
# (protobuf, BPF skeletons) the gcc build already made. Warning options only gcc knows (set for
# gcc alone by the build) are not clang's to judge: clang is told to ignore unknown ones.
#
#   cmake -DCOMPILE_COMMANDS=<build>/compile_commands.json -DOUT=<folder> -P ci/clang-check.cmake
#   ninja -C <folder>
cmake_minimum_required(VERSION 3.25)
if(NOT COMPILE_COMMANDS OR NOT OUT)
  message(FATAL_ERROR "usage: cmake -DCOMPILE_COMMANDS=FILE -DOUT=FOLDER -P clang-check.cmake")
endif()
file(READ "${COMPILE_COMMANDS}" commands)
string(JSON count LENGTH "${commands}")
if(count EQUAL 0)
  message(FATAL_ERROR "${COMPILE_COMMANDS} holds no compile commands")
endif()
set(ninja "rule check\n  command = cd $dir && $cmd -fsyntax-only -Wno-unknown-warning-option && touch ${OUT}/$out\n  description = clang $file\n")
math(EXPR last "${count} - 1")
set(checked 0)
get_filename_component(source_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
foreach(i RANGE ${last})
  string(JSON dir GET "${commands}" ${i} directory)
  string(JSON cmd GET "${commands}" ${i} command)
  string(JSON file GET "${commands}" ${i} file)
  # The product's code only: tests are gcc's alone, which keeps CI inside its hour (checking them
  # too doubled this pass, to 11 minutes).
  file(RELATIVE_PATH relative "${source_root}" "${file}")
  if(relative MATCHES "_test\\.cc$" OR relative MATCHES "^tests/")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  # The build's compiler is the first word; the rest (flags, defines, includes) stays as it is.
  # (string(REGEX REPLACE) would re-anchor "^" after each match, so cut at the first space.)
  string(FIND "${cmd}" " " space)
  math(EXPR space "${space} + 1")
  string(SUBSTRING "${cmd}" ${space} -1 flags)
  if(file MATCHES "\\.c$")
    set(compiler clang)
  else()
    set(compiler clang++)
  endif()
  string(REPLACE "$" "$$" flags "${flags}")
  string(APPEND ninja "build stamp/${i}: check\n  dir = ${dir}\n  cmd = ${compiler} ${flags}\n  file = ${file}\n")
endforeach()
file(MAKE_DIRECTORY "${OUT}/stamp")
file(WRITE "${OUT}/build.ninja" "${ninja}")
message(STATUS "clang check of ${checked} of ${count} translation units (tests left out) written to ${OUT}/build.ninja")
