# Finds LLVM/MLIR 22 (Debian's llvm-22-dev, libmlir-22-dev, mlir-22-tools),
# CLI11, nlohmann/json and GoogleTest. pkc links the LLVM and MLIR shared
# libraries (libLLVM.so, libMLIR.so) rather than the static component
# libraries: links take a second instead of a minute.

find_package(MLIR REQUIRED CONFIG
  HINTS /usr/lib/llvm-22/lib/cmake/mlir)
message(STATUS "Using MLIR from ${MLIR_DIR}")
list(APPEND CMAKE_MODULE_PATH ${MLIR_CMAKE_DIR} ${LLVM_CMAKE_DIR})
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})

set(LLVM_LIT_EXECUTABLE ${LLVM_TOOLS_BINARY_DIR}/lit)
if(NOT EXISTS ${LLVM_LIT_EXECUTABLE})
  find_program(LLVM_LIT_EXECUTABLE NAMES lit llvm-lit)
endif()
set(PK_FILECHECK ${LLVM_TOOLS_BINARY_DIR}/FileCheck)

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED
  DOC "CLI11 headers (Debian package libcli11-dev)")
find_package(nlohmann_json 3 REQUIRED)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "pkc needs LLVM/MLIR 22, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}")
endif()
