#===- KilnCUDA.cmake - the CUDA toolkit pieces kiln uses ------------------===#
#
# kiln needs the driver API headers (the driver itself is dlopen-ed at run time,
# so nothing links libcuda and binaries start on machines without a GPU), NVRTC,
# and the CCCL headers that NVRTC-compiled kernels include.
set(KILN_CUDA_HOME "/usr/local/cuda" CACHE PATH "CUDA toolkit root")

find_path(KILN_CUDA_INCLUDE_DIR cuda.h HINTS ${KILN_CUDA_HOME}/include NO_DEFAULT_PATH)
if(NOT KILN_CUDA_INCLUDE_DIR)
  message(FATAL_ERROR "kiln: no include/cuda.h under the CUDA toolkit at ${KILN_CUDA_HOME}; "
    "set -DKILN_CUDA_HOME=<toolkit root>")
endif()
# The runtime needs only cuda.h (it loads the driver at run time); the
# compiler also needs NVRTC and the CCCL headers its kernels include.
if(KILN_RUNTIME_ONLY)
  return()
endif()

find_library(KILN_NVRTC_LIBRARY nvrtc HINTS ${KILN_CUDA_HOME}/lib64 NO_DEFAULT_PATH)
if(NOT KILN_NVRTC_LIBRARY)
  message(FATAL_ERROR "kiln: the CUDA toolkit at ${KILN_CUDA_HOME} lacks lib64/libnvrtc.so; "
    "set -DKILN_CUDA_HOME=<toolkit root>")
endif()
if(NOT EXISTS ${KILN_CUDA_HOME}/include/cccl/cuda/ptx)
  message(FATAL_ERROR "kiln: CCCL headers missing at ${KILN_CUDA_HOME}/include/cccl")
endif()

add_library(kiln_nvrtc INTERFACE)
target_include_directories(kiln_nvrtc SYSTEM INTERFACE ${KILN_CUDA_INCLUDE_DIR})
target_link_libraries(kiln_nvrtc INTERFACE ${KILN_NVRTC_LIBRARY})
# Where NVRTC is found at run time: the toolkit here and on the GPU machine.
get_filename_component(KILN_NVRTC_LIBDIR ${KILN_NVRTC_LIBRARY} DIRECTORY)
