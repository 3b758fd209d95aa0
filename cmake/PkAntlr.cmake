# Generates the C++ lexer and parser from grammar/*.g4 at build time with
# Debian's `antlr4` tool and wraps them in the `pk_grammar` library.
#
# The generated code is third-party style code: it is compiled without our
# warnings, and only src/frontend/parse includes its headers.

find_program(ANTLR4_EXECUTABLE NAMES antlr4 REQUIRED
  DOC "ANTLR4 tool (Debian package antlr4)")
find_path(ANTLR4_RUNTIME_INCLUDE_DIR antlr4-runtime.h
  PATH_SUFFIXES antlr4-runtime REQUIRED
  DOC "ANTLR4 C++ runtime headers (Debian package libantlr4-runtime-dev)")
find_library(ANTLR4_RUNTIME_LIBRARY NAMES antlr4-runtime REQUIRED)

function(pk_add_antlr_grammar target)
  cmake_parse_arguments(ARG "" "NAMESPACE" "LEXER;PARSER" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  get_filename_component(lexer_name ${ARG_LEXER} NAME_WE)
  get_filename_component(parser_name ${ARG_PARSER} NAME_WE)
  set(outputs
    ${out_dir}/${lexer_name}.cpp ${out_dir}/${lexer_name}.h
    ${out_dir}/${parser_name}.cpp ${out_dir}/${parser_name}.h)
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${ANTLR4_EXECUTABLE} -Dlanguage=Cpp -no-listener -no-visitor
            -package ${ARG_NAMESPACE} -Xexact-output-dir -o ${out_dir}
            ${ARG_LEXER} ${ARG_PARSER}
    DEPENDS ${ARG_LEXER} ${ARG_PARSER}
    COMMENT "Generating the .pk lexer and parser with ANTLR"
    VERBATIM)
  add_library(${target} STATIC ${outputs})
  target_include_directories(${target} SYSTEM PUBLIC ${out_dir} ${ANTLR4_RUNTIME_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC ${ANTLR4_RUNTIME_LIBRARY})
  target_compile_options(${target} PRIVATE -w)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
endfunction()
