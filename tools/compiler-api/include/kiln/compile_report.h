//===- compile_report.h - what a compile did with its kernels ---*- C++ -*-===//
//
// Filled by kiln::compileModel (kiln/compile.h) for a caller that times its
// compiles: the kernel images' sources and seconds, as kiln-compile -v
// prints them. Standard types only, so that code built without RTTI (the
// compiler driver, beside MLIR) can fill it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILE_REPORT_H
#define KILN_COMPILE_REPORT_H

#include <cstddef>
#include <string>
#include <vector>

namespace kiln {

struct CompileReport {
  struct Image {
    std::string kernel, kind, arch;
    /// The compiling thread's CPU seconds.
    double seconds = 0;
  };
  /// Kernel images (a kernel for one architecture) read from the kernel
  /// cache or the kernel library, and compiled with NVRTC.
  std::size_t cachedImages = 0, libraryImages = 0, compiledImages = 0;
  /// Wall seconds of the phase that compiles them, side by side.
  double kernelSeconds = 0;
  /// Each compiled image, slowest first.
  std::vector<Image> images;
};

} // namespace kiln

#endif // KILN_COMPILE_REPORT_H
