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
  add_library(pk_sanitizer_defaults OBJECT ${PROJECT_SOURCE_DIR}/src/support/SanitizerDefaults.cpp)
endif()

# pk_sanitizer_defaults_in_programs(): the sanitizers' default options
# (src/support/SanitizerDefaults.cpp) in every program of a sanitized tree,
# so that pkc, the tests and the build steps that run them behave the same
# whoever starts them. Called once every target exists.
function(pk_sanitizer_defaults_in_programs)
  if(NOT TARGET pk_sanitizer_defaults)
    return()
  endif()
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target ${targets})
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE")
        target_sources(${target} PRIVATE $<TARGET_OBJECTS:pk_sanitizer_defaults>)
      endif()
    endforeach()
  endwhile()
endfunction()

# PK_SANITIZER_RUNTIME: the shared ASan runtime that every sanitized program
# and library of this tree loads. A program built without the sanitizers
# (Python, the CMake test's outside app, the compilers that build it) can
# only load our libraries with that runtime preloaded, so their tests run
# with PK_SANITIZER_HOST_ENV: the runtime in LD_PRELOAD, and no leak report
# at exit (those programs leak by design). The runtime must be the one pkc
# itself uses, hence Clang's shared runtime (GCC links only a shared one),
# found through the executables' RPATH. (The fuzzing build keeps libFuzzer's
# static runtime; it builds neither the tests nor the Python package.)
set(PK_SANITIZER_RUNTIME "")
set(PK_SANITIZER_HOST_ENV "")
if("address" IN_LIST PK_SANITIZE AND NOT PK_FUZZ)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} --print-runtime-dir
                    OUTPUT_VARIABLE pk_rt_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
    foreach(name libclang_rt.asan-x86_64.so libclang_rt.asan.so)
      if(NOT PK_SANITIZER_RUNTIME AND EXISTS ${pk_rt_dir}/${name})
        set(PK_SANITIZER_RUNTIME ${pk_rt_dir}/${name})
      endif()
    endforeach()
    add_link_options(-shared-libasan LINKER:-rpath,${pk_rt_dir})
  else()
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE PK_SANITIZER_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
  if(NOT EXISTS "${PK_SANITIZER_RUNTIME}")
    message(FATAL_ERROR "PK_SANITIZE: no shared ASan runtime found for ${CMAKE_CXX_COMPILER}")
  endif()
  set(PK_SANITIZER_HOST_ENV
      "LD_PRELOAD=${PK_SANITIZER_RUNTIME}"
      "ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0")
  message(STATUS "PK_SANITIZE: uninstrumented hosts preload ${PK_SANITIZER_RUNTIME}")
endif()
