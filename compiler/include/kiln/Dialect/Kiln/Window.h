//===- Window.h - output sizes of convolution and pooling windows -*- C++ -*-===//
//
// One definition of PyTorch's window arithmetic, shared by the verifiers,
// the frontend and codegen.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_WINDOW_H
#define KILN_DIALECT_KILN_WINDOW_H

#include <cstdint>

namespace kiln {

/// Output length of a convolution along one dimension; <= 0 when the
/// window does not fit.
inline int64_t convOutputSize(int64_t size, int64_t kernel, int64_t stride,
                              int64_t padBefore, int64_t padAfter, int64_t dilation) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = size + padBefore + padAfter;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

/// Output length of a pooling window (PyTorch's pooling_output_shape): with
/// ceil mode the division rounds up, but the last window must start inside
/// the input or its leading padding.
inline int64_t poolOutputSize(int64_t size, int64_t kernel, int64_t stride,
                              int64_t padBefore, int64_t padAfter, bool ceilMode) {
  int64_t numerator = size + padBefore + padAfter - kernel + (ceilMode ? stride - 1 : 0);
  if (numerator < 0)
    return 0;
  int64_t out = numerator / stride + 1;
  if (ceilMode && (out - 1) * stride >= size + padBefore)
    --out;
  return out;
}

} // namespace kiln

#endif // KILN_DIALECT_KILN_WINDOW_H
