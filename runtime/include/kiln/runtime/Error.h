//===- Error.h - the runtime's error type -----------------------*- C++ -*-===//
//
// The runtime reports every failure (no driver, no GPU, a failed driver call)
// as kiln::rt::Error whose message names the cause, so a host program can
// print it and exit instead of aborting.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ERROR_H
#define KILN_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace kiln::rt {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Thrown when this machine cannot run CUDA at all (no driver, no device), so
/// tests and tools can tell "skip" from "fail".
class NoDeviceError : public Error {
public:
  using Error::Error;
};

} // namespace kiln::rt

#endif // KILN_RUNTIME_ERROR_H
