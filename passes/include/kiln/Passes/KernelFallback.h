//===- KernelFallback.h - a safer configuration after a rejection -*- C++ -*-===//
//
// Where ptxas' report on a selected kernel is refused (a spill, a
// performance warning), the compiler retries the group with a configuration
// that asks less of the registers: the selection policy's second choice,
// one step at a time (passes/lib/KernelFallback.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_PASSES_KERNELFALLBACK_H
#define KILN_PASSES_KERNELFALLBACK_H

#include "kiln/Dialect/Kiln/KilnDialect.h"

#include <optional>
#include <string>

namespace kiln {

/// The next configuration to try after `config`'s kernel was rejected, and
/// in `why` what it gives up; none where nothing simpler is left.
/// `poolImages`: a pooled GEMM's images a tile (GlobalPool), whose fp32 sums
/// a tile wide share the block's shared memory with the ring.
std::optional<KernelConfigAttr> saferKernelConfig(KernelConfigAttr config, std::string &why,
                                                  int64_t poolImages = 0);

} // namespace kiln

#endif // KILN_PASSES_KERNELFALLBACK_H
