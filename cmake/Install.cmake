# Where things go (cmake --install, and the Debian package built from the same rules), and the
# package. Paths are GNUInstallDirs', relative to the prefix (/usr in the package):
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

# The Debian package: cmake --build build --target package writes
# build/np-explain_<version>_<arch>.deb; install it with apt install ./np-explain_*.deb.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME np-explain)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_CONTACT
    "Seed 9a8c59e3 maintainers <maintainers@users.noreply.a-seed-9a8c59e3.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "measure latency, TCP and UDP throughput between two Linux nodes and explain the numbers")
# The extended description (the summary above is its first line); one string: separate
# arguments would make it a list.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "np-explain runs ping, iperf3 TCP and UDP between two nodes over SSH with a BPF probe
(np-probe) on both data NICs, and explains the numbers against a header-overhead model and
what the probes counted: line-rate bound, where datagrams were lost, traffic on the wrong
interface. It also explains existing iperf3, iperf2 and ping output offline.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# The shared libraries np-explain links (libssh, libyaml-cpp, libfmt, libssl, libstdc++...)
# are computed by dpkg-shlibdeps from the binary itself; np-probe is static. Declared by hand:
# what run --local runs on this machine (the testbed's ip/tc, ssh-keygen, and on its nodes
# iperf3, ping, ethtool). The nodes' sshd is only recommended: installing openssh-server also
# starts the machine's own sshd, which a console may not want.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "iperf3, iputils-ping, iproute2, ethtool, openssh-client")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "openssh-server")
# Debian ships stripped binaries: np-explain is 57 MB with debug information, 2.6 MB without
# (RelWithDebInfo, this 2-vCPU Debian 12 machine: ls -l build/src/cli/np-explain and the
# package's usr/bin/np-explain).
set(CPACK_STRIP_FILES ON)
include(CPack)
