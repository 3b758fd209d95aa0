# pk_add_kernels(): compile .pk files into a CMake target (docs/cmake.md).
#
#   pk_add_kernels(<target>
#     SOURCES a.pk [b.pk ...]        the .pk files; each becomes one module
#     [ARCH sm_90a [sm_80 ...]]      CUDA architectures (default below)
#     [TARGETS cuda [tpu]]           what to compile for (default: cuda)
#     [DEFINES NAME=VALUE ...]       -D for every source
#     [TUNED STEM.tune.json ...]     tuning records (pkc tune), each for the
#                                    source of the same stem
#     [INCLUDE_DIRS dir ...]         -I: where imported .pk files are found
#     [EMBED]                        compile the artifacts into the target
#     [HEADER_DIR dir]               where the launch headers go
#     [OUTPUT_DIR dir])              where manifests and artifacts go
#
# For each source it runs one `pkc compile` that writes the artifacts, one
# manifest, the typed launch header STEM.pk.h (and with EMBED,
# STEM.embed.cpp) and a dependency file, so editing a .pk file or any file
# it imports rebuilds that module alone. The headers (and embedded
# sources) are added to the target, HEADER_DIR to its include path, and
# pk::runtime to its libraries.
#
# ARCH defaults as CUDA_ARCHITECTURES does: the target's PK_ARCHITECTURES
# property, else the CMAKE_PK_ARCHITECTURES variable, else the PKARCHS
# environment variable (a ;- or space-separated list), else sm_90a.
# INCLUDE_DIRS adds to the target's PK_INCLUDE_DIRECTORIES property, which
# may also be set directly.
#
# Functions record the policies in effect where they are defined: this
# file's, whichever project includes it. CMP0116 (3.20) makes the Ninja
# generator rewrite DEPFILE paths to match its own.
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)

function(pk_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 PK "EMBED" "HEADER_DIR;OUTPUT_DIR"
    "SOURCES;ARCH;TARGETS;DEFINES;INCLUDE_DIRS;TUNED")
  # cmake_parse_arguments only leaves unknown words before the first
  # keyword unparsed; after one, they join its list. So the lists are
  # checked too: what cannot belong there is an unknown argument.
  set(unknown ${PK_UNPARSED_ARGUMENTS})
  foreach(list_check "SOURCES;\\.pk$" "DEFINES;^[A-Za-z_][A-Za-z0-9_]*=" "ARCH;^sm_"
                     "TUNED;\\.tune\\.json$")
    list(GET list_check 0 keyword)
    list(GET list_check 1 pattern)
    set(kept)
    foreach(item IN LISTS PK_${keyword})
      if(item MATCHES "${pattern}")
        list(APPEND kept ${item})
      else()
        list(APPEND unknown ${item})
      endif()
    endforeach()
    set(PK_${keyword} ${kept})
  endforeach()
  if(unknown)
    message(WARNING "pk_add_kernels(${target}): unknown arguments ignored: ${unknown} "
      "(known: SOURCES a.pk..., ARCH sm_XY..., TARGETS cuda|tpu, DEFINES NAME=VALUE..., "
      "INCLUDE_DIRS, TUNED STEM.tune.json..., EMBED, HEADER_DIR, OUTPUT_DIR)")
  endif()
  if(PK_KEYWORDS_MISSING_VALUES)
    message(WARNING "pk_add_kernels(${target}): no value given for ${PK_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "pk_add_kernels: '${target}' is not a target; create it first "
      "(add_executable or add_library)")
  endif()
  if(NOT PK_SOURCES)
    message(FATAL_ERROR "pk_add_kernels(${target}): give the .pk files with SOURCES")
  endif()
  if(NOT TARGET pk::pkc)
    message(FATAL_ERROR "pk_add_kernels(${target}): pk::pkc is not available (a runtime-only "
      "pkc install has no compiler)")
  endif()

  # Architectures: argument, target property, CMake variable, environment.
  set(archs ${PK_ARCH})
  if(NOT archs)
    get_target_property(archs ${target} PK_ARCHITECTURES)
  endif()
  if(NOT archs AND DEFINED CMAKE_PK_ARCHITECTURES)
    set(archs ${CMAKE_PK_ARCHITECTURES})
  endif()
  if(NOT archs AND DEFINED ENV{PKARCHS})
    string(REPLACE " " ";" archs "$ENV{PKARCHS}")
  endif()
  if(NOT archs)
    set(archs sm_90a)
  endif()
  set(kinds ${PK_TARGETS})
  if(NOT kinds)
    set(kinds cuda)
  endif()
  set(target_flags)
  foreach(kind IN LISTS kinds)
    if(kind STREQUAL "cuda")
      foreach(arch IN LISTS archs)
        list(APPEND target_flags --target=cuda:${arch})
      endforeach()
    elseif(kind STREQUAL "tpu")
      list(APPEND target_flags --target=tpu)
    else()
      message(FATAL_ERROR "pk_add_kernels(${target}): unknown TARGETS value '${kind}'; "
        "expected cuda or tpu")
    endif()
  endforeach()

  string(REPLACE ";" " " targets_shown "${target_flags}")

  set(output_dir ${PK_OUTPUT_DIR})
  if(NOT output_dir)
    set(output_dir ${CMAKE_CURRENT_BINARY_DIR}/pk_kernels/${target})
  endif()
  set(header_dir ${PK_HEADER_DIR})
  if(NOT header_dir)
    set(header_dir ${output_dir}/include)
  endif()
  get_filename_component(output_dir ${output_dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  get_filename_component(header_dir ${header_dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_BINARY_DIR})
  file(MAKE_DIRECTORY ${output_dir} ${header_dir})

  set(defines)
  foreach(define IN LISTS PK_DEFINES)
    list(APPEND defines -D ${define})
  endforeach()
  foreach(dir IN LISTS PK_INCLUDE_DIRS)
    get_filename_component(dir ${dir} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    set_property(TARGET ${target} APPEND PROPERTY PK_INCLUDE_DIRECTORIES ${dir})
  endforeach()
  # Evaluated at generation time, so directories added to the property
  # after this call count too; COMMAND_EXPAND_LISTS makes each its own -I.
  # (The expression must stay one quoted argument of COMMAND: a variable
  # holding it would split at its ';'.)
  set(includes "$<TARGET_PROPERTY:${target},PK_INCLUDE_DIRECTORIES>")

  # Tuning records by the stem of the source they tune.
  set(tuned_stems)
  foreach(record IN LISTS PK_TUNED)
    get_filename_component(record ${record} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(record_name ${record} NAME)
    string(REGEX REPLACE "\\.tune\\.json$" "" record_stem "${record_name}")
    set(tuned_record_${record_stem} ${record})
    list(APPEND tuned_stems ${record_stem})
  endforeach()
  set(source_stems)
  foreach(source IN LISTS PK_SOURCES)
    get_filename_component(stem ${source} NAME_WE)
    list(APPEND source_stems ${stem})
  endforeach()
  foreach(record_stem IN LISTS tuned_stems)
    if(NOT record_stem IN_LIST source_stems)
      message(FATAL_ERROR "pk_add_kernels(${target}): the tuning record ${record_stem}.tune.json "
        "has no source ${record_stem}.pk among SOURCES")
    endif()
  endforeach()

  get_property(stems TARGET ${target} PROPERTY PK_KERNEL_STEMS)
  foreach(source IN LISTS PK_SOURCES)
    get_filename_component(source ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    get_filename_component(stem ${source} NAME_WE)
    # Artifacts, manifests and embedded loaders are named after the stem.
    if(stem IN_LIST stems)
      message(FATAL_ERROR "pk_add_kernels(${target}): two sources are named ${stem}.pk; "
        "their outputs would collide (use a second target or rename one)")
    endif()
    list(APPEND stems ${stem})
    set(manifest ${output_dir}/${stem}.json)
    set(header ${header_dir}/${stem}.pk.h)
    set(depfile ${output_dir}/${stem}.d)
    set(outputs ${manifest} ${header})
    set(embed_flag)
    if(PK_EMBED)
      set(embed_flag --embed)
      list(APPEND outputs ${output_dir}/${stem}.embed.cpp)
    endif()
    set(tuned_flags)
    set(tuned_depends)
    if(DEFINED tuned_record_${stem})
      set(tuned_flags --tuned ${tuned_record_${stem}})
      set(tuned_depends ${tuned_record_${stem}})
    endif()
    file(RELATIVE_PATH shown ${CMAKE_BINARY_DIR} ${manifest})
    add_custom_command(
      OUTPUT ${outputs}
      COMMAND pk::pkc compile ${source} ${target_flags} -o ${output_dir} --header ${header}
              ${embed_flag} ${defines} ${tuned_flags} "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
              -MD -MF ${depfile} -MT ${manifest}
      MAIN_DEPENDENCY ${source}
      DEPENDS pk::pkc ${tuned_depends}
      DEPFILE ${depfile}
      COMMENT "Compiling ${stem}.pk (${targets_shown}) -> ${shown}"
      VERBATIM
      COMMAND_EXPAND_LISTS)
    target_sources(${target} PRIVATE ${outputs})
  endforeach()
  set_property(TARGET ${target} PROPERTY PK_KERNEL_STEMS ${stems})
  target_include_directories(${target} PRIVATE ${header_dir})
  target_link_libraries(${target} PRIVATE pk::runtime)
endfunction()

cmake_policy(POP)
