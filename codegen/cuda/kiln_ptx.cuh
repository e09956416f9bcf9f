//===- kiln_ptx.cuh - PTX wrappers every kernel family shares -------------===//
//
// One definition of each inline-assembly helper the GEMM, split-K,
// convolution and attention loops use: shared-memory addresses, cp.async
// 16-byte copies (zero-filled when invalid) and their groups, and ldmatrix
// loads of 8x8 b16 tiles. Each is a forced-inline function around one
// `asm volatile`, so a kernel compiles to the same PTX as with the
// assembly written in place.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace kiln {

__device__ __forceinline__ unsigned smem_address(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// 16 bytes from global to shared memory, asynchronously; zeros when
/// `valid` is false (`global` must still be a mapped address).
__device__ __forceinline__ void cp_async16(void *shared, const void *global, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(shared)),
               "l"(global), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
/// Waits until at most N committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// Four 8x8 b16 matrices (x4), or two (x2), each lane giving one row's
/// address; `_trans` transposes each matrix.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(p)));
}
__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_address(p)));
}
__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2], const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(smem_address(p)));
}

} // namespace kiln
