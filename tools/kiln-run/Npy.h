//===- Npy.h - read and write NumPy .npy files ------------------*- C++ -*-===//
//
// Version 1/2/3 headers, little-endian, C order; dtypes f4, f2, i8, i4, b1
// (numpy has no bfloat16, so bf16 tensors travel as f4 and are converted).
// A file is untrusted: its header is parsed as the small Python literal it
// is, every size is checked without overflow against the bytes present, and
// every failure is one std::runtime_error naming the file and the cause.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_NPY_H
#define KILN_TOOLS_NPY_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::npy {

struct Array {
  std::string descr; // "<f8", "<f4", "<f2", "<i8", "<i4", "|b1"
  std::vector<int64_t> shape;
  std::string data;
};

/// At most this many dimensions (numpy's own limit is 64).
constexpr size_t kMaxRank = 32;

/// Parses the bytes of a .npy file; `what` names it in errors.
Array parse(std::string_view bytes, const std::string &what);
/// Reads and parses `path`.
Array read(const std::string &path);
/// Writes through a temporary file renamed into place, so a failure leaves
/// no partial file.
void write(const std::string &path, const Array &array);
/// `bytes` to `path` through a temporary file renamed into place (also
/// kiln-run's traces): a failure throws and leaves no partial file.
void writeFileAtomically(const std::string &path, const std::string &bytes);

} // namespace kiln::npy

#endif // KILN_TOOLS_NPY_H
