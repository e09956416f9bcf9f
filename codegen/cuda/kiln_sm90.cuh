//===- kiln_sm90.cuh - Hopper PTX wrappers: mbarrier, TMA, wgmma ----------===//
//
// The sm_90a instructions a Hopper kernel family builds on, in one place:
// the tensor map a kernel receives, mbarrier transactions (init, expected
// bytes, arrive, parity wait), the 2-D bulk tensor copy (TMA) into shared
// memory (and 3-D and 4-D boxes), the wgmma shared-memory descriptor of a K-major tile in 128-byte
// swizzle, and wgmma m64nNk16 (N = 56, 64, 128, 192, 256) into fp32 accumulators;
// for attention, an MN-major descriptor and wgmma with A from registers.
// Each is a forced-inline wrapper around its `asm volatile`. Everything but
// the TensorMap type exists only when compiling for sm_90a
// (__CUDA_ARCH_FEAT_SM90_ALL).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "kiln_common.cuh"
#include "kiln_ptx.cuh"

namespace kiln::sm90 {

/// A CUtensorMap as the kernel receives it (by value, __grid_constant__).
struct alignas(64) TensorMap {
  unsigned long long words[16];
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)


__device__ __forceinline__ void barrier_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_address(bar)), "r"(count));
}
__device__ __forceinline__ void barrier_expect_tx(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_address(bar)),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void barrier_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_address(bar)) : "memory");
}
__device__ __forceinline__ void barrier_wait(unsigned long long *bar, unsigned parity) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "wait_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra wait_%=;\n"
               "}\n" ::"r"(smem_address(bar)),
               "r"(parity)
               : "memory");
}

__device__ __forceinline__ void tma_load_2d(void *dst, const TensorMap &map, int x, int y,
                                            unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_address(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
               "r"(smem_address(bar))
               : "memory");
}

/// The same box written into the shared memory of every block of the
/// cluster in `blocks` (a bit per rank), at this block's `dst` offset, each
/// completing bytes on its own barrier at this block's `bar` offset.
__device__ __forceinline__ void tma_load_2d_multicast(void *dst, const TensorMap &map, int x,
                                                      int y, unsigned long long *bar,
                                                      unsigned short blocks) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(smem_address(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y),
               "r"(smem_address(bar)), "h"(blocks)
               : "memory");
}
__device__ __forceinline__ void tma_load_3d_multicast(void *dst, const TensorMap &map, int x,
                                                      int y, int z, unsigned long long *bar,
                                                      unsigned short blocks) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(
                   smem_address(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(z),
               "r"(smem_address(bar)), "h"(blocks)
               : "memory");
}

/// Arrives on the barrier at `bar`'s offset in block `rank` of the cluster.
/// No cluster-scope release: what the arrival publishes is that this
/// block's wgmmas finished reading the stage, not memory it wrote (a
/// .release.cluster would also wait for the previous tile's epilogue
/// stores).
__device__ __forceinline__ void barrier_arrive_cluster(unsigned long long *bar, unsigned rank) {
  asm volatile("{\n"
               ".reg .b32 remote;\n"
               "mapa.shared::cluster.u32 remote, %0, %1;\n"
               "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
               "}\n" ::"r"(smem_address(bar)),
               "r"(rank)
               : "memory");
}

/// Arrives on `bar` in this block and at its offset in every other block
/// of a cluster of `blocks`, this one being block `rank`: a stage that a
/// multicast fills in each of them is free once every block's readers say
/// so.
__device__ __forceinline__ void barrier_arrive_every_block(unsigned long long *bar,
                                                           unsigned rank, unsigned blocks) {
  barrier_arrive(bar);
  for (unsigned peer = 1; peer < blocks; ++peer)
    barrier_arrive_cluster(bar, (rank + peer) % blocks);
}
template <int kBlocks>
__device__ __forceinline__ void barrier_arrive_every_block(unsigned long long *bar,
                                                           unsigned rank) {
  barrier_arrive_every_block(bar, rank, kBlocks);
}

/// Split K across a cluster: a block's partial sums go into its peer's
/// shared memory as asynchronous stores that count their bytes on the
/// peer's barrier (st.async ... complete_tx), which the peer armed with
/// the partial's size and waits on with a cluster-scope acquire: no
/// membar in the sender. Sixteen bytes a store.
__device__ __forceinline__ void cluster_store4_async(unsigned address, float4 v,
                                                     unsigned remoteBarrier) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], "
               "{%1, %2, %3, %4}, [%5];\n" ::"r"(address),
               "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(remoteBarrier)
               : "memory");
}
/// The peer's "read your partial" arrival: a cluster-scope release, so
/// that its reads of this block's partial are done before the next one
/// overwrites it.
__device__ __forceinline__ void barrier_arrive_release_cluster(unsigned long long *bar,
                                                               unsigned rank) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(
                   cluster_address(bar, rank))
               : "memory");
}
__device__ __forceinline__ void barrier_wait_acquire_cluster(unsigned long long *bar,
                                                             unsigned parity) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "wait_%=:\n"
               "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra wait_%=;\n"
               "}\n" ::"r"(smem_address(bar)),
               "r"(parity)
               : "memory");
}

/// 3-D and 4-D boxes (coordinates innermost first; negative and past-the-end
/// coordinates read zeros): an implicit-GEMM convolution's filter taps and
/// NHWC pixel boxes.
__device__ __forceinline__ void tma_load_3d(void *dst, const TensorMap &map, int x, int y, int z,
                                            unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(smem_address(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(z),
               "r"(smem_address(bar))
               : "memory");
}
__device__ __forceinline__ void tma_load_4d(void *dst, const TensorMap &map, int x, int y, int z,
                                            int w, unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(smem_address(dst)),
               "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(z), "r"(w),
               "r"(smem_address(bar))
               : "memory");
}

/// Named barriers between warpgroups (ids past 0, which __syncthreads
/// takes): `threads` counts the waiting and the arriving threads together.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/// Makes the barriers' initialization visible to the async proxy (TMA).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// Gives a warpgroup's registers back (`setmaxnreg.dec`) or takes more
/// (`setmaxnreg.inc`): producers need few, consumers many.
template <int kRegisters> __device__ __forceinline__ void release_registers() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}
template <int kRegisters> __device__ __forceinline__ void claim_registers() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegisters));
}

/// Orders register accesses before the wgmma instructions that follow.
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
/// Gives each accumulator its own register before the first wgmma fence.
/// Zeroed accumulators otherwise share one zero register until a wgmma
/// needs them, and the copies that split them land between two wgmmas of a
/// k-step (ping-pong's second row half), where ptxas must insert a fence
/// and serializes the wgmmas (C7519, C7520).
template <int kChunks> __device__ __forceinline__ void pin_accumulators(float (&d)[kChunks][8]) {
#pragma unroll
  for (int i = 0; i < kChunks; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      asm volatile("" : "+f"(d[i][j])::"memory");
}
/// Accumulators zeroed and pinned to registers of their own.
template <int kChunks> __device__ __forceinline__ void clear_accumulators(float (&d)[kChunks][8]) {
#pragma unroll
  for (int i = 0; i < kChunks; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      d[i][j] = 0.0f;
  pin_accumulators(d);
}
/// Four 8x8 b16 matrices from registers into shared memory, each lane
/// giving one row's address (lanes 8i .. 8i + 7: matrix i's rows) and
/// holding, in r[i], two adjacent elements of matrix i's row lane / 4: the
/// layout of a wgmma accumulator's rows once rounded into pairs.
__device__ __forceinline__ void stmatrix_x4(void *p, const unsigned (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(
                   smem_address(p)),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
/// Closes the group of wgmma instructions issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
/// Waits until at most N committed wgmma groups are still in flight.
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/// wgmma shared-memory descriptor of a K-major tile in 128-byte swizzle:
/// 8-row groups 1024 bytes apart (SBO), leading offset 16 (unused here).
__device__ __forceinline__ unsigned long long descriptor(const void *p) {
  unsigned long long addr = smem_address(p);
  return ((addr & 0x3FFFF) >> 4) | ((16ull >> 4) << 16) | ((1024ull >> 4) << 32) |
         (1ull << 62);
}

/// A descriptor `bytes` further on (a multiple of 16) within the same
/// shared memory: the 14-bit address field cannot carry out (shared memory
/// ends under 2^18 bytes), so the low word's add is the whole of it, where
/// descriptor() of the new address costs a mask, a shift and an OR, and a
/// 64-bit add a carry.
__device__ __forceinline__ unsigned long long descriptor_plus(unsigned long long d,
                                                              unsigned bytes) {
  return (d & 0xFFFFFFFF00000000ull) | (static_cast<unsigned>(d) + bytes / 16);
}

/// wgmma m64nNk16 into a warpgroup's N / 2 fp32 accumulators per thread,
/// for the tile widths the selection stage may choose (64: convolutions of
/// 64 output channels). kTransB = 1 reads B as an MN-major tile (a [K, N]
/// operand stored N-contiguous, described by descriptor_mn): matmul's.
template <typename T, int N, int kTransB = 0> struct Wgmma;
/// m64n16k16: attention's ragged last key tile of at most 16 keys (as
/// Wgmma<T, 16>), and with kTransA = 1 (A an MN-major tile described by
/// descriptor_mn) its last few queries' O^T += V^T P^T.
template <typename T, int kTransA> struct WgmmaM64N16;
#define KILN_WGMMA_M64N16K16(TYPE, PTXTYPE, TRANSA)                            \
  template <> struct WgmmaM64N16<TYPE, TRANSA> {                               \
    static __device__ __forceinline__ void run(float (&d)[1][8],               \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                               \
          "wgmma.mma_async.sync.aligned.m64n16k16.f32." PTXTYPE "." PTXTYPE    \
          " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, 1, 1, 1, " #TRANSA ", 0;\n" \
          "}\n"                                                               \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]),        \
            "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7])         \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N16K16(__half, "f16", 0)
KILN_WGMMA_M64N16K16(__half, "f16", 1)
KILN_WGMMA_M64N16K16(__nv_bfloat16, "bf16", 0)
KILN_WGMMA_M64N16K16(__nv_bfloat16, "bf16", 1)
#undef KILN_WGMMA_M64N16K16
template <> struct Wgmma<__half, 16> : WgmmaM64N16<__half, 0> {};
template <> struct Wgmma<__nv_bfloat16, 16> : WgmmaM64N16<__nv_bfloat16, 0> {};
#define KILN_WGMMA_M64N64K16(TYPE, PTXTYPE, TRANSB)                                    \
  template <> struct Wgmma<TYPE, 64, TRANSB> {                                         \
    static __device__ __forceinline__ void run(float (&d)[4][8],               \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTXTYPE "." PTXTYPE    \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, 1, 1, 1, 0, " #TRANSB ";\n"                             \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7])                                                               \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N64K16(__half, "f16", 0)
KILN_WGMMA_M64N64K16(__half, "f16", 1)
KILN_WGMMA_M64N64K16(__nv_bfloat16, "bf16", 0)
KILN_WGMMA_M64N64K16(__nv_bfloat16, "bf16", 1)
#undef KILN_WGMMA_M64N64K16
/// m64n56k16: the narrow tile (128 x 56) whose 130 tiles fill 132
/// multiprocessors where 128 x 64 leaves a quarter idle (ResNet-50's 1x1
/// 2048 -> 512 at 7 x 7, batch 32). Its 28 accumulators are the first 28
/// of a 64-wide tile's (d[3][4..7] stay untouched), so the main loop holds
/// the same [4][8] array. K-major B only.
#define KILN_WGMMA_M64N56K16(TYPE, PTXTYPE)                                    \
  template <> struct Wgmma<TYPE, 56, 0> {                                      \
    static __device__ __forceinline__ void run(float (&d)[4][8],               \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                                \
          "wgmma.mma_async.sync.aligned.m64n56k16.f32." PTXTYPE "." PTXTYPE    \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, %28, %29, 1, 1, 1, 0, 0;\n"                                \
          "}\n"                                                                \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]), "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])                                                                \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N56K16(__half, "f16")
KILN_WGMMA_M64N56K16(__nv_bfloat16, "bf16")
#undef KILN_WGMMA_M64N56K16
#define KILN_WGMMA_M64N128K16(TYPE, PTXTYPE, TRANSB)                                   \
  template <> struct Wgmma<TYPE, 128, TRANSB> {                                        \
    static __device__ __forceinline__ void run(float (&d)[8][8],              \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTXTYPE "." PTXTYPE   \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, 1, 1, 1, 0, " #TRANSB ";\n"                             \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7]),\
            "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[4][4]), "+f"(d[4][5]), "+f"(d[4][6]), "+f"(d[4][7]),\
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[5][4]), "+f"(d[5][5]), "+f"(d[5][6]), "+f"(d[5][7]),\
            "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[6][4]), "+f"(d[6][5]), "+f"(d[6][6]), "+f"(d[6][7]),\
            "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[7][4]), "+f"(d[7][5]), "+f"(d[7][6]), "+f"(d[7][7])                                                               \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N128K16(__half, "f16", 0)
KILN_WGMMA_M64N128K16(__half, "f16", 1)
KILN_WGMMA_M64N128K16(__nv_bfloat16, "bf16", 0)
KILN_WGMMA_M64N128K16(__nv_bfloat16, "bf16", 1)
#undef KILN_WGMMA_M64N128K16
#define KILN_WGMMA_M64N192K16(TYPE, PTXTYPE, TRANSB)                                   \
  template <> struct Wgmma<TYPE, 192, TRANSB> {                                        \
    static __device__ __forceinline__ void run(float (&d)[12][8],              \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n192k16.f32." PTXTYPE "." PTXTYPE   \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, 1, 1, 1, 0, " #TRANSB ";\n"                             \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7]),\
            "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[4][4]), "+f"(d[4][5]), "+f"(d[4][6]), "+f"(d[4][7]),\
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[5][4]), "+f"(d[5][5]), "+f"(d[5][6]), "+f"(d[5][7]),\
            "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[6][4]), "+f"(d[6][5]), "+f"(d[6][6]), "+f"(d[6][7]),\
            "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[7][4]), "+f"(d[7][5]), "+f"(d[7][6]), "+f"(d[7][7]),\
            "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[8][4]), "+f"(d[8][5]), "+f"(d[8][6]), "+f"(d[8][7]),\
            "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[9][4]), "+f"(d[9][5]), "+f"(d[9][6]), "+f"(d[9][7]),\
            "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[10][4]), "+f"(d[10][5]), "+f"(d[10][6]), "+f"(d[10][7]),\
            "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[11][4]), "+f"(d[11][5]), "+f"(d[11][6]), "+f"(d[11][7])                                                               \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N192K16(__half, "f16", 0)
KILN_WGMMA_M64N192K16(__half, "f16", 1)
KILN_WGMMA_M64N192K16(__nv_bfloat16, "bf16", 0)
KILN_WGMMA_M64N192K16(__nv_bfloat16, "bf16", 1)
#undef KILN_WGMMA_M64N192K16
#define KILN_WGMMA_M64N256K16(TYPE, PTXTYPE, TRANSB)                                   \
  template <> struct Wgmma<TYPE, 256, TRANSB> {                                        \
    static __device__ __forceinline__ void run(float (&d)[16][8],              \
                                               unsigned long long a,           \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTXTYPE "." PTXTYPE   \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, 1, 1, 1, 0, " #TRANSB ";\n"                             \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7]),\
            "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[4][4]), "+f"(d[4][5]), "+f"(d[4][6]), "+f"(d[4][7]),\
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[5][4]), "+f"(d[5][5]), "+f"(d[5][6]), "+f"(d[5][7]),\
            "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[6][4]), "+f"(d[6][5]), "+f"(d[6][6]), "+f"(d[6][7]),\
            "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[7][4]), "+f"(d[7][5]), "+f"(d[7][6]), "+f"(d[7][7]),\
            "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[8][4]), "+f"(d[8][5]), "+f"(d[8][6]), "+f"(d[8][7]),\
            "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), "+f"(d[9][4]), "+f"(d[9][5]), "+f"(d[9][6]), "+f"(d[9][7]),\
            "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[10][4]), "+f"(d[10][5]), "+f"(d[10][6]), "+f"(d[10][7]),\
            "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), "+f"(d[11][4]), "+f"(d[11][5]), "+f"(d[11][6]), "+f"(d[11][7]),\
            "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[12][4]), "+f"(d[12][5]), "+f"(d[12][6]), "+f"(d[12][7]),\
            "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), "+f"(d[13][4]), "+f"(d[13][5]), "+f"(d[13][6]), "+f"(d[13][7]),\
            "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[14][4]), "+f"(d[14][5]), "+f"(d[14][6]), "+f"(d[14][7]),\
            "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3]), "+f"(d[15][4]), "+f"(d[15][5]), "+f"(d[15][6]), "+f"(d[15][7])                                                               \
          : "l"(a), "l"(b));                                                   \
    }                                                                          \
  };
KILN_WGMMA_M64N256K16(__half, "f16", 0)
KILN_WGMMA_M64N256K16(__half, "f16", 1)
KILN_WGMMA_M64N256K16(__nv_bfloat16, "bf16", 0)
KILN_WGMMA_M64N256K16(__nv_bfloat16, "bf16", 1)
#undef KILN_WGMMA_M64N256K16

/// wgmma shared-memory descriptor of an MN-major operand in 128-byte
/// swizzle (a [K, N] tile stored as rows of 64 N-elements, 128 bytes, along
/// K: attention's V): 8-row groups along K 1024 bytes apart (SBO), 64-wide
/// groups along N `groupBytes` apart (LBO, for N > 64).
__device__ __forceinline__ unsigned long long descriptor_mn(const void *p, unsigned groupBytes) {
  unsigned long long addr = smem_address(p);
  return ((addr & 0x3FFFF) >> 4) | (static_cast<unsigned long long>(groupBytes >> 4) << 16) |
         ((1024ull >> 4) << 32) | (1ull << 62);
}

/// wgmma m64nNk16 with A from registers (four b16x2 registers a thread: the
/// layout of an m64 accumulator's 16 columns rounded into pairs) and B an
/// MN-major tile in shared memory (imm-trans-b = 1): attention's P V.
template <typename T, int N> struct WgmmaRegsTransB;
#define KILN_WGMMA_RS_M64N64K16(TYPE, PTXTYPE)                                    \
  template <> struct WgmmaRegsTransB<TYPE, 64> {                                \
    static __device__ __forceinline__ void run(float (&d)[4][8],              \
                                               const unsigned (&a)[4],         \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n64k16.f32." PTXTYPE "." PTXTYPE    \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n" \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7])\
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));               \
    }                                                                          \
  };
KILN_WGMMA_RS_M64N64K16(__half, "f16")
KILN_WGMMA_RS_M64N64K16(__nv_bfloat16, "bf16")
#undef KILN_WGMMA_RS_M64N64K16
#define KILN_WGMMA_RS_M64N128K16(TYPE, PTXTYPE)                                    \
  template <> struct WgmmaRegsTransB<TYPE, 128> {                                \
    static __device__ __forceinline__ void run(float (&d)[8][8],              \
                                               const unsigned (&a)[4],         \
                                               unsigned long long b) {         \
      asm volatile(                                                            \
          "{\n"                                                              \
          "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTXTYPE "." PTXTYPE    \
          " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n" \
          "}\n"                                                              \
          : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[0][4]), "+f"(d[0][5]), "+f"(d[0][6]), "+f"(d[0][7]),\
            "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[1][4]), "+f"(d[1][5]), "+f"(d[1][6]), "+f"(d[1][7]),\
            "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[2][4]), "+f"(d[2][5]), "+f"(d[2][6]), "+f"(d[2][7]),\
            "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), "+f"(d[3][4]), "+f"(d[3][5]), "+f"(d[3][6]), "+f"(d[3][7]),\
            "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[4][4]), "+f"(d[4][5]), "+f"(d[4][6]), "+f"(d[4][7]),\
            "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[5][4]), "+f"(d[5][5]), "+f"(d[5][6]), "+f"(d[5][7]),\
            "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[6][4]), "+f"(d[6][5]), "+f"(d[6][6]), "+f"(d[6][7]),\
            "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), "+f"(d[7][4]), "+f"(d[7][5]), "+f"(d[7][6]), "+f"(d[7][7])\
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));               \
    }                                                                          \
  };
KILN_WGMMA_RS_M64N128K16(__half, "f16")
KILN_WGMMA_RS_M64N128K16(__nv_bfloat16, "bf16")
#undef KILN_WGMMA_RS_M64N128K16

#endif // __CUDA_ARCH_FEAT_SM90_ALL

} // namespace kiln::sm90
