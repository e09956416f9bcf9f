//===- KernelCache.h - the on-disk cache of compiled kernels ----*- C++ -*-===//
//
// NVRTC takes seconds per kernel; the cache keeps each (source, options,
// architecture, NVRTC version) result on disk. Many compiles may share one
// folder at once (parallel builds, several users of one home), and any of
// them may be killed at any moment, so:
//
// - an entry is one file holding the cubin and the PTX behind a header with
//   their sizes and a checksum, written to a temporary file of a unique name
//   (process id and a random suffix) and renamed into place: a reader sees a
//   whole entry or none, and two writers never share a temporary file;
// - a read verifies the header and the checksum; an entry that fails (cut
//   short, corrupted, written by something else) is never used: the kernel
//   is recompiled and the entry replaced;
// - a failed write removes its temporary file, and opening the cache removes
//   the temporary files of processes that no longer exist.
//
// Entry layout (little-endian): "KILNKC01", u64 cubin bytes, u64 PTX bytes,
// u64 FNV-1a 64 of the key, the cubin and the PTX; then the cubin, the PTX.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_KERNELCACHE_H
#define KILN_CODEGEN_KERNELCACHE_H

#include "kiln/codegen/Nvrtc.h"

#include <filesystem>
#include <optional>
#include <string>

namespace kiln::codegen {

class KernelCache {
public:
  /// $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else ~/.cache/kiln; nothing
  /// when KILN_NO_CACHE is set or no folder can be made. The first call in a
  /// process removes stale temporary files there.
  static std::optional<KernelCache> fromEnvironment();
  /// The kernel library, read-only: entries of this layout that
  /// kiln-kernel-library wrote for kernels whose sizes are given at launch,
  /// so that no model's compile pays for them. $KILN_KERNEL_LIBRARY (empty:
  /// none), else share/kiln/kernels beside the running binary's folder
  /// (build/bin -> build/share/kiln/kernels), where that folder exists.
  /// A non-empty `folder` (the caller's choice) comes before both.
  static std::optional<KernelCache> library(const std::string &folder = {});

  explicit KernelCache(std::filesystem::path folder) : folder_(std::move(folder)) {}

  /// The entry for `key` (a file name: letters, digits, '-', '_'), verified;
  /// nothing when it is missing or bad.
  std::optional<NvrtcOutput> lookup(const std::string &key) const;
  /// Writes the entry for `key` atomically, replacing any other. Returns
  /// false with `error` set when it cannot; no file is left behind then.
  bool store(const std::string &key, const NvrtcOutput &output, std::string &error) const;
  /// Removes temporary files whose writing process no longer exists.
  void removeStaleTemporaries() const;

  std::filesystem::path entryPath(const std::string &key) const;
  const std::filesystem::path &folder() const { return folder_; }

private:
  std::filesystem::path folder_;
};

} // namespace kiln::codegen

#endif // KILN_CODEGEN_KERNELCACHE_H
