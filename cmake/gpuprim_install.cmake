# gpuprim_install.cmake — `cmake --install BUILD [--prefix P]` installs:
#   bin/gpuprim_mpi, bin/gpuprim_gen
#   lib/libgpuprim.a
#   include/gpuprim/{dist.h, error.h, exact_sum.h, exchange.h, gpuprim.h, h5io.h, iodriver.h, kernels.h, shard.h}   (#include <gpuprim/gpuprim.h>)
#   lib/cmake/gpuprim/gpuprimConfig.cmake (+ Version, Targets): find_package(gpuprim) gives
#       the imported target gpuprim::gpuprim with its MPI, HDF5, threads, libdeflate or zlib
#       (and, in a CUDA build, CUDA::cudart_static) usage requirements found again
#   lib/pkgconfig/gpuprim.pc: cc app.c $(pkg-config --cflags --libs gpuprim)
#   share/man/man1/gpuprim_mpi.1, gpuprim_gen.1: the man pages (roff sources in docs/man/)
# Included from the top-level CMakeLists.txt after the targets are defined.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GPUPRIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gpuprim)

install(TARGETS gpuprim EXPORT gpuprimTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS gpuprim_mpi gpuprim_gen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/dist.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/error.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/exact_sum.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/exchange.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/gpuprim.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/h5io.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/shard.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/iodriver.h
          ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/kernels.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpuprim)
install(EXPORT gpuprimTargets NAMESPACE gpuprim:: DESTINATION ${GPUPRIM_CMAKE_DIR})
# the man pages: roff written by hand beside docs/gpuprim_mpi.md (tests/cli_output.py keeps
# the two and --help in step), so installing them needs no tool
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/docs/man/gpuprim_mpi.1
              ${CMAKE_CURRENT_SOURCE_DIR}/docs/man/gpuprim_gen.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)

# ---- CMake package -------------------------------------------------------------------
# where this build found the CUDA toolkit: a hint for consumers' find_dependency(CUDAToolkit)
set(GPUPRIM_CUDA_ROOT "")
if(GPUPRIM_HAVE_CUDA AND CUDAToolkit_BIN_DIR)
  get_filename_component(GPUPRIM_CUDA_ROOT "${CUDAToolkit_BIN_DIR}" DIRECTORY)
endif()
# where this build found libdeflate: a hint for consumers' find_library
set(GPUPRIM_LIBDEFLATE_DIR "")
if(GPUPRIM_HAVE_LIBDEFLATE)
  get_filename_component(GPUPRIM_LIBDEFLATE_DIR "${GPUPRIM_LIBDEFLATE_LIBRARY}" DIRECTORY)
endif()
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpuprimConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gpuprimConfig.cmake
  INSTALL_DESTINATION ${GPUPRIM_CMAKE_DIR})
# 0.x: a new minor version may change the interface
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpuprimConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpuprimConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/gpuprimConfigVersion.cmake
        DESTINATION ${GPUPRIM_CMAKE_DIR})

# ---- pkg-config ----------------------------------------------------------------------
# libgpuprim is static, so Libs lists everything it needs, as this build found it.
function(gp_pc_libs out)
  set(r "")
  foreach(l IN LISTS ARGN)
    if(l MATCHES "^-" OR IS_ABSOLUTE "${l}")
      string(APPEND r " ${l}")
    elseif(l)
      string(APPEND r " -l${l}")
    endif()
  endforeach()
  set(${out} "${r}" PARENT_SCOPE)
endfunction()
function(gp_pc_prefixed out flag)
  set(r "")
  foreach(x IN LISTS ARGN)
    if(x)
      string(REGEX REPLACE "^-D" "" x "${x}")
      string(APPEND r " ${flag}${x}")
    endif()
  endforeach()
  set(${out} "${r}" PARENT_SCOPE)
endfunction()

# MPI and HDF5: by their own pkg-config modules where the distribution has them (Debian's
# ompi-c / hdf5-openmpi, or MPICH's), so that the installed .pc names no absolute path of
# this build machine; a module counts only if it is the library CMake found (its include
# folders hold MPI_C_INCLUDE_DIRS' / HDF5_C_INCLUDE_DIRS' first entry). Otherwise the flags
# and absolute library paths this build used.
find_package(PkgConfig QUIET)
function(gp_pc_module out want)
  set(${out} "" PARENT_SCOPE)
  if(NOT PKG_CONFIG_FOUND OR NOT want)
    return()
  endif()
  foreach(m IN LISTS ARGN)
    pkg_check_modules(_gp_m QUIET ${m})
    if(_gp_m_FOUND)
      foreach(d IN LISTS _gp_m_INCLUDE_DIRS)
        get_filename_component(d "${d}" REALPATH)
        get_filename_component(w "${want}" REALPATH)
        if(d STREQUAL w)
          set(${out} "${m}" PARENT_SCOPE)
          return()
        endif()
      endforeach()
    endif()
  endforeach()
endfunction()
list(GET MPI_C_INCLUDE_DIRS 0 _pc_mpi_inc)
list(GET HDF5_C_INCLUDE_DIRS 0 _pc_h5_inc)
gp_pc_module(_pc_mpi "${_pc_mpi_inc}" ompi-c mpich mpi-c mpi)
gp_pc_module(_pc_h5 "${_pc_h5_inc}" hdf5-openmpi hdf5-mpich hdf5-mpi hdf5)
if(_pc_mpi AND _pc_h5)
  set(GPUPRIM_PC_REQUIRES "Requires: ${_pc_mpi} ${_pc_h5}")
  set(GPUPRIM_PC_CFLAGS "")
  set(GPUPRIM_PC_LIBS "")
  message(STATUS "gpuprim.pc: MPI and HDF5 through pkg-config modules ${_pc_mpi}, ${_pc_h5}")
else()
  set(GPUPRIM_PC_REQUIRES "")
  gp_pc_prefixed(_pc_inc "-I" ${MPI_C_INCLUDE_DIRS} ${HDF5_C_INCLUDE_DIRS})
  gp_pc_prefixed(_pc_def "-D" ${MPI_C_COMPILE_DEFINITIONS} ${HDF5_C_DEFINITIONS})
  set(GPUPRIM_PC_CFLAGS "${_pc_inc}${_pc_def}")
  foreach(o IN LISTS MPI_C_COMPILE_OPTIONS)
    string(APPEND GPUPRIM_PC_CFLAGS " ${o}")
  endforeach()
  gp_pc_libs(GPUPRIM_PC_LIBS ${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES} ${HDF5_C_LIBRARIES})
  message(STATUS "gpuprim.pc: no pkg-config module matches the MPI/HDF5 found; absolute paths of this machine")
endif()
if(GPUPRIM_HAVE_CUDA)
  string(APPEND GPUPRIM_PC_CFLAGS " -DGPUPRIM_HAVE_CUDA=1")
  # the CUDA objects need the static CUDA runtime and what it uses
  string(APPEND GPUPRIM_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt -lstdc++")
endif()
# the inflate of compressed chunks (CMakeLists.txt): libdeflate, else zlib
if(GPUPRIM_HAVE_LIBDEFLATE)
  if(GPUPRIM_LIBDEFLATE_DIR IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND GPUPRIM_PC_LIBS " -ldeflate")
  else()
    string(APPEND GPUPRIM_PC_LIBS " -L${GPUPRIM_LIBDEFLATE_DIR} -ldeflate")
  endif()
elseif(GPUPRIM_HAVE_ZLIB)
  string(APPEND GPUPRIM_PC_LIBS " -lz")
endif()
if(GPUPRIM_HAVE_LZF)
  # liblzf (io/h5_lzf.c's LZF filter), by name; its folder too unless the linker searches it
  get_filename_component(_pc_lzf_dir "${GPUPRIM_LZF_LIBRARY}" DIRECTORY)
  if(NOT _pc_lzf_dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND GPUPRIM_PC_LIBS " -L${_pc_lzf_dir}")
  endif()
  string(APPEND GPUPRIM_PC_LIBS " -llzf")
endif()
string(APPEND GPUPRIM_PC_LIBS " -pthread -lm")
# relocatable: the prefix is found from the .pc file's own folder
set(_rel "")
string(REPLACE "/" ";" _parts "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
foreach(p IN LISTS _parts)
  string(APPEND _rel "/..")
endforeach()
set(GPUPRIM_PC_PREFIX "\${pcfiledir}${_rel}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/gpuprim.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpuprim.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpuprim.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# include/gpuprim/gpuprim.h carries the version as macros: keep them in step with project()
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/include/gpuprim/gpuprim.h _gp_vlines REGEX "#define GPUPRIM_VERSION_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*MAJOR ([0-9]+).*MINOR ([0-9]+).*PATCH ([0-9]+).*" "\\1.\\2.\\3" _gp_hver "${_gp_vlines}")
if(NOT _gp_hver VERSION_EQUAL PROJECT_VERSION)
  message(FATAL_ERROR "include/gpuprim/gpuprim.h says version ${_gp_hver}, project() says ${PROJECT_VERSION}")
endif()
