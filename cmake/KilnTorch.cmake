#===- KilnTorch.cmake - LibTorch for the TorchScript frontend -------------===#
#
# A hand-made INTERFACE target instead of find_package(Torch): with a CUDA wheel
# the latter drags in libtorch_cuda, cuDNN, NCCL and NVSHMEM and fails without a
# CUDA toolkit. The frontend only needs libtorch_cpu and libc10. Only
# compiler/frontend/torchscript links this target.
if(NOT KILN_TORCH_DIR)
  execute_process(
    COMMAND python3 -c "import torch, os; print(os.path.dirname(torch.__file__))"
    OUTPUT_VARIABLE KILN_TORCH_DIR OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE torch_rc ERROR_QUIET)
  if(NOT torch_rc EQUAL 0)
    message(FATAL_ERROR "kiln: python3 cannot import torch; run scripts/setup.sh "
      "or pass -DKILN_TORCH_DIR=<site-packages>/torch")
  endif()
endif()
set(KILN_TORCH_DIR "${KILN_TORCH_DIR}" CACHE PATH "torch package folder (LibTorch)")

foreach(lib torch_cpu c10)
  find_library(KILN_TORCH_${lib} ${lib} HINTS ${KILN_TORCH_DIR}/lib NO_DEFAULT_PATH)
  if(NOT KILN_TORCH_${lib})
    message(FATAL_ERROR "kiln: lib${lib}.so not found in ${KILN_TORCH_DIR}/lib")
  endif()
endforeach()

add_library(kiln_torch INTERFACE)
target_include_directories(kiln_torch SYSTEM INTERFACE
  ${KILN_TORCH_DIR}/include
  ${KILN_TORCH_DIR}/include/torch/csrc/api/include)
# The PyPI wheels are built with the C++11 ABI (torch.compiled_with_cxx11_abi()).
target_compile_definitions(kiln_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=1)
target_link_libraries(kiln_torch INTERFACE ${KILN_TORCH_torch_cpu} ${KILN_TORCH_c10})
# libtorch_cpu of a CUDA wheel needs libcudart/libcupti from the wheel's nvidia
# folder; both rpaths let the tools run without LD_LIBRARY_PATH.
set(KILN_TORCH_RPATH "${KILN_TORCH_DIR}/lib;${KILN_TORCH_DIR}/../nvidia/cu13/lib")
