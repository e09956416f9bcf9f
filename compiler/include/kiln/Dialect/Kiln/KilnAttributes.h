//===- KilnAttributes.h - the discardable attributes kiln sets --*- C++ -*-===//
//
// Every `kiln.*` attribute that passes put on ops and functions, by name,
// with who writes it, who reads it and what it holds. Code spells them
// through these names only.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECT_KILN_KILNATTRIBUTES_H
#define KILN_DIALECT_KILN_KILNATTRIBUTES_H

#include "llvm/ADT/StringRef.h"

namespace kiln::attr {

/// #kiln.kernel<...> on a kiln.fusion: the kernel it runs as. Written by
/// kiln-select-kernels (or by hand, to force a variant); read by codegen.
inline constexpr llvm::StringLiteral kKernel = "kiln.kernel";

/// Unit, on any op: no fusion pass takes the op into a group (tests, and
/// ops a frontend wants kept apart).
inline constexpr llvm::StringLiteral kNoFuse = "kiln.no_fuse";

/// Unit, on a kiln.concat: the pass that made it checked that its one
/// reader's kernel reads it in place on the artifact's primary target (a
/// merged shortcut's channel concat, kiln-merge-shortcut-conv), so the
/// fusion pass takes it into that reader's group. An unmarked concat keeps
/// a kernel of its own.
inline constexpr llvm::StringLiteral kReadInPlace = "kiln.read_in_place";

/// Unit, on a GEMM: its operands may be rounded to tf32 (kiln-set-precision
/// at tf32); read by the reference evaluator.
inline constexpr llvm::StringLiteral kTf32 = "kiln.tf32";

/// #kiln.precision<...> on a function: the arithmetic it was lowered to.
/// Written by kiln-set-precision; read by --verify (its tolerance).
inline constexpr llvm::StringLiteral kPrecision = "kiln.precision";

/// DenseI64Array on a kiln.fusion or kiln.launch: each result's byte offset in the arena,
/// -1 for a function result. Written by kiln-plan-memory.
inline constexpr llvm::StringLiteral kOffsets = "kiln.offsets";

/// I64 on a function: the arena's peak bytes, and what no reuse would
/// need. Written by kiln-plan-memory.
inline constexpr llvm::StringLiteral kArenaBytes = "kiln.arena_bytes";
/// On a kiln.launch whose kernel keeps a workspace: `array<i64: offset,
/// bytes>` in the arena, past every planned buffer (kiln-lower-launches).
inline constexpr llvm::StringLiteral kWorkspace = "kiln.workspace";
inline constexpr llvm::StringLiteral kIntermediateBytes = "kiln.intermediate_bytes";

/// String on a function argument: the model input's name (the frontend's;
/// the artifact's signature).
inline constexpr llvm::StringLiteral kName = "kiln.name";

} // namespace kiln::attr

#endif // KILN_DIALECT_KILN_KILNATTRIBUTES_H
