//===- CompileJobsTest.cpp - compiles in worker processes -----------------===//
//
// runCompileJobs with stand-in jobs (no NVRTC): results come back in job
// order whatever worker ran them, failures keep their message, and a job
// whose worker dies runs again in this process.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/CompileJobs.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace kiln::codegen;

namespace {

std::optional<NvrtcOutput> echo(size_t index, std::string &error) {
  if (index % 7 == 3) {
    error = "job " + std::to_string(index) + " failed";
    return std::nullopt;
  }
  NvrtcOutput out;
  // Larger than a pipe's buffer: the parent must read while workers write.
  out.cubin = std::string(100000 + index, static_cast<char>('a' + index % 26));
  out.ptx = "ptx " + std::to_string(index);
  out.log = "log " + std::to_string(index);
  out.fromCache = index % 2 == 0;
  return out;
}

void expectEchoed(const std::vector<CompileJobResult> &results) {
  for (size_t i = 0; i < results.size(); ++i) {
    if (i % 7 == 3) {
      EXPECT_FALSE(results[i].output) << i;
      EXPECT_EQ(results[i].error, "job " + std::to_string(i) + " failed");
      continue;
    }
    ASSERT_TRUE(results[i].output) << i << ": " << results[i].error;
    EXPECT_EQ(results[i].output->cubin.size(), 100000 + i);
    EXPECT_EQ(results[i].output->cubin[0], static_cast<char>('a' + i % 26));
    EXPECT_EQ(results[i].output->ptx, "ptx " + std::to_string(i));
    EXPECT_EQ(results[i].output->log, "log " + std::to_string(i));
    EXPECT_EQ(results[i].output->fromCache, i % 2 == 0);
  }
}

} // namespace

TEST(CompileJobs, ProcessesReturnEveryResultInOrder) {
  expectEchoed(runCompileJobs(40, echo, /*workers=*/4));
}

TEST(CompileJobs, ThreadsGiveTheSameResults) {
  expectEchoed(runCompileJobs(40, echo, /*workers=*/4, /*useProcesses=*/false));
}

TEST(CompileJobs, AJobWhoseWorkerDiesRunsAgainHere) {
  const pid_t parent = ::getpid();
  auto dies = [&](size_t index, std::string &error) {
    if (index == 5 && ::getpid() != parent)
      std::abort(); // only in a worker
    return echo(index, error);
  };
  expectEchoed(runCompileJobs(12, dies, /*workers=*/3));
}

TEST(CompileJobs, NoJobsIsNoWork) { EXPECT_TRUE(runCompileJobs(0, echo).empty()); }

namespace {

unsigned affinityCores() {
  cpu_set_t mask;
  EXPECT_EQ(::sched_getaffinity(0, sizeof(mask), &mask), 0);
  return static_cast<unsigned>(CPU_COUNT(&mask));
}

/// Fake cgroup folders under one temporary folder, removed after the test
/// whatever its outcome.
class CompileJobsCores : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("kiln-cgroup-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
    std::filesystem::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }

  /// A cgroup folder holding `cpuMax` as its cpu.max.
  std::string fakeCgroup(const std::string &cpuMax) {
    auto dir = root_ / std::to_string(made_++);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "cpu.max") << cpuMax << "\n";
    return dir.string();
  }

private:
  std::filesystem::path root_;
  unsigned made_ = 0;
};

} // namespace

TEST_F(CompileJobsCores, UsableCoresAreTheAffinityMasks) {
  cpu_set_t before;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(before), &before), 0);
  EXPECT_EQ(usableCores(fakeCgroup("max 100000")), affinityCores());
  // One CPU allowed: one worker, whatever the host has.
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &before)) {
      CPU_SET(cpu, &one);
      break;
    }
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
  EXPECT_EQ(usableCores(fakeCgroup("max 100000")), 1u);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(before), &before), 0);
}

TEST_F(CompileJobsCores, ACgroupQuotaLowersTheCores) {
  const unsigned mask = affinityCores();
  // 1.5 CPUs of quota: two workers (rounded up), never more than the mask.
  EXPECT_EQ(usableCores(fakeCgroup("150000 100000")), std::min(mask, 2u));
  EXPECT_EQ(usableCores(fakeCgroup("50000 100000")), 1u);
  // Unreadable or malformed limits leave the mask's count.
  EXPECT_EQ(usableCores(fakeCgroup("lots 100000")), mask);
  EXPECT_EQ(usableCores(fakeCgroup("100000 0")), mask);
  EXPECT_EQ(usableCores("/nonexistent/kiln-cgroup"), mask);
}

TEST_F(CompileJobsCores, ACgroupV1QuotaLowersTheCores) {
  const unsigned mask = affinityCores();
  auto root = std::filesystem::path(fakeCgroup("")) / "v1";
  std::filesystem::create_directories(root / "cpu");
  std::ofstream(root / "cpu" / "cpu.cfs_period_us") << "100000\n";
  std::ofstream(root / "cpu" / "cpu.cfs_quota_us") << "100000\n";
  EXPECT_EQ(usableCores(root.string()), 1u);
  std::ofstream(root / "cpu" / "cpu.cfs_quota_us") << "-1\n";
  EXPECT_EQ(usableCores(root.string()), mask);
}
