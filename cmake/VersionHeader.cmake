# The version facts have one home: the project version here, and the generated
# generated/np_version.hpp that cmake/Version.cmake writes from it and the git revision at every
# build (so a commit after configuring is seen). common/version.cpp is the only file that
# includes the header. Included by the top-level project and by fuzz/, both before project().
#   include(cmake/VersionHeader.cmake)   -> NP_PROJECT_VERSION
#   np_version_header_target()           -> target np_version_header, NP_VERSION_HEADER
set(NP_PROJECT_VERSION 0.1.0)
get_filename_component(NP_ROOT ${CMAKE_CURRENT_LIST_DIR} DIRECTORY)

function(np_version_header_target)
  set(NP_VERSION_HEADER ${CMAKE_BINARY_DIR}/generated/np_version.hpp PARENT_SCOPE)
  add_custom_target(
    np_version_header
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${NP_ROOT} -DVERSION=${NP_PROJECT_VERSION}
            -DIN=${NP_ROOT}/cmake/np_version.hpp.in
            -DOUT=${CMAKE_BINARY_DIR}/generated/np_version.hpp -P ${NP_ROOT}/cmake/Version.cmake
    BYPRODUCTS ${CMAKE_BINARY_DIR}/generated/np_version.hpp
    COMMENT "Version header: ${NP_PROJECT_VERSION} and the git revision"
    VERBATIM)
endfunction()
