# cmake -DPKC=pkc -DFAKE=libpk_fake_cuda.so -DINPUTS=dir -DOUT=dir -P PkcTuneFake.cmake
# `pkc tune` over the fake driver, twice.
#
# 1. Each configuration is compiled for the (fake) GPU's architecture and
#    loaded through the runtime from memory, its inputs copied to device
#    memory, and the fake, which cannot run pkc's kernels, refuses the
#    first launch. So every configuration that compiles must fail exactly
#    there, the one that cannot compile at its source line, and tune must
#    fail as a whole without writing a record.
# 2. With the fake's twin of the kernel (PK_FAKE_SAMPLE_TWINS: host code
#    that does what it does), launches succeed in next to no time: tune
#    must time both configurations that compile, choose one, and write the
#    record and the artifact, which `pkc compile --tuned` must reproduce
#    byte for byte. (Which one wins means nothing here.)
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${CMAKE_COMMAND} -E env PK_CUDA_DRIVER=${FAKE}
                        ${PKC} tune ${INPUTS}/scale.pk --size N=4096 -o ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "pkc tune over the fake driver: expected exit 1, got ${rc}:\n${all}")
endif()
foreach(expected
    "pkc tune: export 'scale', 3 configurations, on Fake Hopper \\(cuda:sm_90a\\) at N=4096"
    "BLOCK=128 +failed: launching failed: cuLaunchKernel of kernel \"[a-z_0-9]+\" \\(step 0\\) failed: CUDA_ERROR_INVALID_VALUE"
    "BLOCK=512 SCALE=2.0 +failed: launching failed: cuLaunchKernel"
    "BLOCK=67108864 +failed: [^\n]*scale.pk:[0-9]+:[0-9]+: error: "
    "pkc: error: export 'scale': every configuration failed")
  if(NOT all MATCHES "${expected}")
    message(FATAL_ERROR "pkc tune over the fake driver: no match for '${expected}' in:\n${all}")
  endif()
endforeach()
if(EXISTS ${OUT}/scale.tune.json)
  message(FATAL_ERROR "pkc tune wrote a record although every configuration failed")
endif()
message(STATUS "pkc tune: every configuration reached the fake launch")

execute_process(COMMAND ${CMAKE_COMMAND} -E env PK_CUDA_DRIVER=${FAKE} PK_FAKE_SAMPLE_TWINS=1
                        ${PKC} tune ${INPUTS}/scale.pk --size N=100000 -o ${OUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkc tune over the fake driver's twin: expected success, got ${rc}:\n${out}${err}")
endif()
foreach(expected
    "BLOCK=128 +[0-9.]+ us +[0-9]+ registers"
    "BLOCK=512 SCALE=2.0 +[0-9.]+ us +[0-9]+ registers"
    "BLOCK=67108864 +failed: "
    "  chosen: BLOCK=(128|512)[^\n]* \\([0-9.]+ us\\)"
    "pkc tune: wrote [^\n]*scale.tune.json and [^\n]*scale.json")
  if(NOT out MATCHES "${expected}")
    message(FATAL_ERROR "pkc tune over the fake driver's twin: no match for '${expected}' in:\n${out}${err}")
  endif()
endforeach()
file(READ ${OUT}/scale.tune.json record)
string(JSON chosen GET "${record}" exports 0 chosen BLOCK)
string(JSON tried LENGTH "${record}" exports 0 trials)
string(JSON failed GET "${record}" exports 0 trials 2 error)
if(NOT tried EQUAL 3 OR NOT chosen MATCHES "^(128|512)$" OR NOT failed MATCHES "error: ")
  message(FATAL_ERROR "the tuning record does not hold what was tried and chosen:\n${record}")
endif()
file(READ ${OUT}/scale.json manifest)
string(JSON tuned GET "${manifest}" exports 0 tuned BLOCK)
if(NOT tuned STREQUAL chosen)
  message(FATAL_ERROR "the manifest says scale was tuned with BLOCK=${tuned}, the record ${chosen}")
endif()
execute_process(COMMAND ${PKC} compile ${INPUTS}/scale.pk --tuned ${OUT}/scale.tune.json
                        --target=cuda:sm_90a -o ${OUT}/again
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(SHA256 ${OUT}/scale.cubin tuned_hash)
file(SHA256 ${OUT}/again/scale.cubin again_hash)
if(NOT rc EQUAL 0 OR NOT tuned_hash STREQUAL again_hash OR NOT err STREQUAL "")
  message(FATAL_ERROR "pkc compile --tuned did not reproduce pkc tune's artifact (exit ${rc}):\n${out}${err}")
endif()
message(STATUS "pkc tune: chose BLOCK=${chosen}, and pkc compile --tuned rebuilt the same cubin")
