//===- KernelTuning.h - kernels measured fastest, by fusion group -*- C++ -*-===//
//
// A tuning file maps fusion groups to the `#kiln.kernel` configuration
// timed fastest for each on one GPU (bench/tune_layers.py writes it on the
// GPU machine; kiln-apply-kernel-tuning reads it). A group is named by a
// key that does not depend on where it sits in a model: a hash of its kind,
// its inputs' and results' types and its body, without locations or the
// attributes passes attach (memory offsets, a kernel already chosen), so
// the same layer in two models, or in two compiles that differ only in
// their kernel choices, has one key.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_KERNELTUNING_H
#define KILN_PASSES_KERNELTUNING_H

#include "kiln/Dialect/Kiln/KilnAttributes.h"
#include "kiln/Dialect/Kiln/KilnOps.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>

namespace kiln {

/// The group's tuning key: 16 hex digits.
std::string kernelTuningKey(FusionOp group);

/// A tuning file as read: the primary target it was measured on and the
/// configuration of each group key it holds.
struct KernelTuning {
  std::string arch;
  int64_t multiprocessors = 0;
  llvm::StringMap<KernelConfigAttr> kernels;
};

/// Reads the tuning file at `path`; nothing, with `error` naming the file
/// and what is wrong (unreadable, not JSON, a missing or mistyped field, an
/// entry whose kernel does not parse as a `#kiln.kernel<...>`
/// configuration, a key given twice).
std::optional<KernelTuning> readKernelTuning(const std::string &path,
                                             mlir::MLIRContext *context, std::string &error);

/// The format line every tuning file starts with.
inline constexpr llvm::StringLiteral kKernelTuningFormat = "kiln-kernel-tuning 1";

} // namespace kiln

#endif // KILN_PASSES_KERNELTUNING_H
