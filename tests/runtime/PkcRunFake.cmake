# cmake -DPKC=pkc -DFAKE=libpk_fake_cuda.so -DSAMPLES=dir -P PkcRunFake.cmake
# `pkc run --device=cuda` over the fake driver: everything up to the
# kernel's execution is real (compiling for the device's architecture, the
# manifest handed to the runtime from memory, hash, module load, kernel
# lookup in the cubin, argument validation, device memory and copies), and
# the fake, which cannot run pkc's kernels, refuses the launch itself. So
# each run must fail exactly there. The default device must be cuda, since
# the fake driver reports GPUs.
set(runs "add.pk -D N=8 --device=cuda" "add.pk -D N=8" "layernorm.pk --size ROWS=20 --device=cuda"
         "matmul.pk --entry matmul_scaled --size M=64 --size N=128")
foreach(shown IN LISTS runs)
  separate_arguments(run UNIX_COMMAND "${shown}")
  list(POP_FRONT run sample)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PK_CUDA_DRIVER=${FAKE} ${PKC} run ${SAMPLES}/${sample} ${run}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT err MATCHES "--device=cuda: launching '[a-z_]+' failed: cuLaunchKernel of kernel \"[a-z_]+\" \\(step 0\\) failed: CUDA_ERROR_INVALID_VALUE")
    message(FATAL_ERROR "pkc run ${shown}: expected to reach the fake driver's launch, got (exit ${rc}):\n${out}${err}")
  endif()
  message(STATUS "pkc run ${shown}: reached the launch")
endforeach()
