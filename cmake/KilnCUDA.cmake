#===- KilnCUDA.cmake - the CUDA toolkit pieces kiln uses ------------------===#
#
# kiln needs the driver API (cuda.h, linked against the stub libcuda so the
# build works on machines without a GPU; the real driver is found at run time),
# NVRTC, and the CCCL headers that NVRTC-compiled kernels include.
set(KILN_CUDA_HOME "/usr/local/cuda" CACHE PATH "CUDA toolkit root")

find_path(KILN_CUDA_INCLUDE_DIR cuda.h HINTS ${KILN_CUDA_HOME}/include NO_DEFAULT_PATH)
find_library(KILN_CUDA_DRIVER_STUB cuda HINTS ${KILN_CUDA_HOME}/lib64/stubs NO_DEFAULT_PATH)
find_library(KILN_NVRTC_LIBRARY nvrtc HINTS ${KILN_CUDA_HOME}/lib64 NO_DEFAULT_PATH)
foreach(var KILN_CUDA_INCLUDE_DIR KILN_CUDA_DRIVER_STUB KILN_NVRTC_LIBRARY)
  if(NOT ${var})
    message(FATAL_ERROR "kiln: the CUDA toolkit at ${KILN_CUDA_HOME} lacks ${var} "
      "(need include/cuda.h, lib64/stubs/libcuda.so, lib64/libnvrtc.so); "
      "set -DKILN_CUDA_HOME=<toolkit root>")
  endif()
endforeach()
if(NOT EXISTS ${KILN_CUDA_HOME}/include/cccl/cuda/ptx)
  message(FATAL_ERROR "kiln: CCCL headers missing at ${KILN_CUDA_HOME}/include/cccl")
endif()

# The driver: link the stub, never record its path as a runtime dependency;
# at run time the loader finds the real libcuda.so.1 of the installed driver.
add_library(kiln_cuda_driver INTERFACE)
target_include_directories(kiln_cuda_driver SYSTEM INTERFACE ${KILN_CUDA_INCLUDE_DIR})
target_link_libraries(kiln_cuda_driver INTERFACE ${KILN_CUDA_DRIVER_STUB})

add_library(kiln_nvrtc INTERFACE)
target_include_directories(kiln_nvrtc SYSTEM INTERFACE ${KILN_CUDA_INCLUDE_DIR})
target_link_libraries(kiln_nvrtc INTERFACE ${KILN_NVRTC_LIBRARY})
