//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ---------------===//
//
// Feeds each input to npy::parse (tools/kiln-run/Npy.cpp), the reader of
// kiln-run's --input and --check files. A std::runtime_error is the expected
// answer to a bad input; any other exception (std::bad_alloc,
// std::out_of_range from a substr, std::invalid_argument from a stoll), a
// crash or a sanitizer report is a bug. An accepted input must hold exactly
// the bytes its shape and dtype promise, which is what kiln-run relies on
// when it converts the data. The input is parsed in place, so
// AddressSanitizer sees any read past its end.
//
// Built by test/CMakeLists.txt with clang++-22 -fsanitize=fuzzer,address,
// undefined; test/fuzz/README.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <typeinfo>

namespace {

void require(bool invariant) {
  if (!invariant)
    __builtin_trap();
}

void checkInvariants(const kiln::npy::Array &array) {
  size_t item = array.descr == "<f4" || array.descr == "<i4" ? 4
                : array.descr == "<f2"                        ? 2
                : array.descr == "<i8" || array.descr == "<f8" ? 8
                : array.descr == "|b1"                        ? 1
                                                              : 0;
  require(item != 0);
  require(array.shape.size() <= kiln::npy::kMaxRank);
  uint64_t elements = 1;
  bool overflow = false;
  for (int64_t d : array.shape) {
    require(d >= 0);
    overflow |= __builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements);
  }
  uint64_t bytes = 0;
  overflow |= __builtin_mul_overflow(elements, item, &bytes);
  require(!overflow && bytes == array.data.size());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  try {
    kiln::npy::Array array =
        kiln::npy::parse(std::string_view(reinterpret_cast<const char *>(data), size), "fuzz");
    checkInvariants(array);
  } catch (const std::exception &e) {
    // Only the reader's own errors are answers; typeid tells them apart from
    // the standard library's (out_of_range, invalid_argument derive from
    // logic_error, bad_alloc from exception).
    require(typeid(e) == typeid(std::runtime_error));
  }
  return 0;
}
