# Where things go (cmake --install). Paths are GNUInstallDirs', relative to the prefix:
#   bin/np-explain, bin/np-probe      run and probe find np-probe beside np-explain
#   share/np-explain/testbed.sh       run --local finds it as NP_INSTALLED_DATA_DIR/testbed.sh
#                                     relative to np-explain (top-level CMakeLists.txt)
#   share/np-explain/tutorial/        the tutorial folder, when the source tree has one
#   share/doc/np-explain/             README.md, and examples/ when the source tree has one
#   share/man/man1/                   np-explain.1.gz, np-probe.1.gz (src/docgen)
#   share/bash-completion/completions np-explain, np-probe (src/docgen)
install(TARGETS np-explain np-probe RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/testbed.sh DESTINATION ${NP_INSTALL_DATADIR})
# OPTIONAL is checked when installing, so a folder added later is installed without a change
# here.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/tutorial/ DESTINATION ${NP_INSTALL_DATADIR}/tutorial
        OPTIONAL)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        OPTIONAL)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${NP_DOCS_DIR}/np-explain.1.gz ${NP_DOCS_DIR}/np-probe.1.gz
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
foreach(program np-explain np-probe)
  install(FILES ${NP_DOCS_DIR}/${program}.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${program})
endforeach()
