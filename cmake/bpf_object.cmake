# SPDX-License-Identifier: BSD-2-Clause
# Compiling BPF C with clang -target bpf.  BPF_CLANG is empty when no clang
# is found; callers skip their BPF parts then.
find_program(BPF_CLANG NAMES clang clang-16 clang-15 clang-14)

# <linux/types.h> pulls in <asm/types.h>, which Debian keeps under the
# multiarch directory; clang -target bpf does not look there by itself.
execute_process(COMMAND ${CMAKE_C_COMPILER} -print-multiarch
                OUTPUT_VARIABLE BPF_MULTIARCH OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
set(BPF_SYSTEM_INCLUDES)
if(BPF_MULTIARCH AND EXISTS /usr/include/${BPF_MULTIARCH})
  set(BPF_SYSTEM_INCLUDES -I/usr/include/${BPF_MULTIARCH})
endif()

# bpf_object(OUT obj SOURCE src.bpf.c [CPU v2] [INCLUDES -Idir...] [DEPENDS files...])
function(bpf_object)
  cmake_parse_arguments(B "" "OUT;SOURCE;CPU" "INCLUDES;DEPENDS" ${ARGN})
  if(NOT B_CPU)
    set(B_CPU v3)
  endif()
  get_filename_component(name ${B_SOURCE} NAME)
  add_custom_command(OUTPUT ${B_OUT}
    COMMAND ${BPF_CLANG} -target bpf -mcpu=${B_CPU} -O2 -g -Wall -Werror
            ${B_INCLUDES} ${BPF_SYSTEM_INCLUDES} -c ${B_SOURCE} -o ${B_OUT}
    DEPENDS ${B_SOURCE} ${B_DEPENDS}
    COMMENT "BPF ${name}"
    VERBATIM)
endfunction()

# bpf_embed(OUT gen.c OBJECT obj SYMBOL name): the object as a C byte array.
function(bpf_embed)
  cmake_parse_arguments(B "" "OUT;OBJECT;SYMBOL" "" ${ARGN})
  add_custom_command(OUTPUT ${B_OUT}
    COMMAND ${CMAKE_COMMAND} -DIN=${B_OBJECT} -DOUT=${B_OUT} -DSYM=${B_SYMBOL}
            -P ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    DEPENDS ${B_OBJECT} ${PROJECT_SOURCE_DIR}/cmake/embed.cmake
    VERBATIM)
endfunction()
