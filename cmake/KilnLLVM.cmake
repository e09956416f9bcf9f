#===- KilnLLVM.cmake - MLIR/LLVM 22, linked statically ---------------------===#
#
# Debian's LLVMConfig turns on LLVM_LINK_LLVM_DYLIB, so every imported MLIR
# target lists the shared `LLVM` library in its link interface. Tools linked
# that way only run where libLLVM-22.so is installed, which the GPU machine is
# not. We swap that entry for the static LLVM component libraries (imported
# targets that carry their own dependency order) and turn the dylib off for our
# own targets, so `ldd` of every tool lists no LLVM or MLIR library.
find_package(MLIR REQUIRED CONFIG
  HINTS /usr/lib/llvm-22/lib/cmake/mlir)
message(STATUS "kiln: MLIR from ${MLIR_DIR}, LLVM ${LLVM_PACKAGE_VERSION}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
set(LLVM_LINK_LLVM_DYLIB OFF)
set(MLIR_LINK_MLIR_DYLIB OFF)
include(TableGen)
include(AddLLVM)
include(AddMLIR)

# The components MLIR's static libraries reference; the linker takes only the
# objects it needs from each archive.
llvm_map_components_to_libnames(KILN_LLVM_STATIC_LIBS
  Support Demangle TargetParser BinaryFormat Remarks BitstreamReader)
find_package(zstd QUIET)

foreach(target IN LISTS MLIR_EXPORTED_TARGETS)
  if(NOT TARGET ${target})
    continue()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    continue()
  endif()
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  if(deps)
    list(TRANSFORM deps REPLACE "^LLVM$" "${KILN_LLVM_STATIC_LIBS}")
    set_target_properties(${target} PROPERTIES INTERFACE_LINK_LIBRARIES "${deps}")
  endif()
endforeach()

separate_arguments(KILN_LLVM_DEFINITIONS UNIX_COMMAND "${LLVM_DEFINITIONS}")

# LLVM is built without RTTI; code that subclasses LLVM/MLIR classes must match.
set(KILN_LLVM_CXX_FLAGS -fno-rtti)

# kiln_add_mlir_library(name SOURCES ... DEPENDS ... LINK ...): a static library
# of kiln code built against MLIR headers.
function(kiln_add_mlir_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} SYSTEM PUBLIC ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
  target_compile_options(${name} PRIVATE ${KILN_LLVM_CXX_FLAGS})
  target_compile_options(${name} PUBLIC ${KILN_LLVM_DEFINITIONS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  kiln_add_warnings(${name})
endfunction()
