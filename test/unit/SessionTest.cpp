//===- SessionTest.cpp - the runtime's host side on the fake driver -------===//
//
// Runs kiln::Model and kiln::Session against test/fakecuda (host memory, no
// kernels executed) so CI without a GPU covers bindings, graph capture and
// replay, staging, the profiler, errors and threads. Built twice: plainly,
// and with ThreadSanitizer (kiln-session-tsan-tests).
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"
#include "kiln/runtime/Device.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <thread>

using namespace kiln;
using ::testing::HasSubstr;

namespace {

// Before anything loads a driver: this process gets the fake one.
const bool driverChosen = [] {
  setenv("KILN_CUDA_DRIVER", KILN_FAKE_CUDA_PATH, 1);
  return true;
}();

unsigned long long counter(const char *name) {
  void *library = dlopen(KILN_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  auto read = reinterpret_cast<unsigned long long (*)(const char *)>(
      dlsym(library, "kilnFakeCudaCounter"));
  return read ? read(name) : ~0ull;
}

std::string artifactPath() {
  const char *path = std::getenv("KILN_TEST_ARTIFACT");
  return path ? path : "";
}

/// Host buffers of the right sizes for every input and output.
struct HostIO {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<Tensor> in, out;
  explicit HostIO(const Model &model) {
    for (const TensorInfo &info : model.inputs()) {
      storage.emplace_back(info.bytes(), 1);
      in.push_back(Tensor::host(storage.back().data(), info.dtype, info.shape));
    }
    for (const TensorInfo &info : model.outputs()) {
      storage.emplace_back(info.bytes(), 0);
      out.push_back(Tensor::host(storage.back().data(), info.dtype, info.shape));
    }
  }
};

/// Device buffers of the right sizes for every input and output.
struct DeviceIO {
  std::vector<std::unique_ptr<rt::DeviceBuffer>> buffers;
  std::vector<Tensor> in, out;
  explicit DeviceIO(const Model &model) {
    for (const TensorInfo &info : model.inputs())
      in.push_back(add(info));
    for (const TensorInfo &info : model.outputs())
      out.push_back(add(info));
  }
  Tensor add(const TensorInfo &info) {
    buffers.push_back(std::make_unique<rt::DeviceBuffer>(info.bytes()));
    return Tensor::device(reinterpret_cast<void *>(buffers.back()->address()), info.dtype,
                          info.shape);
  }
};

class SessionTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(driverChosen);
    ASSERT_FALSE(artifactPath().empty()) << "KILN_TEST_ARTIFACT is not set";
    model = Model::load(artifactPath());
  }
  std::shared_ptr<Model> model;
};

TEST_F(SessionTest, CapturesAGraphOnceAndReplaysIt) {
  Session session(model);
  HostIO io(*model);
  unsigned long long captures = counter("captures"), replays = counter("graph-launches"),
                     launches = counter("launches");
  session.run(io.in, io.out);
  session.run(io.in, io.out);
  session.run(io.in, io.out);
  EXPECT_EQ(counter("captures"), captures + 1);
  EXPECT_EQ(counter("graph-launches"), replays + 3);
  EXPECT_EQ(counter("launches"), launches + 3 * model->launchCount());
  EXPECT_EQ(model->loadedArch(), "sm_90a");
  EXPECT_THAT(model->deviceName(), HasSubstr("fake"));
}

// Kernels may keep state in the arena past the planned buffers (stream-K's
// flags, format 8): each session's arena is zero when the session starts,
// whatever the allocator left there.
TEST_F(SessionTest, EachSessionsArenaStartsZeroed) {
  unsigned long long zeroed = counter("zeroed-bytes");
  Session first(model);
  EXPECT_GE(counter("zeroed-bytes") - zeroed, model->arenaBytes());
  zeroed = counter("zeroed-bytes");
  Session second(model);
  EXPECT_GE(counter("zeroed-bytes") - zeroed, model->arenaBytes());
}

// Each launch alone: one graph of its repetitions, replayed twice (warm-up,
// then timed), none of them programmatic; the session's own graph stays.
TEST_F(SessionTest, EachLaunchTimedAloneFromItsOwnGraph) {
  Session session(model);
  HostIO io(*model);
  EXPECT_THROW(session.timeEachLaunch(3), Error) << "nothing bound before the first run";
  session.run(io.in, io.out);
  EXPECT_THROW(session.timeEachLaunch(0), Error);
  unsigned long long captures = counter("captures"), launches = counter("launches"),
                     graphLaunches = counter("graph-launches"),
                     dependent = counter("dependent-launches");
  std::vector<LaunchTime> times = session.timeEachLaunch(3);
  ASSERT_EQ(times.size(), model->launchCount());
  for (size_t i = 0; i < times.size(); ++i) {
    EXPECT_EQ(times[i].launch, i);
    EXPECT_FALSE(times[i].kernel.empty());
    EXPECT_FALSE(times[i].kind.empty());
    EXPECT_GE(times[i].meanMs, 0.0);
  }
  EXPECT_EQ(counter("captures"), captures + model->launchCount());
  EXPECT_EQ(counter("graph-launches"), graphLaunches + 2 * model->launchCount());
  EXPECT_EQ(counter("launches"), launches + 2 * 3 * model->launchCount());
  EXPECT_EQ(counter("dependent-launches"), dependent);
  captures = counter("captures");
  session.run(io.in, io.out);
  EXPECT_EQ(counter("captures"), captures) << "the run's own graph is kept";
}

TEST_F(SessionTest, PlainLaunchesWithoutGraphs) {
  Session session(model, {/*cudaGraph=*/false, /*profile=*/false});
  HostIO io(*model);
  unsigned long long captures = counter("captures"), launches = counter("launches");
  session.run(io.in, io.out);
  session.run(io.in, io.out);
  EXPECT_EQ(counter("captures"), captures);
  EXPECT_EQ(counter("launches"), launches + 2 * model->launchCount());
}

TEST_F(SessionTest, DeviceTensorsAreUsedInPlaceAndRebindingRecaptures) {
  Session session(model);
  DeviceIO first(*model);
  unsigned long long captures = counter("captures"), updates = counter("updates");
  session.run(first.in, first.out);
  session.run(first.in, first.out);
  EXPECT_EQ(counter("captures"), captures + 1);
  DeviceIO second(*model);
  session.run(second.in, second.out);
  EXPECT_EQ(counter("captures"), captures + 2);
  EXPECT_EQ(counter("updates"), updates + 1) << "the instantiated graph is updated in place";
  EXPECT_GT(session.timeLaunches(2, true), -1.0f);
  EXPECT_GT(session.timeLaunches(2, false), -1.0f);
}

TEST_F(SessionTest, EnqueueOnTheCallersStreamReturnsWithoutWaiting) {
  // The caller's stream (in the device's primary context, as the CUDA
  // runtime would make it): the session runs on it and leaves it alive.
  rt::Context context(0);
  context.makeCurrent();
  auto callers = std::make_unique<rt::Stream>();
  {
    SessionOptions options;
    options.stream = callers->handle();
    Session session(model, options);
    EXPECT_EQ(session.stream(), callers->handle());
    DeviceIO io(*model);
    unsigned long long replays = counter("graph-launches");
    session.enqueue(io.in, io.out);
    session.enqueue(io.in, io.out);
    EXPECT_EQ(counter("graph-launches"), replays + 2);
    HostIO host(*model);
    try {
      session.enqueue(host.in, io.out);
      FAIL() << "host tensors were enqueued";
    } catch (const Error &e) {
      EXPECT_THAT(e.what(), HasSubstr("enqueue takes device tensors; input 0 is in host memory"));
    }
  }
  callers->synchronize(); // still the caller's, after the session is gone
}

TEST_F(SessionTest, EnqueueDoesNotProfile) {
  Session session(model, {/*cudaGraph=*/true, /*profile=*/true});
  HostIO io(*model);
  try {
    session.enqueue(io.in, io.out);
    FAIL() << "a profiled session enqueued";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("enqueue does not profile"));
  }
}

TEST_F(SessionTest, DevicesAreChosenAndAModelStaysOnItsFirst) {
  // The fake driver has one device.
  try {
    Session session(model, {true, false, /*device=*/1});
    FAIL() << "a session ran on a device that does not exist";
  } catch (const NoDeviceError &e) {
    EXPECT_THAT(e.what(), HasSubstr("no CUDA device 1"));
  }
  Session first(model, {true, false, /*device=*/0});
  try {
    Session second(model, {true, false, /*device=*/1});
    FAIL() << "a second session ran on another device";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("the model's weights are on CUDA device 0"));
  }
}

TEST_F(SessionTest, WrongInputsNameTheInputAndBothShapes) {
  Session session(model);
  HostIO io(*model);
  const TensorInfo &first = model->inputs()[0];
  try {
    session.run({}, io.out);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("takes " + std::to_string(model->inputs().size()) +
                                    " inputs (" + first.name));
  }
  std::vector<Tensor> wrongShape = io.in;
  wrongShape[0].shape.back() += 1;
  try {
    session.run(wrongShape, io.out);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("input '" + first.name + "': the model expects " +
                                    dtypeName(first.dtype) + " " + shapeText(first.shape) +
                                    ", got " + dtypeName(first.dtype) + " " +
                                    shapeText(wrongShape[0].shape)));
  }
  std::vector<Tensor> wrongType = io.in;
  wrongType[0].dtype = first.dtype == DType::F32 ? DType::F16 : DType::F32;
  EXPECT_THROW(session.run(wrongType, io.out), Error);
  std::vector<Tensor> notDevice = io.in;
  notDevice[0].memory = Memory::Device;
  try {
    session.run(notDevice, io.out);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("not within one device allocation"));
  }
  // A device buffer smaller than the tensor it claims to hold.
  rt::DeviceBuffer small(16);
  std::vector<Tensor> tooSmall = io.in;
  tooSmall[0].memory = Memory::Device;
  tooSmall[0].data = reinterpret_cast<void *>(small.address());
  try {
    session.run(tooSmall, io.out);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("are not within one device allocation"));
  }
  std::vector<Tensor> null = io.in;
  null[0].data = nullptr;
  EXPECT_THROW(session.run(null, io.out), Error);
  // After the failures the session still runs.
  session.run(io.in, io.out);
}

TEST_F(SessionTest, ProfilerTimesEveryKernelAndCopy) {
  Session session(model, {true, /*profile=*/true});
  HostIO io(*model);
  for (int i = 0; i < 3; ++i)
    session.run(io.in, io.out);
  std::vector<KernelProfile> rows = session.profile();
  ASSERT_FALSE(rows.empty());
  size_t kernelCalls = 0, copies = 0;
  for (const KernelProfile &row : rows) {
    EXPECT_FALSE(row.kind.empty()) << row.name;
    if (row.kind == "copy")
      copies += row.calls;
    else
      kernelCalls += row.calls;
    EXPECT_GE(row.totalMs, 0);
  }
  EXPECT_EQ(kernelCalls, 3 * model->launchCount());
  EXPECT_EQ(copies, 3 * (model->inputs().size() + model->outputs().size()));
  for (size_t i = 1; i < rows.size(); ++i)
    EXPECT_GE(rows[i - 1].totalMs, rows[i].totalMs) << "sorted by total time";
  EXPECT_THAT(session.profileTable(), HasSubstr("% run"));
  std::string trace = session.chromeTrace();
  EXPECT_THAT(trace, HasSubstr("\"traceEvents\""));
  EXPECT_THAT(trace, HasSubstr("\"ph\":\"X\""));
  EXPECT_EQ(session.trace().size(), 3 * (model->launchCount() + copies / 3));
  session.resetProfile();
  EXPECT_TRUE(session.profile().empty());
}

TEST_F(SessionTest, KernelsAfterTheFirstAreProgrammaticDependentsOnRequest) {
  HostIO io(*model);
  // Off by default (slower on the H200).
  unsigned long long dependents = counter("dependent-launches");
  Session byDefault(model);
  byDefault.run(io.in, io.out);
  EXPECT_EQ(counter("dependent-launches"), dependents);

  setenv("KILN_PDL", "1", 1);
  auto hinted = Model::load(artifactPath());
  Session graphed(hinted);
  graphed.run(io.in, io.out);
  EXPECT_EQ(counter("dependent-launches"), dependents + hinted->launchCount() - 1);
  dependents = counter("dependent-launches");
  Session plain(hinted, {/*cudaGraph=*/false, /*profile=*/false});
  plain.run(io.in, io.out);
  EXPECT_EQ(counter("dependent-launches"), dependents + hinted->launchCount() - 1);
  // Profiled kernels are timed one at a time; before sm_90 there is no
  // programmatic launch (the fake driver refuses it, as the real one).
  dependents = counter("dependent-launches");
  Session profiled(hinted, {true, /*profile=*/true});
  profiled.run(io.in, io.out);
  setenv("KILN_FAKE_CUDA_CC", "89", 1);
  auto ada = Model::load(artifactPath());
  Session onAda(ada);
  onAda.run(io.in, io.out);
  unsetenv("KILN_FAKE_CUDA_CC");
  unsetenv("KILN_PDL");
  EXPECT_EQ(counter("dependent-launches"), dependents);
}

TEST_F(SessionTest, OutOfMemoryNamesWhatAndHowMuch) {
  setenv("KILN_FAKE_CUDA_MEMORY", "16", 1);
  try {
    Session session(model);
    unsetenv("KILN_FAKE_CUDA_MEMORY");
    FAIL() << "no error";
  } catch (const OutOfMemoryError &e) {
    unsetenv("KILN_FAKE_CUDA_MEMORY");
    EXPECT_GT(e.requestedBytes(), 16u);
    EXPECT_THAT(e.what(), HasSubstr("out of device memory: "));
    EXPECT_THAT(e.what(), HasSubstr(" needs " + std::to_string(e.requestedBytes()) + " bytes"));
  }
}

TEST_F(SessionTest, ArchitecturesWithoutCodeFailAndPtxCoversNewerOnes) {
  setenv("KILN_FAKE_CUDA_CC", "75", 1);
  try {
    Session session(model);
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_THAT(e.what(), HasSubstr("has no code for"));
    EXPECT_THAT(e.what(), HasSubstr("sm_75"));
  }
  setenv("KILN_FAKE_CUDA_CC", "89", 1);
  auto ada = Model::load(artifactPath());
  Session onAda(ada);
  EXPECT_EQ(ada->loadedArch(), "sm_80");
  setenv("KILN_FAKE_CUDA_CC", "100", 1);
  auto blackwell = Model::load(artifactPath());
  Session onBlackwell(blackwell);
  EXPECT_EQ(blackwell->loadedArch(), "compute_80");
  unsetenv("KILN_FAKE_CUDA_CC");
}

TEST_F(SessionTest, ConcurrentSessionsShareOneModel) {
  constexpr int kThreads = 8, kRuns = 40;
  unsigned long long launches = counter("launches");
  std::vector<std::thread> threads;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      try {
        // Mixed modes: graphs, plain launches, profiling.
        Session session(model, {t % 3 != 1, t % 3 == 2});
        HostIO io(*model);
        for (int r = 0; r < kRuns; ++r)
          session.run(io.in, io.out);
        if (t % 3 == 2)
          session.profileTable();
      } catch (const std::exception &e) {
        failures[t] = e.what();
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &failure : failures)
    EXPECT_EQ(failure, "");
  EXPECT_EQ(counter("launches"), launches + kThreads * kRuns * model->launchCount());
}

TEST_F(SessionTest, ASessionMayMoveBetweenThreads) {
  auto session = std::make_unique<Session>(model);
  HostIO io(*model);
  std::string failure;
  std::thread other([&] {
    try {
      session->run(io.in, io.out);
    } catch (const std::exception &e) {
      failure = e.what();
    }
  });
  other.join();
  EXPECT_EQ(failure, "");
}

TEST_F(SessionTest, TheLastReferenceMayDropOnAnotherThread) {
  {
    Session session(model);
    HostIO io(*model);
    session.run(io.in, io.out);
  }
  unsigned long long refused = counter("contextless-releases");
  std::thread other([m = std::move(model)]() mutable { m.reset(); });
  other.join();
  EXPECT_FALSE(model);
  EXPECT_EQ(counter("contextless-releases"), refused)
      << "weights and modules are released in the model's context";
}

TEST(ModelTest, NullModelAndBadFilesFailBeforeCuda) {
  EXPECT_THROW(Session(nullptr), Error);
  EXPECT_THROW(Model::fromMemory("not an artifact", "junk"), Error);
  EXPECT_THROW(Model::load("/nonexistent/model.kiln"), Error);
}

} // namespace
