//===- kiln_ptx.cuh - PTX wrappers every kernel family shares -------------===//
//
// One definition of each inline-assembly helper the GEMM, split-K,
// convolution and attention loops use: shared-memory addresses, cp.async
// 16-byte copies (zero-filled when invalid) and their groups, ldmatrix
// loads of 8x8 b16 tiles, and a cluster's barrier and shared-memory reads. Each is a forced-inline function around one
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

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/// Thread-block clusters (sm_90): the split-K GEMM and the middle reduction
/// leave partial results in shared memory and add up their peers'.
/// Every block of the cluster arrives, releasing its shared-memory writes,
/// and waits for the others'.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}
/// The address of `local` (this block's shared memory) in block `rank` of
/// the cluster, for cluster_load and cluster_store4_async (kiln_sm90.cuh).
__device__ __forceinline__ unsigned cluster_address(const void *local, unsigned rank) {
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n"
               : "=r"(remote)
               : "r"(smem_address(local)), "r"(rank));
  return remote;
}
/// ... in each of the cluster's first N blocks.
template <int N>
__device__ __forceinline__ void cluster_peer_addresses(const void *local, unsigned (&peers)[N]) {
#pragma unroll
  for (int peer = 0; peer < N; ++peer)
    peers[peer] = cluster_address(local, static_cast<unsigned>(peer));
}
__device__ __forceinline__ float cluster_load(unsigned address) {
  float x;
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(x) : "r"(address));
  return x;
}
__device__ __forceinline__ float4 cluster_load4(unsigned address) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(address));
  return v;
}
#endif

} // namespace kiln
