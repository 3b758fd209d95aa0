# cmake -DTEMPLATE=in -DOUTPUT=out -P PkFillManifest.cmake
# Replaces @SHA256:file@ and @SIZE:file@ in TEMPLATE with the sha256 and
# byte size of `file` (relative to OUTPUT's directory). CMake's own SHA-256
# is an implementation independent of the runtime's.
file(READ ${TEMPLATE} text)
get_filename_component(dir ${OUTPUT} DIRECTORY)
string(REGEX MATCHALL "@(SHA256|SIZE):[^@]+@" tokens "${text}")
list(REMOVE_DUPLICATES tokens)
foreach(token ${tokens})
  string(REGEX REPLACE "@(SHA256|SIZE):([^@]+)@" "\\1;\\2" parts "${token}")
  list(GET parts 0 kind)
  list(GET parts 1 file)
  if(NOT EXISTS ${dir}/${file})
    message(FATAL_ERROR "${TEMPLATE}: ${dir}/${file} does not exist")
  endif()
  if(kind STREQUAL "SHA256")
    file(SHA256 ${dir}/${file} value)
  else()
    file(SIZE ${dir}/${file} value)
  endif()
  string(REPLACE "${token}" "${value}" text "${text}")
endforeach()
file(WRITE ${OUTPUT} "${text}")
