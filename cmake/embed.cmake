# SPDX-License-Identifier: BSD-2-Clause
# Turn a file into a C source defining a byte array and its length, so the
# compiled BPF objects travel inside bpfmap-bench (no path to find at run time,
# no xxd needed).  Usage:
#   cmake -DIN=file.bpf.o -DOUT=file.c -DSYM=name -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR len "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# Break the one long line every 16 bytes to keep the file readable.
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){16})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}"
  "/* Generated from ${IN} by embed.cmake; do not edit. */\n"
  "#include <stddef.h>\n"
  "const unsigned char ${SYM}[] __attribute__((aligned(8))) = {\n${bytes}\n};\n"
  "const size_t ${SYM}_len = ${len};\n")
