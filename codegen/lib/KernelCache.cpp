//===- KernelCache.cpp - the on-disk cache of compiled kernels ------------===//
//
// See KernelCache.h for the guarantees. Files are written with POSIX calls,
// not streams, so that every failure (a full disk, a file size limit) is
// seen where it happens and the temporary file removed on that path.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/KernelCache.h"
#include "kiln/runtime/ArtifactFormat.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln::codegen;
namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'K', 'C', '0', '1'};
constexpr size_t kHeaderBytes = 32;
constexpr const char *kEntrySuffix = ".kernel";
constexpr const char *kTemporaryMark = ".tmp.";

uint64_t checksum(const std::string &key, std::string_view cubin, std::string_view ptx) {
  // The key is hashed too: an entry copied under another key's name fails.
  uint64_t hash = kiln::artifact::fnv1a64(key, 14695981039346656037ull);
  hash = kiln::artifact::fnv1a64(std::string_view("\0", 1), hash);
  return kiln::artifact::fnv1a64(ptx, kiln::artifact::fnv1a64(cubin, hash));
}

void putU64(std::string &out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out += static_cast<char>((value >> (8 * i)) & 0xff);
}

uint64_t getU64(std::string_view in, size_t at) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i)
    value |= static_cast<uint64_t>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  return value;
}

/// A suffix no other writer picks: the process id keeps processes apart,
/// 64 random bits and a counter keep threads (and reused pids) apart.
std::string uniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 random{std::random_device{}()};
  char text[64];
  std::snprintf(text, sizeof(text), "%ld.%016llx%llx", static_cast<long>(::getpid()),
                static_cast<unsigned long long>(random()),
                static_cast<unsigned long long>(counter++));
  return text;
}

std::optional<std::string> readWhole(const fs::path &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof(buffer));
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (got == 0)
      break;
    data.append(buffer, static_cast<size_t>(got));
  }
  ::close(fd);
  return data;
}

bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t wrote = ::write(fd, data.data(), data.size());
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote <= 0)
      return false;
    data.remove_prefix(static_cast<size_t>(wrote));
  }
  return true;
}

} // namespace

std::optional<KernelCache> KernelCache::fromEnvironment() {
  if (std::getenv("KILN_NO_CACHE"))
    return std::nullopt;
  fs::path folder;
  if (const char *env = std::getenv("KILN_CACHE_DIR"))
    folder = env;
  else if (const char *xdg = std::getenv("XDG_CACHE_HOME"))
    folder = fs::path(xdg) / "kiln";
  else if (const char *home = std::getenv("HOME"))
    folder = fs::path(home) / ".cache" / "kiln";
  std::error_code ec;
  if (folder.empty() || (!fs::create_directories(folder, ec) && ec))
    return std::nullopt;
  KernelCache cache(folder);
  static std::once_flag cleaned;
  std::call_once(cleaned, [&] { cache.removeStaleTemporaries(); });
  return cache;
}

std::optional<KernelCache> KernelCache::library(const std::string &chosen) {
  fs::path folder;
  std::error_code ec;
  if (!chosen.empty()) {
    folder = chosen;
  } else if (const char *env = std::getenv("KILN_KERNEL_LIBRARY")) {
    folder = env;
  } else {
    fs::path binary = fs::read_symlink("/proc/self/exe", ec);
    if (ec)
      return std::nullopt;
    folder = binary.parent_path().parent_path() / "share" / "kiln" / "kernels";
  }
  if (folder.empty() || !fs::is_directory(folder, ec))
    return std::nullopt;
  return KernelCache(folder);
}

fs::path KernelCache::entryPath(const std::string &key) const {
  return folder_ / (key + kEntrySuffix);
}

std::optional<NvrtcOutput> KernelCache::lookup(const std::string &key) const {
  std::optional<std::string> data = readWhole(entryPath(key));
  if (!data || data->size() < kHeaderBytes ||
      std::string_view(*data).substr(0, 8) != std::string_view(kMagic, 8))
    return std::nullopt;
  uint64_t cubinBytes = getU64(*data, 8), ptxBytes = getU64(*data, 16);
  uint64_t body = data->size() - kHeaderBytes;
  if (cubinBytes > body || ptxBytes != body - cubinBytes)
    return std::nullopt;
  std::string_view cubin = std::string_view(*data).substr(kHeaderBytes, cubinBytes);
  std::string_view ptx = std::string_view(*data).substr(kHeaderBytes + cubinBytes);
  if (getU64(*data, 24) != checksum(key, cubin, ptx))
    return std::nullopt;
  return NvrtcOutput{std::string(cubin), std::string(ptx), "(from the kernel cache)"};
}

bool KernelCache::store(const std::string &key, const NvrtcOutput &output,
                        std::string &error) const {
  fs::path entry = entryPath(key);
  fs::path temporary = entry;
  temporary += kTemporaryMark + uniqueSuffix();
  std::string header(kMagic, 8);
  putU64(header, output.cubin.size());
  putU64(header, output.ptx.size());
  putU64(header, checksum(key, output.cubin, output.ptx));

  int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create '" + temporary.string() + "': " + std::strerror(errno);
    return false;
  }
  bool written = writeAll(fd, header) && writeAll(fd, output.cubin) && writeAll(fd, output.ptx);
  int writeError = errno;
  bool closed = ::close(fd) == 0;
  if (!written || !closed || ::rename(temporary.c_str(), entry.c_str()) != 0) {
    int cause = !written ? writeError : errno;
    ::unlink(temporary.c_str());
    error = "cannot write '" + entry.string() + "': " + std::strerror(cause);
    return false;
  }
  return true;
}

void KernelCache::removeStaleTemporaries() const {
  std::error_code ec;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    // NAME.kernel.tmp.PID.SUFFIX
    std::string name = it->path().filename().string();
    size_t mark = name.find(std::string(kEntrySuffix) + kTemporaryMark);
    if (mark == std::string::npos)
      continue;
    size_t pidAt = mark + std::strlen(kEntrySuffix) + std::strlen(kTemporaryMark);
    size_t dot = name.find('.', pidAt);
    std::string pidText = name.substr(pidAt, dot == std::string::npos ? dot : dot - pidAt);
    if (pidText.empty() || pidText.size() > 9 ||
        pidText.find_first_not_of("0123456789") != std::string::npos)
      continue;
    pid_t pid = static_cast<pid_t>(std::atol(pidText.c_str()));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) {
      std::error_code ignored;
      fs::remove(it->path(), ignored);
    }
  }
}
