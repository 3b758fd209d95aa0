# Installs pkc as a CMake package (docs/cmake.md):
#
#   bin/pkc
#   lib/libpk_runtime.so.1, lib/libpk_runtime.a
#   include/pk/runtime.h, include/pk/runtime.hpp
#   lib/cmake/pkc/  pkcConfig.cmake, pkcConfigVersion.cmake, the exported
#                   targets pk::pkc, pk::runtime, pk::runtime_static, and
#                   PkAddKernels.cmake (pk_add_kernels)
#
# A build tree that uses pkc as a subdirectory (add_subdirectory or
# FetchContent) gets the same names as aliases, and pk_add_kernels, from
# here too; so a project is written once for both.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pkc CACHE STRING
  "Where pkcConfig.cmake is installed, relative to the prefix")

set(pk_exported pk_runtime pk_runtime_static)
set_target_properties(pk_runtime PROPERTIES EXPORT_NAME runtime)
set_target_properties(pk_runtime_static PROPERTIES EXPORT_NAME runtime_static)
add_library(pk::runtime ALIAS pk_runtime)
add_library(pk::runtime_static ALIAS pk_runtime_static)
if(TARGET pkc)
  list(APPEND pk_exported pkc)
  add_executable(pk::pkc ALIAS pkc)
  # pkc links LLVM and MLIR's shared libraries from outside the prefix;
  # keep their directory in the installed binary's run path.
  set_target_properties(pkc PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
endif()

install(TARGETS ${pk_exported} EXPORT pkcTargets
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/pk/runtime.h ${PROJECT_SOURCE_DIR}/include/pk/runtime.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pk)
install(EXPORT pkcTargets NAMESPACE pk:: DESTINATION ${PK_INSTALL_CMAKEDIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/pkcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pkcConfig.cmake
  INSTALL_DESTINATION ${PK_INSTALL_CMAKEDIR})
# 0.x releases make no compatibility promise between minor versions.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pkcConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/pkcConfig.cmake
  ${PROJECT_BINARY_DIR}/pkcConfigVersion.cmake
  ${CMAKE_CURRENT_LIST_DIR}/PkAddKernels.cmake
  DESTINATION ${PK_INSTALL_CMAKEDIR})

include(${CMAKE_CURRENT_LIST_DIR}/PkAddKernels.cmake)
