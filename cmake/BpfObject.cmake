# bpf_object(NAME SOURCE) compiles a CO-RE BPF program with clang -target bpf and generates
# its libbpf skeleton with bpftool, then exports an INTERFACE target NAME_skel whose include
# directory holds NAME.skel.h (libbpf-bootstrap's convention). One line per *.bpf.c:
#   bpf_object(probe probe.bpf.c)
# Programs outside bpf/ find bpf/vmlinux.h on the include path too.
find_program(NP_BPF_CLANG NAMES clang-14 clang REQUIRED)
find_program(NP_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin REQUIRED)

# The target architecture macro bpf_tracing.h needs for BPF_PROG/PT_REGS.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(NP_BPF_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(NP_BPF_ARCH arm64)
else()
  set(NP_BPF_ARCH ${CMAKE_SYSTEM_PROCESSOR})
endif()

function(bpf_object name source)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/${source})
  set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}.bpf.o)
  set(skel ${CMAKE_CURRENT_BINARY_DIR}/${name}.skel.h)
  # Dependencies: every header next to the program (the shared header, vmlinux.h).
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.h)
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${NP_BPF_CLANG} -target bpf -g -O2 -D__TARGET_ARCH_${NP_BPF_ARCH}
            -Wall -Wextra -Werror -Wno-unused-parameter
            -I${CMAKE_CURRENT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/bpf
            # the UAPI headers programs without vmlinux.h include need asm/types.h
            -idirafter /usr/include/${CMAKE_LIBRARY_ARCHITECTURE} -c ${src} -o ${obj}
    DEPENDS ${src} ${headers}
    COMMENT "BPF ${source}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${NP_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "skeleton ${name}.skel.h"
    VERBATIM)
  add_custom_target(${name}_skel_gen DEPENDS ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  # The skeleton and the shared header (foo.h) are both reached as "name.skel.h"/"foo.h".
  target_include_directories(${name}_skel INTERFACE ${CMAKE_CURRENT_BINARY_DIR}
                                                    ${CMAKE_CURRENT_SOURCE_DIR})
endfunction()
