# The version every binary prints with --version: the project version, plus `git describe` when
# the source is a git checkout (re-read at configure time; a tarball build prints the version).
find_package(Git QUIET)
set(C2C_GIT_DESCRIBE "")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} describe --always --dirty --tags
                  OUTPUT_VARIABLE C2C_GIT_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
set(C2C_VERSION_STRING "${PROJECT_VERSION}")
if(C2C_GIT_DESCRIBE)
  string(APPEND C2C_VERSION_STRING " (git ${C2C_GIT_DESCRIBE})")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in ${CMAKE_BINARY_DIR}/generated/c2c_version.hpp @ONLY)
add_library(c2c_version INTERFACE)
target_include_directories(c2c_version INTERFACE ${CMAKE_BINARY_DIR}/generated)
