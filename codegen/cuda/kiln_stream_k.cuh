//===- kiln_stream_k.cuh - how stream-K shares tiles among blocks ----------===//
//
// The work plan of the Hopper main loop's stream-K schedule
// (kiln_gemm_sm90.cuh), apart from the kernel so that the host tests
// (test/unit/StreamKPlanTest.cpp) check its invariants on every shape: each
// k-iteration done once, each block's range non-empty, at most one share a
// block that finishes no tile and walked first, the finisher's peers exactly
// the tile's other blocks.
//
//===----------------------------------------------------------------------===//
#pragma once

// Device code in kernels; plain inline functions in the host tests.
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define KILN_STREAM_K_FN __device__ __forceinline__
#else
#define KILN_STREAM_K_FN inline
#endif

namespace kiln::sm90 {

/// A stream-K workspace opens with this many flags (4 KiB), one a block,
/// then holds one fp32 tile of partial sums (kStreamKTileRows x width) a
/// block. The code generator sizes launches' workspaces with the same
/// function.
constexpr int kStreamKFlags = 1024, kStreamKTileRows = 128;
constexpr long long stream_k_workspace_bytes(int width, int blocks) {
  return kStreamKFlags * 4LL + static_cast<long long>(blocks) * kStreamKTileRows * width * 4;
}

/// Stream-K: where the tiles fill the blocks' last wave only partly (ViT's
/// 6304 x 768 output is 200 tiles of 128 x 192: 1.5 waves of 132 blocks,
/// a quarter of the GPU idle for the second; a convolution's 100 tiles
/// leave 32 blocks idle throughout), the last full wave and the remainder
/// (or, under one wave, every tile) are shared out by k-iterations instead
/// of by tiles: block b takes the streamed tiles' iterations [start(b),
/// start(b + 1)), all blocks the same count within one. A tile's iterations may thus span blocks; the
/// block holding its last iteration finishes it (adds the others' partial
/// sums and runs the epilogue), the others leave their partial sums in the
/// workspace and raise their flag. Each block walks its range from the end:
/// its one share that finishes no tile is its first work and its flag is up
/// before it waits on anyone, so no block waits on a block that waits.
/// The tiles before the streamed ones go to the blocks as usual.
struct StreamKPlan {
  int blocks, kTiles, dataParallelTiles, iterations;
  KILN_STREAM_K_FN StreamKPlan(int tiles, int kTiles_, int blocks_)
      : blocks(blocks_), kTiles(kTiles_) {
    int streamed = tiles < blocks ? tiles
                   : tiles % blocks != 0 ? blocks + tiles % blocks
                                         : 0;
    // Every block needs an iteration (a finisher waits on each block between
    // the tile's first and itself); fewer and the tiles go as usual.
    if (static_cast<long long>(streamed) * kTiles < blocks)
      streamed = 0;
    dataParallelTiles = tiles - streamed;
    iterations = streamed * kTiles;
  }
  KILN_STREAM_K_FN int start(int b) const {
    return static_cast<int>(static_cast<long long>(b) * iterations / blocks);
  }
  /// The block whose range holds streamed iteration i.
  KILN_STREAM_K_FN int owner(int i) const {
    int b = static_cast<int>(static_cast<long long>(i) * blocks / iterations);
    while (b + 1 < blocks && start(b + 1) <= i)
      ++b;
    while (b > 0 && start(b) > i)
      --b;
    return b;
  }
  /// visit(tile, kBegin, kEnd, firstIteration) for block b's work in order:
  /// its streamed shares from the last, then its data-parallel tiles.
  /// firstIteration is the tile's first streamed iteration (-1: not streamed).
  /// One call site: the main loop and epilogue in `visit` are inlined once.
  template <typename Visit> KILN_STREAM_K_FN void walk(int b, Visit &&visit) const {
    const int first = start(b);
    for (int end = start(b + 1), dataParallel = b;;) {
      int tile, kBegin, kEnd, tileStart = -1;
      if (end > first) {
        const int streamed = (end - 1) / kTiles;
        tileStart = streamed * kTiles;
        const int begin = first > tileStart ? first : tileStart;
        tile = dataParallelTiles + streamed;
        kBegin = begin - tileStart;
        kEnd = end - tileStart;
        end = begin;
      } else if (dataParallel < dataParallelTiles) {
        tile = dataParallel;
        kBegin = 0;
        kEnd = kTiles;
        dataParallel += blocks;
      } else {
        return;
      }
      visit(tile, kBegin, kEnd, tileStart);
    }
  }
};

} // namespace kiln::sm90
