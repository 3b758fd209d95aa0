# Compiler settings shared by every pkc target: warnings, ccache, and the
# build-speed measures that matter when compiling against MLIR.

# Everything is position independent: the runtime ships as a shared library
# and the precompiled header must match every target that reuses it.
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

# ccache (found in the top-level CMakeLists.txt). Paths under the source tree
# are hashed relative to it, so clones and worktrees of pkc share one cache;
# the sloppiness lets it cache files compiled with the precompiled header.
if(PK_CCACHE)
  set(pk_ccache_launcher ${CMAKE_COMMAND} -E env
      CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${PK_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${pk_ccache_launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${pk_ccache_launcher})
endif()

add_compile_options(-Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC warns about code in MLIR's own headers; keep our output readable.
  add_compile_options(-Wno-comment -Wno-class-memaccess -Wno-redundant-move
                      -Wno-array-bounds -Wno-stringop-overflow)
endif()
# Debug info off in Release keeps objects small and links fast.
set(CMAKE_CXX_FLAGS_RELEASE "-O2")
set(CMAKE_C_FLAGS_RELEASE "-O2")

# One precompiled header of the MLIR/LLVM headers every IR-facing library
# includes; targets reuse it instead of parsing MLIR's headers per file.
if(PK_USE_PCH)
  add_library(pk_mlir_pch OBJECT ${CMAKE_CURRENT_LIST_DIR}/pch/PchStub.cpp)
  target_precompile_headers(pk_mlir_pch PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pch/MLIRPch.h)
endif()

function(pk_use_mlir_pch target)
  if(PK_USE_PCH)
    target_precompile_headers(${target} REUSE_FROM pk_mlir_pch)
    # The header is compiled -fPIC; executables default to -fPIE, which
    # GCC refuses to mix with it. -fPIC code links into a PIE just fine.
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "EXECUTABLE")
      target_compile_options(${target} PRIVATE -fPIC)
    endif()
  endif()
endfunction()
