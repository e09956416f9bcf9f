//===- Npy.h - read and write NumPy .npy files ------------------*- C++ -*-===//
//
// Version 1/2 headers, little-endian, C order; dtypes f4, f2, i8, i4, b1
// (numpy has no bfloat16, so bf16 tensors travel as f4 and are converted).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_NPY_H
#define KILN_TOOLS_NPY_H

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::npy {

struct Array {
  std::string descr; // "<f4", "<f2", "<i8", "<i4", "|b1"
  std::vector<int64_t> shape;
  std::string data;
};

/// Throws std::runtime_error naming the file and the problem.
Array read(const std::string &path);
void write(const std::string &path, const Array &array);

} // namespace kiln::npy

#endif // KILN_TOOLS_NPY_H
