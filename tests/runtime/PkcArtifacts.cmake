# cmake -DPKC=pkc -DINSPECT=pk_runtime_inspect -DFAKE=libpk_fake_cuda.so
#       -DSAMPLES=dir -DOUT=dir -P PkcArtifacts.cmake
# The contract between the compiler and the runtime: every sample compiles
# with `pkc compile --target=cuda:sm_90a --target=cuda:sm_80`, and the
# runtime reads each manifest, picks the right artifact for 9.0 and 8.6,
# checks its hash, and (over the fake driver, which looks the names up in
# the cubins) finds every kernel the manifest launches.
file(GLOB samples ${SAMPLES}/*.pk)
file(REMOVE_RECURSE ${OUT})
set(failures 0)
foreach(sample ${samples})
  get_filename_component(name ${sample} NAME_WE)
  execute_process(COMMAND ${PKC} compile ${sample} --target=cuda:sm_90a --target=cuda:sm_80 -o ${OUT}/${name}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(SEND_ERROR "pkc compile ${sample} failed:\n${err}")
    math(EXPR failures "${failures} + 1")
    continue()
  endif()
  foreach(how "--cc;90;cuda:sm_90a" "--cc;86;cuda:sm_80" "--device;0;cuda:sm_90a" "--device;1;cuda:sm_80")
    list(GET how 0 flag)
    list(GET how 1 value)
    list(GET how 2 expected)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env PK_CUDA_DRIVER=${FAKE}
                            ${INSPECT} ${OUT}/${name}/${name}.json ${flag} ${value}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "\\(${expected}\\)")
      message(SEND_ERROR "${name} ${flag} ${value}: expected ${expected}\n${out}${err}")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
  message(STATUS "${name}: loads for 9.0 and 8.6, with and without a device")
endforeach()
if(failures)
  message(FATAL_ERROR "${failures} failure(s)")
endif()
