//===- CompileJobs.cpp - NVRTC compiles in worker processes ---------------===//
//
// Protocol: before forking, the parent maps one shared page holding the next
// job's index. Each worker takes indices from it until none is left, runs
// the job, and writes one frame per job to its pipe:
//   u32 job, u8 ok, u8 origin (1: the cache, 2: the kernel library), f64 cpuSeconds,
//   then cubin, ptx, log and error, each a u64 length and the bytes.
// The parent reads every pipe as data arrives (a cubin is larger than a
// pipe's buffer), then reaps the workers. A job that no frame answered (its
// worker crashed or was stopped) runs again in this process.
//
// Fork safety: the workers call NVRTC, the kernel cache and the C++ library
// only. compileWithNvrtc serializes this process's NVRTC calls on one mutex,
// which is held across the forks, so no worker starts with NVRTC's state
// half-changed by another thread of this process.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/CompileJobs.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <future>
#include <mutex>
#include <new>
#include <thread>

#include <sched.h>

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln::codegen;

namespace {

double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

CompileJobResult runHere(size_t index,
                         const std::function<std::optional<NvrtcOutput>(size_t, std::string &)> &job) {
  CompileJobResult result;
  const double start = threadCpuSeconds();
  result.output = job(index, result.error);
  result.cpuSeconds = threadCpuSeconds() - start;
  return result;
}

template <typename T> void append(std::string &frame, T value) {
  frame.append(reinterpret_cast<const char *>(&value), sizeof(T));
}
void appendString(std::string &frame, const std::string &text) {
  append<uint64_t>(frame, text.size());
  frame += text;
}

bool writeAll(int fd, const std::string &bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

[[noreturn]] void workerMain(int fd, std::atomic<uint32_t> *next, size_t count,
                             const std::function<std::optional<NvrtcOutput>(size_t, std::string &)> &job) {
  for (uint32_t index; (index = next->fetch_add(1)) < count;) {
    CompileJobResult result = runHere(index, job);
    std::string frame;
    append<uint32_t>(frame, index);
    append<uint8_t>(frame, result.output ? 1 : 0);
    append<uint8_t>(frame, result.output ? (result.output->fromCache ? 1 : 0) |
                                               (result.output->fromLibrary ? 2 : 0)
                                         : 0);
    append<double>(frame, result.cpuSeconds);
    appendString(frame, result.output ? result.output->cubin : "");
    appendString(frame, result.output ? result.output->ptx : "");
    appendString(frame, result.output ? result.output->log : "");
    appendString(frame, result.error);
    if (!writeAll(fd, frame))
      ::_exit(1);
  }
  ::_exit(0);
}

/// Parses the complete frames at the front of `buffer` into `results`.
void takeFrames(std::string &buffer, std::vector<CompileJobResult> &results,
                std::vector<bool> &answered) {
  size_t at = 0;
  auto read = [&](auto &value) {
    if (buffer.size() - at < sizeof(value))
      return false;
    std::memcpy(&value, buffer.data() + at, sizeof(value));
    at += sizeof(value);
    return true;
  };
  auto readString = [&](std::string &text) {
    uint64_t size = 0;
    if (!read(size) || buffer.size() - at < size)
      return false;
    text.assign(buffer, at, size);
    at += size;
    return true;
  };
  while (true) {
    const size_t frameStart = at;
    uint32_t index = 0;
    uint8_t ok = 0, origin = 0;
    double seconds = 0;
    NvrtcOutput output;
    std::string error;
    if (!read(index) || !read(ok) || !read(origin) || !read(seconds) ||
        !readString(output.cubin) || !readString(output.ptx) || !readString(output.log) ||
        !readString(error)) {
      at = frameStart;
      break;
    }
    if (index >= results.size())
      continue;
    output.fromCache = (origin & 1) != 0;
    output.fromLibrary = (origin & 2) != 0;
    results[index].output = ok ? std::optional<NvrtcOutput>(std::move(output)) : std::nullopt;
    results[index].error = std::move(error);
    results[index].cpuSeconds = seconds;
    answered[index] = true;
  }
  buffer.erase(0, at);
}

} // namespace

unsigned kiln::codegen::usableCores(const std::string &cgroupRoot) {
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0)
    cores = static_cast<unsigned>(CPU_COUNT(&mask));
  // A quota of CPU time per period caps the cores at quota / period, rounded up.
  auto capped = [&](long long quota, long long period) {
    return static_cast<unsigned>(
        std::max(1LL, std::min<long long>(cores, (quota + period - 1) / period)));
  };
  // cgroup v2: /proc/self/cgroup is "0::/PATH"; PATH/cpu.max holds "max
  // PERIOD" or "QUOTA PERIOD" (microseconds of CPU per period).
  std::ifstream self("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(self, line))
    if (line.rfind("0::", 0) == 0)
      path = line.substr(3);
  for (const std::string &dir : {cgroupRoot + path, cgroupRoot}) {
    std::ifstream limit(dir + "/cpu.max");
    std::string quota;
    long long period = 0;
    if (!(limit >> quota >> period) || quota == "max" || period <= 0)
      continue;
    char *end = nullptr;
    long long microseconds = std::strtoll(quota.c_str(), &end, 10);
    if (end == quota.c_str() || *end != '\0' || microseconds <= 0)
      continue;
    return capped(microseconds, period);
  }
  // cgroup v1: the cpu controller's cfs quota (-1: none).
  std::ifstream quotaFile(cgroupRoot + "/cpu/cpu.cfs_quota_us");
  std::ifstream periodFile(cgroupRoot + "/cpu/cpu.cfs_period_us");
  long long quota = 0, period = 0;
  if ((quotaFile >> quota) && (periodFile >> period) && quota > 0 && period > 0)
    return capped(quota, period);
  return cores;
}

std::vector<CompileJobResult> kiln::codegen::runCompileJobs(
    size_t count, const std::function<std::optional<NvrtcOutput>(size_t, std::string &)> &job,
    unsigned workers, bool useProcesses) {
  std::vector<CompileJobResult> results(count);
  std::vector<bool> answered(count, false);
  if (workers == 0)
    workers = usableCores();
  workers = static_cast<unsigned>(std::min<size_t>(workers, count));

  if (useProcesses && workers >= 2) {
    void *page = ::mmap(nullptr, sizeof(std::atomic<uint32_t>), PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED) {
      auto *next = new (page) std::atomic<uint32_t>(0);
      struct Worker {
        pid_t pid;
        int fd;
        std::string buffer;
      };
      std::vector<Worker> running;
      {
        std::lock_guard<std::mutex> noCompileInFlight(nvrtcCompileMutex());
        for (unsigned w = 0; w < workers; ++w) {
          int fds[2];
          if (::pipe(fds) != 0)
            break;
          pid_t pid = ::fork();
          if (pid == 0) {
            ::close(fds[0]);
            for (const Worker &other : running)
              ::close(other.fd);
            // This process's copy of the mutex is held by no thread of it.
            nvrtcCompileMutex().unlock();
            workerMain(fds[1], next, count, job);
          }
          ::close(fds[1]);
          if (pid < 0) {
            ::close(fds[0]);
            break;
          }
          running.push_back({pid, fds[0], {}});
        }
      }
      // Read until every worker has closed its pipe. A worker silent for
      // ten minutes is stopped (a compile never takes that long); its
      // unanswered jobs run here.
      auto lastProgress = std::chrono::steady_clock::now();
      std::vector<pollfd> polls;
      std::vector<Worker *> polled; // polls[i] is polled[i]'s pipe
      while (true) {
        polls.clear();
        polled.clear();
        for (Worker &worker : running)
          if (worker.fd >= 0) {
            polls.push_back({worker.fd, POLLIN, 0});
            polled.push_back(&worker);
          }
        if (polls.empty())
          break;
        int ready = ::poll(polls.data(), polls.size(), 1000);
        if (ready < 0 && errno != EINTR)
          break;
        if (ready <= 0) {
          if (std::chrono::steady_clock::now() - lastProgress > std::chrono::minutes(10))
            break;
          continue;
        }
        for (size_t i = 0; i < polls.size(); ++i) {
          Worker &worker = *polled[i];
          if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
          char chunk[1 << 16];
          ssize_t n = ::read(worker.fd, chunk, sizeof(chunk));
          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0) {
            ::close(worker.fd);
            worker.fd = -1;
            continue;
          }
          lastProgress = std::chrono::steady_clock::now();
          worker.buffer.append(chunk, static_cast<size_t>(n));
          takeFrames(worker.buffer, results, answered);
        }
      }
      for (Worker &worker : running) {
        if (worker.fd >= 0) {
          ::kill(worker.pid, SIGKILL);
          ::close(worker.fd);
        }
        int status = 0;
        while (::waitpid(worker.pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
      next->~atomic();
      ::munmap(page, sizeof(std::atomic<uint32_t>));
    }
  }

  // What no worker answered: here, in threads.
  std::vector<std::pair<size_t, std::future<CompileJobResult>>> here;
  for (size_t i = 0; i < count; ++i)
    if (!answered[i])
      here.emplace_back(i, std::async(std::launch::async, [&, i] { return runHere(i, job); }));
  for (auto &[index, future] : here)
    results[index] = future.get();
  return results;
}
