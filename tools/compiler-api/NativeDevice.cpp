//===- NativeDevice.cpp - `--arch native`'s GPU, asked about apart --------===//

#include "NativeDevice.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln;

namespace {
std::optional<rt::DeviceInfo> queryHere(std::string &why) {
  try {
    return rt::queryDevice(0);
  } catch (const std::exception &e) {
    why = e.what();
    return std::nullopt;
  }
}

/// Whether this process already has the CUDA driver (or the test's stand-in
/// that KILN_CUDA_DRIVER names) loaded: then a child could not use it (CUDA
/// refuses a forked child of an initialized process) and asking here costs
/// nothing more.
bool driverLoadedHere() {
  const char *override = std::getenv("KILN_CUDA_DRIVER");
  const char *name = override && *override ? override : "libcuda.so.1";
  void *handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  if (handle)
    dlclose(handle);
  return handle != nullptr;
}

/// The answer as the child writes it: "ok" and the fields, one a line, or
/// "error" and the reason.
std::string serialize(const std::optional<rt::DeviceInfo> &device, const std::string &why) {
  if (!device)
    return "error\n" + why;
  std::ostringstream out;
  out << "ok\n"
      << device->computeMajor << " " << device->computeMinor << " " << device->multiprocessors
      << " " << device->totalMemory << " " << device->driverVersion << "\n"
      << device->name;
  return out.str();
}

std::optional<rt::DeviceInfo> parse(const std::string &text, std::string &why) {
  std::istringstream in(text);
  std::string status;
  std::getline(in, status);
  if (status == "error") {
    std::getline(in, why, '\0');
    return std::nullopt;
  }
  rt::DeviceInfo device;
  std::string numbers;
  if (status != "ok" || !std::getline(in, numbers)) {
    why = "the device query's child answered nothing";
    return std::nullopt;
  }
  std::istringstream fields(numbers);
  if (!(fields >> device.computeMajor >> device.computeMinor >> device.multiprocessors >>
        device.totalMemory >> device.driverVersion)) {
    why = "the device query's child answered '" + numbers + "'";
    return std::nullopt;
  }
  std::getline(in, device.name, '\0');
  return device;
}
} // namespace

std::optional<rt::DeviceInfo> driver::queryNativeDevice(std::string &why) {
  const char *where = std::getenv("KILN_NATIVE_QUERY");
  if ((where && std::string(where) == "here") || driverLoadedHere())
    return queryHere(why);
  int fds[2];
  if (pipe(fds) != 0)
    return queryHere(why);
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return queryHere(why);
  }
  if (child == 0) {
    close(fds[0]);
    std::string childWhy;
    const std::optional<rt::DeviceInfo> device = queryHere(childWhy);
    const std::string answer = serialize(device, childWhy);
    size_t written = 0;
    while (written < answer.size()) {
      const ssize_t n = write(fds[1], answer.data() + written, answer.size() - written);
      if (n <= 0 && errno != EINTR)
        break;
      if (n > 0)
        written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string answer;
  char buffer[512];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof(buffer));
    if (n > 0)
      answer.append(buffer, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (answer.empty()) {
    why = "the device query's child " +
          std::string(WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                          : "exited without an answer");
    return std::nullopt;
  }
  return parse(answer, why);
}
