# SPDX-License-Identifier: BSD-2-Clause
# The installed static archive of library target STATIC_TARGET: one
# relocatable object of all its objects, whose hidden symbols are made local.
# The build's own archive keeps them global (the tests and the benchmark
# reach into the internals); an installed one that did made a consumer's own
# count_init() clash with the library's at link time, or, worse, bound the
# library's internal calls to a consumer's cpu_possible().
function(bpfmap_public_archive STATIC_TARGET NAME)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/public)
  set(obj ${dir}/${NAME}.o)
  set(archive ${dir}/lib${NAME}.a)
  add_custom_command(OUTPUT ${archive}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${CMAKE_LINKER} -r -o ${obj} --whole-archive $<TARGET_FILE:${STATIC_TARGET}>
    COMMAND ${CMAKE_OBJCOPY} --localize-hidden ${obj}
    COMMAND ${CMAKE_COMMAND} -E rm -f ${archive}
    COMMAND ${CMAKE_AR} qc ${archive} ${obj}
    COMMAND ${CMAKE_RANLIB} ${archive}
    DEPENDS ${STATIC_TARGET}
    COMMENT "Public archive lib${NAME}.a: internal symbols local"
    VERBATIM)
  add_custom_target(${STATIC_TARGET}_public ALL DEPENDS ${archive})
  install(FILES ${archive} DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
