# Compiles a .bpf.c program with clang -target bpf and generates its libbpf skeleton with bpftool.
# collide_bpf_skeleton(<name> <source.bpf.c>) defines the INTERFACE target collide_bpf_<name>,
# which puts <name>.skel.h on the include path of whatever links it.
find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

function(collide_bpf_skeleton name source)
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/bpf)
  set(object ${out_dir}/${name}.bpf.o)
  set(skeleton ${out_dir}/${name}.skel.h)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                  OUTPUT_VARIABLE multiarch OUTPUT_STRIP_TRAILING_WHITESPACE)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${BPF_CLANG} -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror
            -I${CMAKE_CURRENT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/ebpf -I/usr/include/${multiarch}
            -c ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${object}
    DEPENDS ${source} ${ARGN}
    IMPLICIT_DEPENDS C ${CMAKE_CURRENT_SOURCE_DIR}/${source}
    COMMENT "BPF ${source}")
  add_custom_command(
    OUTPUT ${skeleton}
    COMMAND ${BPFTOOL} gen skeleton ${object} name ${name} > ${skeleton}
    DEPENDS ${object}
    COMMENT "BPF skeleton ${name}.skel.h")
  add_custom_target(collide_bpf_${name}_gen DEPENDS ${skeleton})
  add_library(collide_bpf_${name} INTERFACE)
  add_dependencies(collide_bpf_${name} collide_bpf_${name}_gen)
  target_include_directories(collide_bpf_${name} INTERFACE ${out_dir} ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(collide_bpf_${name} INTERFACE PkgConfig::LIBBPF)
endfunction()
