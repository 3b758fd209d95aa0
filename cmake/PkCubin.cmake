# Small cubins built with nvcc for the runtime's tests, samples and
# benchmark. They stand in for what pkc's CUDA backend emits, with
# hand-written manifests (the schema is docs/manifest.md) whose sha256 and
# size are filled in at build time. Without nvcc, PK_NVCC is not found and
# the users of these functions register skipping tests instead.
find_program(PK_NVCC nvcc
  HINTS ENV CUDA_HOME ENV CUDA_PATH /usr/local/cuda
  PATH_SUFFIXES bin
  DOC "nvcc, to build the runtime's test cubins")
if(PK_NVCC)
  message(STATUS "Runtime test cubins: ${PK_NVCC}")
else()
  message(STATUS "Runtime test cubins: nvcc not found; the tests that need them will skip")
endif()
set(PK_CMAKE_DIR ${CMAKE_CURRENT_LIST_DIR})

# pk_cubin(OUTPUT SOURCE ARCH [ptx]): OUTPUT is SOURCE compiled for ARCH
# (sm_90a) to a cubin, or with "ptx" to PTX.
function(pk_cubin output source arch)
  set(kind -cubin)
  if(ARGN STREQUAL "ptx")
    set(kind -ptx)
  endif()
  add_custom_command(OUTPUT ${output}
    COMMAND ${PK_NVCC} ${kind} -arch=${arch} -O3 -o ${output} ${source}
    DEPENDS ${source}
    COMMENT "nvcc ${kind} -arch=${arch} ${source}"
    VERBATIM)
endfunction()

# pk_fill_manifest(OUTPUT TEMPLATE ARTIFACT...): OUTPUT is TEMPLATE with
# @SHA256:file@ and @SIZE:file@ replaced by the sha256 and size of each
# ARTIFACT (a file next to OUTPUT).
function(pk_fill_manifest output template)
  add_custom_command(OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DTEMPLATE=${template} -DOUTPUT=${output}
            -P ${PK_CMAKE_DIR}/PkFillManifest.cmake
    DEPENDS ${template} ${ARGN} ${PK_CMAKE_DIR}/PkFillManifest.cmake
    COMMENT "Filling in ${output}"
    VERBATIM)
endfunction()
