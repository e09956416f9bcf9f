#===- KilnStringify.cmake - embed device headers in the compiler ---------===#
#
# kiln_stringify(OUTPUT <cpp> FUNCTION <name> FILES <cuh>...) writes a C++
# file defining `std::vector<std::pair<std::string, std::string>> name()` that
# returns (file name, contents) of each header, regenerated when they change.
# The headers stay real .cuh files for editors and nvcc; NVRTC gets them from
# memory.
function(kiln_stringify)
  cmake_parse_arguments(ARG "" "OUTPUT;FUNCTION" "FILES" ${ARGN})
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DFUNCTION=${ARG_FUNCTION}
            "-DFILES=${ARG_FILES}" -P ${PROJECT_SOURCE_DIR}/cmake/KilnStringifyScript.cmake
    DEPENDS ${ARG_FILES} ${PROJECT_SOURCE_DIR}/cmake/KilnStringifyScript.cmake
    COMMENT "Embedding device headers in ${ARG_OUTPUT}"
    VERBATIM)
endfunction()
