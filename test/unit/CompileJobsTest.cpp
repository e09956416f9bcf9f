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
