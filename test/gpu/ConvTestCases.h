//===- ConvTestCases.h - convolution, pooling and reduction cases -*- C++ -*-===//
//
// The IR builders and case lists of ConvKernelsGpuTest.cpp that the GEMM
// tests share (the Hopper convolutions run under the GEMM epilogue's
// settings; the compile test takes every family's cases).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_GPU_CONVTESTCASES_H
#define KILN_TEST_GPU_CONVTESTCASES_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::testing {

/// One conv_epilogue group: conv2d (+ bias) (+ residual add) + relu; with
/// `nchw` the input arrives NCHW and the group permutes it first.
struct ConvCase {
  int64_t n, h, w, c, o, kh, kw;
  std::vector<int64_t> strides, padding, dilation;
  int64_t groups;
  std::string type;
  bool bias = true, residual = true, nchw = false;
  /// A kernel configuration to force (empty: kiln-select-kernels chooses).
  std::string config = "";
};
std::string conv(const ConvCase &k);
/// Every convolution path (SIMT, mma.sync, grouped, depthwise, 1x1, NCHW
/// inputs, stems, strided and dilated), sizes off the tiles.
std::vector<ConvCase> convCases();
/// conv_wgmma forced on ragged shapes, and as selected for ResNet-50.
std::vector<ConvCase> hopperConvCases();
std::vector<std::string> poolCases();
std::vector<std::string> reduceCases();
/// An elementwise group of data movement (permute, strided slice, concat).
std::string movement(const std::string &type);

} // namespace kiln::testing

#endif // KILN_TEST_GPU_CONVTESTCASES_H
