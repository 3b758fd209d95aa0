# Sanitizers and fuzzing for every target (docs/fuzzing.md).
#
#   -DPK_SANITIZE="address;undefined"   GCC or Clang: the whole build, and so
#                                       the test suite, under ASan and UBSan
#   -DPK_FUZZ=ON                        Clang: also libFuzzer's coverage
#                                       instrumentation and the harnesses in
#                                       fuzz/ (implies address;undefined)
#
# UBSan stops at the first report (-fno-sanitize-recover) so that a test or
# a fuzzer fails on it. Its vptr check needs the type information of every
# polymorphic class, which LLVM and MLIR are built without, so it is off.
set(PK_SANITIZE "" CACHE STRING "Sanitizers for every target, e.g. address;undefined")
option(PK_FUZZ "Build the libFuzzer harnesses in fuzz/ (Clang; implies address;undefined)" OFF)

if(PK_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PK_FUZZ=ON needs Clang (libFuzzer); configure with "
                        "-DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_C_COMPILER=clang-22 "
                        "(scripts/fuzz.sh does)")
  endif()
  if(NOT PK_SANITIZE)
    set(PK_SANITIZE address undefined)
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(PK_SANITIZE)
  list(JOIN PK_SANITIZE "," pk_sanitizers)
  add_compile_options(-fsanitize=${pk_sanitizers} -fno-sanitize=vptr
                      -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${pk_sanitizers} -fno-sanitize=vptr)
endif()
