#===- KilnWarnings.cmake - warnings for kiln's own code --------------------===#
# Applied per target (kiln_add_warnings) so third-party headers pulled in as
# SYSTEM stay quiet and only our code is held to -Wall -Wextra.
function(kiln_add_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
