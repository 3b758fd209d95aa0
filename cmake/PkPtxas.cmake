# Finds ptxas as pkc finds it (docs/cuda.md#the-cuda-toolkit): in
# $PK_CUDA_PATH, $CUDA_PATH, $CUDA_HOME, /usr/local/cuda, on PATH, and last
# in PyPI's nvidia-cuda-nvcc for Python (which scripts/setup.sh installs on
# machines without the toolkit). Sets PK_PTXAS (cached), empty when none.
if(PK_PTXAS)
  return()
endif()
if(Python3_EXECUTABLE)
  set(pk_ptxas_python ${Python3_EXECUTABLE})
else()
  find_program(pk_ptxas_python NAMES python3)
endif()
set(pk_pip_cuda_roots)
if(pk_ptxas_python)
  execute_process(
    COMMAND ${pk_ptxas_python} -c
            "import nvidia, os; print(';'.join(os.path.join(p, d) for p in nvidia.__path__ for d in sorted(os.listdir(p))))"
    OUTPUT_VARIABLE pk_pip_cuda_roots OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
find_program(PK_PTXAS ptxas
  HINTS ENV PK_CUDA_PATH ENV CUDA_PATH ENV CUDA_HOME /usr/local/cuda PATH_SUFFIXES bin
  DOC "ptxas, which pkc runs to make cubins")
if(NOT PK_PTXAS AND pk_pip_cuda_roots)
  find_program(PK_PTXAS ptxas PATHS ${pk_pip_cuda_roots} PATH_SUFFIXES bin NO_DEFAULT_PATH
    DOC "ptxas, which pkc runs to make cubins")
endif()
