//===- Error.h - the runtime's error types ----------------------*- C++ -*-===//
//
// The runtime reports every failure (no driver, no GPU, a failed driver call,
// a bad file, a wrong input) as a kiln::Error whose message names the cause,
// so a host program can print it and exit instead of aborting. The types are
// public (kiln/kiln.h); the runtime's own code spells them kiln::rt::.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ERROR_H
#define KILN_RUNTIME_ERROR_H

#include "kiln/kiln.h"

namespace kiln::rt {
using kiln::Error;
using kiln::NoDeviceError;
using kiln::OutOfMemoryError;
} // namespace kiln::rt

#endif // KILN_RUNTIME_ERROR_H
