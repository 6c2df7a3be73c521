# Writes OUT (the generated np_version.hpp) from IN with VERSION and the git revision of
# SOURCE_DIR, in script mode (cmake -P) at every build, so a commit after configuring is seen.
# configure_file leaves OUT untouched when nothing changed, so nothing is recompiled then.
#   cmake -DSOURCE_DIR=… -DVERSION=… -DIN=… -DOUT=… -P Version.cmake
set(NP_VERSION "${VERSION}")
set(NP_REVISION "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  # Only the project's own repository: a source tarball unpacked inside another repository
  # must not report that repository's revision.
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --show-toplevel
                  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE top
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
  endif()
  if(rc EQUAL 0 AND top STREQUAL source)
    # The abbreviated commit, "-dirty" when tracked files differ from it; --exclude='*'
    # keeps tags out, so the form does not change when the first tag appears.
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=7 --exclude=*
                    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE revision
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND revision)
      set(NP_REVISION "${revision}")
    endif()
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
