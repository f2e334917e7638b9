# Compiles go through ccache when it is installed (scripts/setup installs it), with paths made
# relative to the source tree. Why: the seeded-bug runs (tests/mutants/mutate.py) build a
# copy of the tree in /tmp; with the same flags and relative paths, every file a mutant does not
# touch is a cache hit on the objects the main build just made, instead of a second full build.
# CCACHE_NOHASHDIR: the build directory differs between the two (it only changes debug info's
# comp_dir, which no test reads). A launcher given on the command line wins.
option(C2C_CCACHE "Compile through ccache when it is installed" ON)
if(C2C_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_C_COMPILER_LAUNCHER)
  find_program(C2C_CCACHE_PROGRAM ccache)
  if(C2C_CCACHE_PROGRAM)
    set(c2c_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1
        ${C2C_CCACHE_PROGRAM})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${c2c_launcher})
    set(CMAKE_C_COMPILER_LAUNCHER ${c2c_launcher})
  endif()
endif()
