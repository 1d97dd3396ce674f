# gp_version.cmake — run at every build (cmake -DSRC=<source dir> -DOUT=<file> -DBASE=<x.y.z>
# -P gp_version.cmake): writes OUT, a C header with
#   GPUPRIM_VERSION_STRING  "BASE+<git describe --always --dirty --tags>" (BASE without git)
#   GPUPRIM_GIT_COMMIT      the full commit hash, "-dirty" when tracked files differ; "unknown"
# for src/version.c. OUT is rewritten only when its text changes, so an unchanged tree
# rebuilds nothing and a new commit recompiles one file.
set(_ver "${BASE}")
set(_commit "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
                  WORKING_DIRECTORY ${SRC} RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _d OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0 AND _d)
    set(_ver "${BASE}+${_d}")
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse HEAD
                  WORKING_DIRECTORY ${SRC} RESULT_VARIABLE _rc
                  OUTPUT_VARIABLE _h OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_rc EQUAL 0 AND _h)
    set(_commit "${_h}")
    if(_d MATCHES "-dirty$")
      set(_commit "${_h}-dirty")
    endif()
  endif()
endif()
set(_text "/* generated at build time by cmake/gp_version.cmake: do not edit */
#define GPUPRIM_VERSION_STRING \"${_ver}\"
#define GPUPRIM_GIT_COMMIT \"${_commit}\"
")
set(_old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" _old)
endif()
if(NOT _old STREQUAL _text)
  file(WRITE "${OUT}" "${_text}")
endif()
