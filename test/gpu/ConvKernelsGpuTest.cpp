//===- ConvKernelsGpuTest.cpp - convolutions, pooling, reductions (gpu) ----===//
//
// Convolutions on every path, pooling, reductions and data movement
// against the ATen reference evaluator running the same IR, on random
// inputs at sizes that are not tile multiples; the evaluator's windows
// against ATen's NCHW ops. Every GPU test skips, with the reason, where no
// GPU is present.
//
//===----------------------------------------------------------------------===//

#include "ConvTestCases.h"
#include "GpuTestSupport.h"

#include "kiln/Dialect/Kiln/KilnOps.h"
#include "kiln/Dialect/Kiln/Window.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace mlir;
using namespace kiln;
using kiln::testing::ConvCase;
using kiln::testing::conv;
using kiln::testing::convCases;
using kiln::testing::expectCompilesForBothImages;
using kiln::testing::expectMatchesReference;
using kiln::testing::hopperConvCases;
using kiln::testing::movement;
using kiln::testing::poolCases;
using kiln::testing::randomInputs;
using kiln::testing::reduceCases;
using kiln::testing::tensorType;

namespace {

std::string list(std::vector<int64_t> values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

/// One pooling group: pool2d then a multiply by 2 (an epilogue op);
/// `forced`, when given, is the group's `#kiln.kernel<...>` configuration.
std::string pool(std::vector<int64_t> shape, const std::string &kind, std::vector<int64_t> kernel,
                 std::vector<int64_t> strides, std::vector<int64_t> padding, bool ceil,
                 bool includePad, const std::string &type, const std::string &forced = "") {
  int64_t oh = poolOutputSize(shape[1], kernel[0], strides[0], padding[0], padding[2], ceil);
  int64_t ow = poolOutputSize(shape[2], kernel[1], strides[1], padding[1], padding[3], ceil);
  std::string x = tensorType(shape, type), y = tensorType({shape[0], oh, ow, shape[3]}, type);
  return "func.func @f(%x: " + x + ") -> " + y + " {\n  %0 = kiln.fusion pooling ins(%x : " + x +
         ")" + (forced.empty() ? "" : " {kiln.kernel = " + forced + "}") + " -> " + y +
         " {\n  ^bb0(%a: " + x + "):\n    %p = kiln.pool2d %a " + kind +
         " kernel = " + list(kernel) + " strides = " + list(strides) + " padding = " +
         list(padding) + (ceil ? " ceil_mode" : "") + (includePad ? " count_include_pad" : "") +
         " : " + x + " -> " + y + "\n    %c = kiln.constant dense<2.0> : tensor<" + type +
         ">\n    %m = kiln.mul %p, %c : " + y + ", tensor<" + type + "> -> " + y +
         "\n    kiln.yield %m : " + y + "\n  }\n  return %0 : " + y + "\n}\n";
}

/// One reduction group: exp prologue, the reduction, a tanh epilogue.
std::string reduce(std::vector<int64_t> shape, const std::string &op, std::vector<int64_t> dims,
                   bool keepdim, const std::string &type, bool prologue = true) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (!reduced)
      out.push_back(shape[d]);
    else if (keepdim)
      out.push_back(1);
  }
  std::string x = tensorType(shape, type), y = tensorType(out, type);
  return "func.func @f(%x: " + x + ") -> " + y + " {\n  %0 = kiln.fusion reduction ins(%x : " + x +
         ") -> " + y + " {\n  ^bb0(%a: " + x + "):\n" +
         (prologue ? "    %e = kiln.sigmoid %a : " + x + "\n" : "") +
         "    %r = kiln." + op + " " + (prologue ? "%e" : "%a") + " dims = " + list(dims) + (keepdim ? " keepdim" : "") +
         " : " + x + " -> " + y + "\n    %t = kiln.tanh %r : " + y + "\n    kiln.yield %t : " +
         y + "\n  }\n  return %0 : " + y + "\n}\n";
}

// As the selection stage gives it (eight blocks a multiprocessor), and
// under ptxas's own register count (the retry after a refusal).
const char *const kDepthwise8 =
    "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112, "
    "blocks_per_sm = 8>";
/// 2-D patches of rows x columns outputs (the selection stage's launch
/// bounds: four blocks a multiprocessor).
std::string depthwisePatch(int64_t rows, int64_t columns, int64_t gridLimit = 2112) {
  return "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = " +
         std::to_string(gridLimit) + ", pixel_tile = [1, " + std::to_string(rows) + ", " +
         std::to_string(columns) + "], blocks_per_sm = 4>";
}
const char *const kDepthwise8OneBlock =
    "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 1], grid_limit = 2112>";
const char *const kDepthwise8x2 =
    "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 2], grid_limit = 2112>";
const char *const kDepthwise8x4 =
    "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 4], grid_limit = 2112>";

const char *const kEightChannelPool = "#kiln.kernel<variant = pooling, tile = [1, 8, 1], "
                                      "grid_limit = 2112>";
} // namespace

namespace kiln::testing {

std::string conv(const ConvCase &k) {
  int64_t oh = convOutputSize(k.h, k.kh, k.strides[0], k.padding[0], k.padding[2], k.dilation[0]);
  int64_t ow = convOutputSize(k.w, k.kw, k.strides[1], k.padding[1], k.padding[3], k.dilation[1]);
  std::string xh = tensorType({k.n, k.h, k.w, k.c}, k.type);
  std::string x = k.nchw ? tensorType({k.n, k.c, k.h, k.w}, k.type) : xh;
  std::string w = tensorType({k.o, k.kh, k.kw, k.c / k.groups}, k.type);
  std::string b = tensorType({k.o}, k.type), y = tensorType({k.n, oh, ow, k.o}, k.type);
  std::vector<std::pair<std::string, std::string>> args = {{"x", x}, {"w", w}};
  if (k.bias)
    args.push_back({"b", b});
  if (k.residual)
    args.push_back({"r", y});
  std::string params, names, types, block;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string sep = i ? ", " : "";
    params += sep + "%" + args[i].first + ": " + args[i].second;
    names += sep + "%" + args[i].first;
    types += sep + args[i].second;
    block += sep + "%a" + args[i].first + ": " + args[i].second;
  }
  std::string forced = k.config.empty() ? "" : " {kiln.kernel = " + k.config + "}";
  std::string ir = "func.func @f(" + params + ") -> " + y + " {\n  %0 = kiln.fusion conv_epilogue ins(" +
                   names + " : " + types + ")" + forced + " -> " + y + " {\n  ^bb0(" + block + "):\n";
  std::string input = "%ax";
  if (k.nchw) {
    ir += "    %p = kiln.permute %ax [0, 2, 3, 1] : " + x + " -> " + xh + "\n";
    input = "%p";
  }
  ir += "    %y = kiln.conv2d " + input + ", %aw" + (k.bias ? ", %ab" : "") + " strides = " +
        list(k.strides) + " padding = " + list(k.padding) + " dilation = " + list(k.dilation) +
        " groups = " + std::to_string(k.groups) + " : (" + xh + ", " + w +
        (k.bias ? ", " + b : "") + ") -> " + y + "\n";
  std::string value = "%y";
  if (k.residual) {
    ir += "    %t = kiln.add %y, %ar : " + y + "\n";
    value = "%t";
  }
  ir += "    %u = kiln.relu " + value + " : " + y + "\n    kiln.yield %u : " + y +
        "\n  }\n  return %0 : " + y + "\n}\n";
  return ir;
}


/// An elementwise group of data movement: NCHW -> NHWC permute of %x plus
/// a strided slice of %y plus a concat of %z and %w along channels.
std::string movement(const std::string &type) {
  std::string x = tensorType({2, 6, 5, 7}, type), y = tensorType({2, 12, 7, 6}, type);
  std::string z = tensorType({2, 5, 7, 2}, type), w = tensorType({2, 5, 7, 4}, type);
  std::string o = tensorType({2, 5, 7, 6}, type);
  return "func.func @f(%x: " + x + ", %y: " + y + ", %z: " + z + ", %w: " + w + ") -> " + o +
         " {\n  %0 = kiln.fusion elementwise ins(%x, %y, %z, %w : " + x + ", " + y + ", " + z +
         ", " + w + ") -> " + o + " {\n  ^bb0(%a: " + x + ", %b: " + y + ", %c: " + z +
         ", %d: " + w + "):\n    %p = kiln.permute %a [0, 2, 3, 1] : " + x + " -> " + o +
         "\n    %s = kiln.slice %b offsets = [0, 1, 0, 0] strides = [1, 2, 1, 1] : " + y +
         " -> " + o + "\n    %k = kiln.concat %c, %d dim = 3 : (" + z + ", " + w + ") -> " + o +
         "\n    %t = kiln.add %p, %s : " + o + "\n    %u = kiln.mul %t, %k : " + o +
         "\n    kiln.yield %u : " + o + "\n  }\n  return %0 : " + o + "\n}\n";
}

std::vector<ConvCase> convCases() {
  return {
      // fp32 (SIMT implicit GEMM, direct depthwise, GEMM for 1x1)
      {2, 9, 11, 5, 17, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f32"},
      {1, 13, 10, 3, 8, 7, 7, {2, 2}, {3, 2, 2, 3}, {1, 1}, 1, "f32"},
      {2, 7, 9, 17, 6, 3, 3, {2, 1}, {0, 1, 2, 0}, {2, 1}, 1, "f32"},
      {1, 5, 7, 6, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, "f32"},
      {2, 9, 9, 5, 5, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 5, "f32"},
      {2, 7, 5, 16, 12, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f32"},
      {1, 9, 9, 3, 8, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, "f32", true, false, true},
      // fp16/bf16 (mma.sync implicit GEMM, wgmma/mma.sync GEMM for 1x1)
      {1, 17, 19, 3, 16, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, "f16"},
      {2, 9, 11, 16, 24, 3, 3, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1, "f16"},
      {2, 8, 8, 64, 130, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16"},
      {1, 8, 8, 16, 8, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "bf16"},
      {2, 7, 7, 10, 6, 3, 3, {1, 1}, {0, 1, 2, 1}, {1, 1}, 2, "bf16"},
      {2, 9, 9, 32, 32, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 32, "f16", true, false},
      {1, 11, 11, 17, 34, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 17, "bf16"},
      {1, 15, 15, 3, 8, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, false, true},
      {1, 12, 12, 24, 40, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", false, true},
      // conv_stem (C < 8): ResNet's 7x7 stem on ragged sizes (several tiles,
      // the last one partial); 24 outputs (padded to 32), bf16 (both on input
      // rows); NCHW with dilation and 120 outputs; one input channel, 5x5
      // (both im2col: stride 1 over an odd channel count).
      {3, 37, 41, 3, 64, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, "f16"},
      {2, 30, 33, 3, 24, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, "bf16", true, false},
      {2, 19, 23, 5, 120, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, "f16", true, true, true},
      {1, 16, 16, 1, 32, 5, 5, {1, 1}, {2, 1, 0, 2}, {1, 1}, 1, "f16", false, true},
      // Depthwise, 8 channels a thread (forced: these shapes are too small
      // for the selection stage to choose it): two slices of channels (the
      // second partial), 5x5 with a residual; bf16 with stride and dilation;
      // 12 threads per position (EfficientNet's 96 channels: ptxas spilled
      // this one under a 32-register budget while it stored channel pairs);
      // ConvNeXt's 7x7 over 384; EfficientNet's 144 (two even slices of 72)
      // with a residual, and 184 (slices of 96 and 88: the second one's
      // last group idle) under ptxas's own register count.
      {2, 13, 11, 200, 200, 5, 5, {1, 1}, {2, 2, 2, 2}, {1, 1}, 200, "f16", true, true, false,
       kDepthwise8},
      {3, 10, 10, 72, 72, 3, 3, {2, 2}, {1, 1, 1, 1}, {2, 2}, 72, "bf16", true, false, false,
       kDepthwise8},
      {2, 15, 15, 96, 96, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 96, "f16", true, false, false,
       kDepthwise8},
      {1, 9, 9, 384, 384, 7, 7, {1, 1}, {3, 3, 3, 3}, {1, 1}, 384, "f16", true, true, false,
       kDepthwise8},
      {2, 11, 13, 144, 144, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 144, "f16", true, true, false,
       kDepthwise8},
      {3, 9, 7, 184, 184, 5, 5, {2, 2}, {2, 2, 2, 2}, {1, 1}, 184, "bf16", true, false, false,
       kDepthwise8OneBlock},
      // Two and four adjacent output columns a thread: rows of 11 and 13
      // outputs (a last group of 3 or 1), 5x5 with a residual, stride 2 with
      // dilation 2, two slices of channels, a grid limit small enough that
      // blocks loop.
      {2, 13, 11, 200, 200, 5, 5, {1, 1}, {2, 2, 2, 2}, {1, 1}, 200, "f16", true, true, false,
       kDepthwise8x4},
      {3, 10, 10, 72, 72, 3, 3, {2, 2}, {1, 1, 1, 1}, {2, 2}, 72, "bf16", true, false, false,
       kDepthwise8x2},
      {2, 11, 13, 144, 144, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 144, "f16", true, true, false,
       kDepthwise8x4},
      {1, 9, 7, 96, 96, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 96, "f16", true, false, false,
       kDepthwise8x2},
      {4, 17, 17, 32, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 32, "f16", true, true, false,
       "#kiln.kernel<variant = conv_depthwise, tile = [1, 8, 4], grid_limit = 3>"},
      // conv_stem on input rows: ResNet's stem from NCHW over 71 output
      // columns (a row's second tile holds 7) with a residual; 4 channels,
      // asymmetric padding, bf16, NHWC; 2 channels at stride 1 with row
      // dilation over 70 columns (K = 5 rows of 10 padded to 16).
      {2, 141, 141, 3, 64, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, "f16", true, true, true},
      {2, 33, 50, 4, 40, 3, 3, {2, 2}, {0, 1, 2, 1}, {1, 1}, 1, "bf16"},
      {1, 20, 70, 2, 16, 5, 5, {1, 1}, {2, 2, 2, 2}, {2, 1}, 1, "f16", true, false, true},
      // One block a multiprocessor past 64 outputs: 96 (SqueezeNet's, two
      // warps along them), NCHW over 150 output columns, bf16.
      {1, 40, 300, 3, 96, 7, 7, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, "bf16", true, false, true},
      // Depthwise over 2-D patches staged in shared memory (pixel_tile):
      // outputs that are no multiple of the patch either way, two slices of
      // channels (the second partial, 184) with a residual; stride 2 with
      // dilation in bf16; 5x5 with a residual; a grid limit small enough
      // that blocks walk several patches; one-row patches.
      {2, 13, 11, 144, 144, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 144, "f16", true, true, false,
       depthwisePatch(4, 8)},
      {3, 9, 7, 184, 184, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 184, "f16", true, true, false,
       depthwisePatch(4, 4)},
      {3, 17, 15, 72, 72, 3, 3, {2, 2}, {2, 2, 2, 2}, {2, 2}, 72, "bf16", true, false, false,
       depthwisePatch(2, 4)},
      {2, 15, 14, 48, 48, 5, 5, {1, 1}, {2, 2, 2, 2}, {1, 1}, 48, "f16", true, true, false,
       depthwisePatch(4, 8, 3)},
      {1, 10, 23, 32, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 32, "f16", true, false, false,
       depthwisePatch(1, 8)},
  };
}

/// conv_wgmma forced on ragged shapes (sizes that are not multiples of the
/// pixel box, the tile width or 64 channels), and as kiln-select-kernels
/// chooses it for ResNet-50's second-stage 3x3 convolution at batch 32.
std::vector<ConvCase> hopperConvCases() {
  auto forced = [](int64_t width, int64_t stages, std::string pixels,
                   std::string schedule = "cooperative", int64_t gridLimit = 132,
                   int64_t multicast = 1, int64_t blocksPerSM = 1, int64_t splitK = 1) {
    return "#kiln.kernel<variant = conv_wgmma, tile = [128, " + std::to_string(width) +
           ", 64], stages = " + std::to_string(stages) +
           ", split_k = " + std::to_string(splitK) + ", grid_limit = " +
           std::to_string(gridLimit) + ", pixel_tile = " + pixels + ", schedule = " + schedule +
           ", multicast = " + std::to_string(multicast) +
           ", blocks_per_sm = " + std::to_string(blocksPerSM) + ">";
  };
  return {
      {2, 13, 15, 40, 72, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 4, "[1, 4, 8]")},
      {3, 11, 17, 24, 64, 3, 3, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1, "bf16", true, true, false,
       forced(64, 6, "[2, 2, 4]")},
      // 98-pixel boxes: the second consumer's rows past the box are stale.
      {2, 14, 14, 64, 200, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(192, 3, "[2, 7, 7]")},
      {1, 9, 9, 16, 32, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 1, "f16", false, false, false,
       forced(128, 2, "[1, 5, 5]")},
      {2, 10, 9, 136, 256, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "bf16", true, false, false,
       forced(256, 3, "[2, 8, 8]")},
      {32, 28, 28, 128, 128, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 5, "[8, 4, 4]")},
      // Boxes of whole 7 x 7 rows of 18 images (ResNet-50's last stage at
      // batch 32), the last box 2 images deep.
      {20, 7, 7, 64, 128, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, true, false,
       forced(64, 6, "[18, 1, 7]")},
      // Ping-pong: one warpgroup's tile rows past a 98-pixel box, a residual
      // and a strided ragged edge, blocks walking several tiles each.
      {2, 14, 14, 64, 200, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 5, "[2, 7, 7]", "pingpong", 1)},
      {3, 11, 17, 24, 72, 3, 3, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1, "bf16", true, true, false,
       forced(64, 6, "[2, 2, 4]", "pingpong", 5)},
      // Bias-free, so that the epilogue rounds the accumulator itself first
      // (ptxas serialized such a ping-pong kernel's wgmmas; kiln rejected it),
      // with and without a residual.
      {2, 14, 14, 64, 200, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", false, true, false,
       forced(128, 5, "[2, 7, 7]", "pingpong", 1)},
      {3, 11, 17, 24, 72, 3, 3, {2, 2}, {1, 0, 0, 1}, {1, 1}, 1, "bf16", false, false, false,
       forced(64, 6, "[2, 2, 4]", "pingpong", 5)},
      // Two blocks a multiprocessor, as the cost model takes them for a
      // strided 1x1 with a residual (ResNet-50's 256 -> 512 at batch 32):
      // K = 136 (3 k-steps, the last ragged), 72 channels (a ragged 64-wide
      // column tile), 7 x 9 outputs in 8 x 4 x 4 boxes of 3 images, 5
      // blocks walking the tiles.
      {3, 14, 18, 136, 72, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(64, 3, "[8, 4, 4]", "cooperative", 5, 1, 2)},
      // Multicast pairs: an odd count of pixel tiles, both schedules.
      {2, 13, 15, 40, 200, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 4, "[1, 4, 8]", "cooperative", 6, 2)},
      {2, 14, 14, 64, 200, 1, 1, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 5, "[1, 4, 7]", "pingpong", 4, 2)},
      // Two blocks a multiprocessor.
      {2, 13, 15, 40, 72, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "bf16", true, true, false,
       forced(64, 2, "[1, 4, 8]", "cooperative", 7, 1, 2)},
      // K split over pairs of blocks, as --wgmma-split-k takes ResNet-50's
      // last 3x3 convolutions: 9 k-steps split 5 + 4, two pairs walking 7
      // pixel tiles each (the last box 2 images deep), a residual.
      {20, 7, 7, 64, 128, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, "f16", true, true, false,
       forced(128, 4, "[18, 1, 7]", "cooperative", 4, 1, 1, 2)},
      // 200 channels (a ragged column tile), stride 2, bf16, more pairs
      // allowed than tiles.
      {2, 13, 15, 40, 200, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, "bf16", true, true, false,
       forced(128, 3, "[1, 4, 8]", "cooperative", 132, 1, 1, 2)},
  };
}

std::vector<std::string> poolCases() {
  return {pool({2, 9, 9, 5}, "max", {3, 3}, {2, 2}, {1, 1, 1, 1}, false, false, "f32"),
          pool({2, 8, 7, 17}, "max", {3, 3}, {2, 2}, {1, 0, 0, 1}, true, false, "f16"),
          pool({2, 8, 7, 17}, "avg", {3, 3}, {2, 2}, {1, 0, 0, 1}, true, true, "f32"),
          pool({1, 7, 7, 8}, "avg", {2, 2}, {2, 2}, {0, 0, 1, 1}, true, false, "f32"),
          pool({2, 6, 9, 3}, "avg", {3, 2}, {3, 2}, {1, 1, 1, 1}, true, false, "bf16"),
          pool({1, 5, 5, 4}, "avg", {3, 3}, {1, 1}, {1, 1, 1, 1}, false, true, "f16"),
          // Eight channels a thread (forced: the policy does not take it
          // yet), ragged sizes, borders, ceil mode and both divisors.
          pool({2, 13, 11, 24}, "max", {3, 3}, {2, 2}, {1, 1, 1, 1}, false, false, "f16",
               kEightChannelPool),
          pool({3, 9, 10, 16}, "max", {3, 3}, {2, 2}, {1, 0, 0, 1}, true, false, "bf16",
               kEightChannelPool),
          pool({2, 8, 7, 40}, "avg", {3, 3}, {2, 2}, {1, 0, 0, 1}, true, true, "f16",
               kEightChannelPool),
          pool({1, 7, 9, 8}, "avg", {2, 3}, {1, 2}, {1, 1, 1, 1}, false, false, "bf16",
               kEightChannelPool)};
}

std::vector<std::string> reduceCases() {
  return {reduce({2, 7, 7, 64}, "reduce_mean", {1, 2}, true, "f16"),
          reduce({3, 5, 6, 5}, "reduce_mean", {1, 2}, false, "f32"),
          reduce({6, 300}, "reduce_sum", {1}, false, "f32"),
          reduce({4, 3, 33}, "reduce_max", {0, 2}, true, "bf16"),
          reduce({5, 2000}, "reduce_mean", {1}, true, "f32"),
          reduce({7, 9, 4}, "reduce_sum", {0}, false, "f32"),
          // Straight from the group's input over a middle run (kiln_reduce.cuh):
          // 16-byte vectors, L split over a cluster of 8, 2 and 4 blocks
          // (ragged), and unsplit; sum, mean and max; every element type.
          reduce({32, 56, 56, 96}, "reduce_mean", {1, 2}, true, "f16", false),
          reduce({2, 37, 29, 16}, "reduce_mean", {1, 2}, true, "f16", false),
          reduce({2, 4099, 4}, "reduce_sum", {1}, false, "f32", false),
          reduce({3, 13, 11, 40}, "reduce_mean", {1, 2}, false, "bf16", false),
          reduce({6, 300, 16}, "reduce_max", {1}, true, "bf16", false),
          reduce({4, 50, 3, 24}, "reduce_sum", {1}, false, "f32", false)};
}

} // namespace kiln::testing

/// Which of convCases() each GPU test runs, by index: every case in one set
/// (KernelsGpu.ConvCasesEachRunOnce checks it without a GPU).
const std::map<std::string, std::vector<int>> &convCaseSets() {
  static const std::map<std::string, std::vector<int>> sets = {
      {"ConvFp32Simt", {0, 1, 2}},
      {"ConvFp32GroupedDepthwise1x1Nchw", {3, 4, 5, 6}},
      {"ConvFp16StemAndStrided", {7, 8, 15}},
      {"ConvStemFewChannels", {16, 17, 18, 19, 31, 32, 33, 34}},
      {"Conv1x1AsGemm", {9, 10}},
      {"ConvGroupedDepthwiseNchwReduced", {11, 12, 13, 14, 20, 21, 22, 23, 24, 25}},
      {"ConvDepthwiseColumns", {26, 27, 28, 29, 30}},
      {"ConvDepthwisePatches", {35, 36, 37, 38, 39}}};
  return sets;
}

TEST(KernelsGpu, ConvCasesEachRunOnce) {
  std::vector<int> seen(convCases().size(), 0);
  for (const auto &[name, indices] : convCaseSets())
    for (int i : indices) {
      ASSERT_LT(i, static_cast<int>(seen.size())) << name;
      ++seen[i];
    }
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], 1) << "convCases()[" << i << "] runs in " << seen[i] << " tests";
}

TEST(KernelsGpu, ConvFp32Simt) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvFp32Simt"))
    expectMatchesReference(conv(cases[i]));
}

TEST(KernelsGpu, ConvFp32GroupedDepthwise1x1Nchw) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvFp32GroupedDepthwise1x1Nchw"))
    expectMatchesReference(conv(cases[i]));
}

TEST(KernelsGpu, ConvFp16StemAndStrided) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvFp16StemAndStrided"))
    expectMatchesReference(conv(cases[i]));
}

TEST(KernelsGpu, ConvStemFewChannels) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvStemFewChannels"))
    expectMatchesReference(conv(cases[i]));
}

TEST(KernelsGpu, Conv1x1AsGemm) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("Conv1x1AsGemm"))
    expectMatchesReference(conv(cases[i]));
}

// 1x1 convolutions on the Hopper GEMM's 192-row tiles (three consumer
// warpgroups), each width the selection stage may give them: pixel counts
// off 192 (585, 196, 98), K off 64, a residual, bf16, grids smaller than
// the tile count.
static std::vector<ConvCase> tallConv1x1Cases() {
  auto forced = [](int64_t width, int64_t stages, int64_t gridLimit) {
    return "#kiln.kernel<variant = gemm_wgmma, tile = [192, " + std::to_string(width) +
           ", 64], stages = " + std::to_string(stages) +
           ", grid_limit = " + std::to_string(gridLimit) + ">";
  };
  return {
      {3, 13, 15, 72, 200, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(64, 5, 7)},
      {4, 7, 7, 520, 136, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "bf16", true, false, false,
       forced(128, 4, 132)},
      {1, 14, 14, 112, 672, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", true, true, false,
       forced(192, 3, 2)},
      {2, 7, 7, 256, 64, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, "f16", false, true, false,
       forced(64, 5, 132)},
  };
}

TEST(KernelsGpu, Conv1x1TallTiles) {
  KILN_REQUIRE_GPU();
  for (const ConvCase &c : tallConv1x1Cases())
    expectMatchesReference(conv(c));
}

// Needs NVRTC, not a GPU: the same kernels compile for sm_90a and sm_80
// without a spill.
TEST(KernelsGpu, Conv1x1TallTilesCompile) {
  std::vector<std::string> irs;
  for (const ConvCase &c : tallConv1x1Cases())
    irs.push_back(conv(c));
  expectCompilesForBothImages(irs);
}

TEST(KernelsGpu, ConvGroupedDepthwiseNchwReduced) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvGroupedDepthwiseNchwReduced"))
    expectMatchesReference(conv(cases[i]));
}

// Eight channels of two or four adjacent output columns a thread.
TEST(KernelsGpu, ConvDepthwiseColumns) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvDepthwiseColumns"))
    expectMatchesReference(conv(cases[i]));
}

// Depthwise over 2-D patches of outputs staged in shared memory.
TEST(KernelsGpu, ConvDepthwisePatches) {
  KILN_REQUIRE_GPU();
  auto cases = convCases();
  for (int i : convCaseSets().at("ConvDepthwisePatches"))
    expectMatchesReference(conv(cases[i]));
}

// On an H200 the sm_90a image runs TMA + wgmma; with KILN_GPU_TEST_ARCH=
// sm_80 the same kernels run their mma.sync fallback on the same grid.
TEST(KernelsGpu, ConvHopperImplicitGemm) {
  KILN_REQUIRE_GPU();
  for (const ConvCase &c : hopperConvCases())
    expectMatchesReference(conv(c));
}

// A projection shortcut merged into a bottleneck's last convolution
// (kiln-merge-shortcut-conv): relu(conv1x1(concat(h, x[:, ::s, ::s])) + b),
// the concat and slice read in place by conv_wgmma's two input maps (other
// images: conv_mma_concat). Channel counts off 64 (part 0's last box reads
// zeros where part 1's weights follow), ragged pixel boxes, grids smaller
// than the tile count.
namespace {
struct ShortcutCase {
  int64_t N, OH, OW, C0, C1, stride, O;
  const char *type;
  std::string forced;
};

std::string shortcutConv(const ShortcutCase &c) {
  // An odd-sized input under a strided slice: its last row and column are
  // never read.
  const int64_t H1 = c.stride == 1 ? c.OH : c.OH * c.stride - 1,
                W1 = c.stride == 1 ? c.OW : c.OW * c.stride;
  std::string h = tensorType({c.N, c.OH, c.OW, c.C0}, c.type),
              x = tensorType({c.N, H1, W1, c.C1}, c.type),
              sliced = tensorType({c.N, c.OH, c.OW, c.C1}, c.type),
              joined = tensorType({c.N, c.OH, c.OW, c.C0 + c.C1}, c.type),
              w = tensorType({c.O, 1, 1, c.C0 + c.C1}, c.type), b = tensorType({c.O}, c.type),
              y = tensorType({c.N, c.OH, c.OW, c.O}, c.type);
  std::string s = std::to_string(c.stride);
  std::string slice =
      c.stride == 1 ? ""
                    : "    %s = kiln.slice %ax offsets = [0, 0, 0, 0] strides = [1, " + s + ", " +
                          s + ", 1] : " + x + " -> " + sliced + "\n";
  return "func.func @f(%h: " + h + ", %x: " + x + ", %w: " + w + ", %b: " + b + ") -> " + y +
         " {\n  %0 = kiln.fusion conv_epilogue ins(%h, %x, %w, %b : " + h + ", " + x + ", " + w +
         ", " + b + ") {kiln.kernel = " + c.forced + "} -> " + y + " {\n  ^bb0(%ah: " + h +
         ", %ax: " + x + ", %aw: " + w + ", %ab: " + b + "):\n" + slice +
         "    %c = kiln.concat %ah, " + (c.stride == 1 ? "%ax" : "%s") + " dim = 3 : (" + h +
         ", " + sliced + ") -> " + joined + "\n    %y = kiln.conv2d %c, %aw, %ab strides = [1, 1] "
         "padding = [0, 0, 0, 0] dilation = [1, 1] groups = 1 : (" + joined + ", " + w + ", " +
         b + ") -> " + y + "\n    %r = kiln.relu %y : " + y + "\n    kiln.yield %r : " + y +
         "\n  }\n  return %0 : " + y + "\n}\n";
}

std::vector<ShortcutCase> shortcutCases() {
  return {
      {3, 7, 9, 40, 24, 2, 72, "f16",
       "#kiln.kernel<variant = conv_wgmma, tile = [128, 64, 64], stages = 4, grid_limit = 5, "
       "pixel_tile = [2, 4, 8]>"},
      {2, 14, 14, 64, 128, 1, 256, "bf16",
       "#kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132, "
       "pixel_tile = [1, 8, 14]>"},
      {4, 7, 7, 128, 256, 2, 200, "f16",
       "#kiln.kernel<variant = conv_wgmma, tile = [128, 128, 64], stages = 5, grid_limit = 7, "
       "pixel_tile = [2, 7, 7], schedule = pingpong>"},
  };
}

} // namespace

TEST(KernelsGpu, ConvShortcutConcat) {
  KILN_REQUIRE_GPU();
  for (const ShortcutCase &c : shortcutCases())
    expectMatchesReference(shortcutConv(c));
}

// Needs NVRTC, not a GPU.
TEST(KernelsGpu, ConvShortcutConcatCompile) {
  std::vector<std::string> irs;
  for (const ShortcutCase &c : shortcutCases())
    irs.push_back(shortcutConv(c));
  expectCompilesForBothImages(irs);
}

TEST(KernelsGpu, PoolingMaxAvgCeilModePadding) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : poolCases())
    expectMatchesReference(ir);
}

TEST(KernelsGpu, ReductionsWithPrologueAndEpilogue) {
  KILN_REQUIRE_GPU();
  for (const std::string &ir : reduceCases())
    expectMatchesReference(ir);
}

TEST(KernelsGpu, PermuteSliceConcat) {
  KILN_REQUIRE_GPU();
  expectMatchesReference(movement("f32"));
  expectMatchesReference(movement("f16"));
}

// Needs no GPU: the evaluator's NHWC convolution and pooling (explicit
// padding, PyTorch's divisors) agree with ATen's NCHW ops where ATen can
// express the padding (symmetric).
TEST(KernelsGpu, ReferenceWindowsMatchATen) {
  MLIRContext context;
  context.loadDialect<KilnDialect, func::FuncDialect>();
  auto evaluate = [&](const std::string &ir, std::vector<at::Tensor> &inputs) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
    EXPECT_TRUE(module);
    auto fn = *module->getOps<func::FuncOp>().begin();
    inputs = randomInputs(fn, 3);
    std::string error;
    auto results = frontend::evaluateReference(fn, inputs, error);
    EXPECT_TRUE(results) << error;
    return results ? (*results)[0] : at::Tensor();
  };
  std::vector<at::Tensor> in;
  at::Tensor got = evaluate(conv({2, 9, 8, 6, 4, 3, 3, {2, 1}, {1, 2, 1, 2}, {1, 2}, 2, "f32", true, false}), in);
  at::Tensor want = at::relu(at::conv2d(in[0].permute({0, 3, 1, 2}), in[1].permute({0, 3, 1, 2}),
                                        in[2], {2, 1}, {1, 2}, {1, 2}, 2))
                        .permute({0, 2, 3, 1});
  EXPECT_LE(kiln::testing::relativeL2(got, want), 1e-6);
  for (bool ceil : {false, true})
    for (bool includePad : {false, true}) {
      got = evaluate(pool({2, 8, 7, 3}, "avg", {3, 3}, {2, 2}, {1, 1, 1, 1}, ceil, includePad, "f32"), in);
      want = at::avg_pool2d(in[0].permute({0, 3, 1, 2}), {3, 3}, {2, 2}, {1, 1}, ceil, includePad)
                 .permute({0, 2, 3, 1}) * 2;
      EXPECT_LE(kiln::testing::relativeL2(got, want), 1e-6) << ceil << includePad;
    }
  got = evaluate(pool({2, 8, 7, 3}, "max", {3, 3}, {2, 2}, {1, 1, 1, 1}, true, false, "f32"), in);
  want = at::max_pool2d(in[0].permute({0, 3, 1, 2}), {3, 3}, {2, 2}, {1, 1}, {1, 1}, true)
             .permute({0, 2, 3, 1}) * 2;
  EXPECT_LE(kiln::testing::relativeL2(got, want), 1e-6);
}

// A 1x1 convolution that ends in its global average pool (kiln-fuse-conv-
// epilogue's global-pool): the pooled Hopper GEMM, row tiles of whole
// images summed by column in the epilogue. Image counts that leave the
// last row tile part full, channel counts off the tile, images of 49, 16
// and 121 pixels (2, 8 and 1 a tile), a residual through the ring and
// copied by rows, SiLU without keepdim in bf16, a grid of 2 blocks that
// each walk several tiles (the sums cleared between them), and the
// selection's own choice. On GPUs without wgmma (KILN_GPU_TEST_ARCH=sm_80)
// the forced ones run the CUDA-core fallback.
namespace {
struct PooledCase {
  int64_t N, H, W, C, O;
  const char *type;
  bool residual, keepdim;
  std::string forced;
};

std::string pooledConv(const PooledCase &c) {
  const std::string x = tensorType({c.N, c.H, c.W, c.C}, c.type),
                    w = tensorType({c.O, 1, 1, c.C}, c.type), b = tensorType({c.O}, c.type),
                    y = tensorType({c.N, c.H, c.W, c.O}, c.type),
                    p = c.keepdim ? tensorType({c.N, 1, 1, c.O}, c.type)
                                  : tensorType({c.N, c.O}, c.type);
  const std::string inputs = "%x, %w, %b" + std::string(c.residual ? ", %r" : ""),
                    types = x + ", " + w + ", " + b + (c.residual ? ", " + y : "");
  std::string ir = "func.func @f(%x: " + x + ", %w: " + w + ", %b: " + b +
                   (c.residual ? ", %r: " + y : "") + ") -> " + p +
                   " {\n  %0 = kiln.fusion conv_epilogue ins(" + inputs + " : " + types + ")" +
                   (c.forced.empty() ? "" : " {kiln.kernel = " + c.forced + "}") + " -> " + p +
                   " {\n  ^bb0(%ax: " + x + ", %aw: " + w + ", %ab: " + b +
                   (c.residual ? ", %ar: " + y : "") +
                   "):\n    %y = kiln.conv2d %ax, %aw, %ab strides = [1, 1] padding = [0, 0, 0, "
                   "0] dilation = [1, 1] groups = 1 : (" + x + ", " + w + ", " + b + ") -> " + y +
                   "\n";
  std::string value = "%y";
  if (c.residual) {
    ir += "    %t = kiln.add %y, %ar : " + y + "\n    %u = kiln.relu %t : " + y + "\n";
    value = "%u";
  } else {
    ir += "    %u = kiln.silu %y : " + y + "\n";
    value = "%u";
  }
  ir += "    %m = kiln.reduce_mean " + value + " dims = [1, 2]" + (c.keepdim ? " keepdim" : "") +
        " : " + y + " -> " + p + "\n    kiln.yield %m : " + p + "\n  }\n  return %0 : " + p +
        "\n}\n";
  return ir;
}

std::vector<PooledCase> pooledCases() {
  const std::string ring = "#kiln.kernel<variant = gemm_wgmma, tile = [128, 256, 64], stages = 4, "
                           "grid_limit = 132, residual_ring = true>";
  return {
      {5, 7, 7, 72, 200, "f16", true, true, ""},
      {5, 7, 7, 64, 512, "f16", true, true, ring},
      {9, 4, 4, 40, 200, "bf16", false, false,
       "#kiln.kernel<variant = gemm_wgmma, tile = [128, 128, 64], stages = 4, grid_limit = 132>"},
      {7, 11, 11, 136, 96, "f16", true, false,
       "#kiln.kernel<variant = gemm_wgmma, tile = [128, 64, 64], stages = 4, grid_limit = 2>"},
      {3, 7, 7, 320, 1280, "bf16", false, true, ""},
  };
}
} // namespace

TEST(KernelsGpu, ConvGlobalPool) {
  KILN_REQUIRE_GPU();
  // Another architecture's selection has no kernel for the pool: its
  // image runs the forced cases only.
  const char *forcedArch = std::getenv("KILN_GPU_TEST_ARCH");
  for (const PooledCase &c : pooledCases())
    if (!c.forced.empty() || !forcedArch || !*forcedArch)
      expectMatchesReference(pooledConv(c));
}

// Needs NVRTC, not a GPU: the forced configurations compile for sm_90a and
// sm_80 without a spill (the selection's own choice needs a GPU to ask).
TEST(KernelsGpu, ConvGlobalPoolCompiles) {
  std::vector<std::string> irs;
  for (const PooledCase &c : pooledCases())
    if (!c.forced.empty())
      irs.push_back(pooledConv(c));
  expectCompilesForBothImages(irs);
}
