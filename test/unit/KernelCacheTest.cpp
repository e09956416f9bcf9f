//===- KernelCacheTest.cpp - the kernel cache under corruption and races --===//
//
// The cache folder is shared by concurrent compiles, any of which may be
// killed: entries must be whole or absent, verified on every read, replaced
// when bad, and no failure may leave a temporary file behind.
//
//===----------------------------------------------------------------------===//

#include "kiln/codegen/KernelCache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace kiln::codegen;
namespace fs = std::filesystem;

namespace {

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    folder = fs::temp_directory_path() /
             ("kiln-cache-test-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder);
    fs::create_directories(folder);
  }
  void TearDown() override { fs::remove_all(folder); }

  std::vector<std::string> files() const {
    std::vector<std::string> names;
    for (const auto &entry : fs::directory_iterator(folder))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string contents(const fs::path &path) const {
    std::ifstream file(path, std::ios::binary);
    std::stringstream buffer;
    buffer << file.rdbuf();
    return buffer.str();
  }
  void overwrite(const fs::path &path, const std::string &data) const {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
  }

  fs::path folder;
};

NvrtcOutput kernel(char fill, size_t cubinBytes = 300) {
  return NvrtcOutput{"\x7f" "ELF" + std::string(cubinBytes, fill),
                     ".version 9.0\n// " + std::string(40, fill), ""};
}

bool same(const std::optional<NvrtcOutput> &a, const NvrtcOutput &b) {
  return a && a->cubin == b.cubin && a->ptx == b.ptx;
}

} // namespace

TEST_F(KernelCacheTest, OneFilePerEntryRoundTrips) {
  KernelCache cache(folder);
  std::string error;
  EXPECT_FALSE(cache.lookup("k-sm_90a"));
  ASSERT_TRUE(cache.store("k-sm_90a", kernel('a'), error)) << error;
  EXPECT_TRUE(same(cache.lookup("k-sm_90a"), kernel('a')));
  EXPECT_EQ(files(), std::vector<std::string>{"k-sm_90a.kernel"});
  EXPECT_EQ(cache.lookup("k-sm_90a")->log, "(from the kernel cache)");
}

TEST_F(KernelCacheTest, BadEntriesAreNeverTrustedAndGetReplaced) {
  KernelCache cache(folder);
  std::string error;
  ASSERT_TRUE(cache.store("k", kernel('a'), error)) << error;
  fs::path entry = cache.entryPath("k");
  const std::string good = contents(entry);

  std::string flipped = good;
  flipped[100] ^= 1; // inside the cubin
  overwrite(entry, flipped);
  EXPECT_FALSE(cache.lookup("k")) << "a flipped cubin byte";

  overwrite(entry, good.substr(0, good.size() - 7));
  EXPECT_FALSE(cache.lookup("k")) << "cut short";
  overwrite(entry, good + "x");
  EXPECT_FALSE(cache.lookup("k")) << "a trailing byte";
  overwrite(entry, good.substr(0, 20));
  EXPECT_FALSE(cache.lookup("k")) << "half a header";
  overwrite(entry, "");
  EXPECT_FALSE(cache.lookup("k")) << "empty";
  std::string sizes = good;
  sizes[8] = '\xff'; // a cubin size past the file
  overwrite(entry, sizes);
  EXPECT_FALSE(cache.lookup("k")) << "forged sizes";
  overwrite(entry, "\x7f" "ELF an older cache's bare cubin");
  EXPECT_FALSE(cache.lookup("k")) << "foreign";

  // A whole entry under another key's name.
  overwrite(cache.entryPath("other"), good);
  EXPECT_FALSE(cache.lookup("other"));

  // Recompiled and stored again, the entry is replaced in place.
  ASSERT_TRUE(cache.store("k", kernel('b'), error)) << error;
  EXPECT_TRUE(same(cache.lookup("k"), kernel('b')));
}

TEST_F(KernelCacheTest, AFailedWriteLeavesNoFile) {
  KernelCache cache(folder);
  // A file size limit makes write() fail halfway (EFBIG once SIGXFSZ is
  // ignored), like a full disk.
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 200;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  bool stored = cache.store("k", kernel('a', 5000), error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous);
  EXPECT_FALSE(stored);
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  EXPECT_EQ(files(), std::vector<std::string>{});
}

TEST_F(KernelCacheTest, ConcurrentWritersAndReadersSeeWholeEntries) {
  // Threads of one process (one pid: the random suffix keeps their
  // temporary files apart) and processes (distinct pids) at once.
  constexpr int kRounds = 200;
  auto hammer = [&](int seed) {
    KernelCache cache(folder);
    int bad = 0;
    for (int i = 0; i < kRounds; ++i) {
      NvrtcOutput mine = kernel(static_cast<char>('a' + (seed + i) % 8), 2000 + (i % 3) * 500);
      std::string error;
      if (!cache.store("shared", mine, error))
        ++bad;
      auto seen = cache.lookup("shared");
      bool whole = false;
      for (int f = 0; f < 8 && !whole; ++f)
        for (size_t n : {2000, 2500, 3000})
          whole = whole || same(seen, kernel(static_cast<char>('a' + f), n));
      if (!whole)
        ++bad;
    }
    return bad;
  };
  std::vector<pid_t> children;
  for (int p = 0; p < 3; ++p) {
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0)
      ::_exit(hammer(100 + p) == 0 ? 0 : 1);
    children.push_back(child);
  }
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { bad += hammer(t); });
  for (std::thread &thread : threads)
    thread.join();
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child saw a torn entry";
  }
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(files(), std::vector<std::string>{"shared.kernel"});
}

TEST_F(KernelCacheTest, StaleTemporariesOfDeadProcessesAreRemoved) {
  pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0)
    ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  std::string stale = "k.kernel.tmp." + std::to_string(dead) + ".0123abcd0";
  std::string live = "k.kernel.tmp." + std::to_string(::getpid()) + ".0123abcd0";
  overwrite(folder / stale, "half");
  overwrite(folder / live, "half");
  overwrite(folder / "unrelated.tmp.1", "kept");
  KernelCache(folder).removeStaleTemporaries();
  EXPECT_EQ(files(), (std::vector<std::string>{live, "unrelated.tmp.1"}));
}
