//===- NvrtcTest.cpp - the NVRTC driver, which needs no GPU ---------------===//

#include "kiln/codegen/Nvrtc.h"

#include <gtest/gtest.h>

using namespace kiln::codegen;

namespace {
constexpr const char *kScale = R"(
extern "C" __global__ void kiln_scale(float *x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
)";

// wgmma exists only on the arch-specific Hopper target.
constexpr const char *kWgmmaFence = R"(
extern "C" __global__ void kiln_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
)";

// CCCL's cuda::ptx must be reachable (CUDA 13 keeps it in include/cccl).
constexpr const char *kCcclPtx = R"(
#include <cuda/ptx>
extern "C" __global__ void kiln_proxy_fence() {
  cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
}
)";
} // namespace

TEST(Nvrtc, CompilesCubinAndPtxForEachArch) {
  for (const char *arch : {"sm_80", "sm_89", "sm_90a"}) {
    NvrtcOptions options;
    options.arch = arch;
    std::string error;
    auto out = compileWithNvrtc(kScale, "kiln_scale", options, error);
    ASSERT_TRUE(out.has_value()) << error;
    ASSERT_GE(out->cubin.size(), 4u);
    EXPECT_EQ(out->cubin.substr(0, 4), "\x7f"
                                       "ELF")
        << arch;
    EXPECT_NE(out->ptx.find(".entry kiln_scale"), std::string::npos);
    EXPECT_NE(out->ptx.find(std::string(".target ") + arch), std::string::npos)
        << out->ptx.substr(0, 400);
  }
}

TEST(Nvrtc, ComputeTargetGivesPtxOnly) {
  NvrtcOptions options;
  options.arch = "compute_90";
  std::string error;
  auto out = compileWithNvrtc(kScale, "kiln_scale", options, error);
  ASSERT_TRUE(out.has_value()) << error;
  EXPECT_TRUE(out->cubin.empty());
  EXPECT_FALSE(out->ptx.empty());
}

TEST(Nvrtc, HopperOnlyInstructionsNeedSm90a) {
  std::string error;
  NvrtcOptions hopper;
  hopper.arch = "sm_90a";
  EXPECT_TRUE(compileWithNvrtc(kWgmmaFence, "kiln_fence", hopper, error))
      << error;
  NvrtcOptions ampere;
  ampere.arch = "sm_80";
  EXPECT_FALSE(compileWithNvrtc(kWgmmaFence, "kiln_fence", ampere, error));
  EXPECT_NE(error.find("sm_80"), std::string::npos) << error;
}

TEST(Nvrtc, CcclHeadersAreOnTheIncludePath) {
  NvrtcOptions options;
  options.arch = "sm_90a";
  std::string error;
  EXPECT_TRUE(compileWithNvrtc(kCcclPtx, "kiln_proxy_fence", options, error))
      << error;
}

TEST(Nvrtc, FailureReportsLogAndNumberedSource) {
  const char *broken = "extern \"C\" __global__ void k(float *x) {\n"
                       "  x[0] = undefined_name;\n"
                       "}\n";
  NvrtcOptions options;
  std::string error;
  EXPECT_FALSE(compileWithNvrtc(broken, "kiln_broken", options, error));
  EXPECT_NE(error.find("NVRTC could not compile 'kiln_broken' for sm_90a"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("undefined_name"), std::string::npos) << error;
  EXPECT_NE(error.find("    2 |   x[0] = undefined_name;"), std::string::npos)
      << error;
}

TEST(Nvrtc, ReportsItsVersion) {
  std::string version = nvrtcVersion();
  EXPECT_NE(version.find('.'), std::string::npos);
  EXPECT_NE(version, "0.0");
}

TEST(Nvrtc, ChecksArchitecturesUpFront) {
  std::string error;
  EXPECT_TRUE(checkArch("sm_80", error)) << error;
  EXPECT_TRUE(checkArch("sm_90a", error)) << error;
  for (const char *bad : {"sm90", "sm_9", "sm_80a", "compute_90", "sm_999", "", "sm_090"}) {
    error.clear();
    EXPECT_FALSE(checkArch(bad, error)) << bad;
    EXPECT_NE(error.find(std::string("unknown GPU architecture '") + bad + "'"),
              std::string::npos)
        << error;
    EXPECT_NE(error.find("accepts sm_"), std::string::npos) << error;
    EXPECT_NE(error.find("sm_90a"), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
}

// ptxas' report decides whether a kernel is kept. A rejection is one line
// naming the cause, then the report's lines that say it; NVRTC's own
// warnings about the source and the other lines stay out of it.
TEST(Nvrtc, PtxasRejectionNamesTheCause) {
  const std::string clean =
      "kiln_k.cu(24): warning #177-D: variable \"idx\" was declared but never referenced\n"
      "ptxas info    : Compiling entry function 'kiln_C7514AB' for 'sm_90a'\n"
      "ptxas info    : Function properties for kiln_C7514AB\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 16 barriers, 80 bytes smem\n";
  // A kernel name may contain "C75": only the parenthesized code counts.
  EXPECT_EQ(ptxasRejection("kiln_C7514AB", "sm_90a", clean), "");

  const std::string spilling =
      "kiln_k.cu(24): warning #177-D: variable \"idx\" was declared but never referenced\n"
      "ptxas info    : Function properties for kiln_k\n"
      "    24 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads\n"
      "ptxas info    : Used 168 registers\n";
  EXPECT_EQ(ptxasRejection("kiln_k", "sm_90a", spilling),
            "kernel 'kiln_k' for sm_90a uses 24 bytes of stack and spills 24 bytes: rejected "
            "(it would run from local memory)\n"
            "  24 bytes stack frame, 24 bytes spill stores, 24 bytes spill loads");

  const std::string serialized =
      "kiln_k.cu(24): warning #177-D: variable \"idx\" was declared but never referenced\n"
      "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are "
      "serialized due to non wgmma instructions reading accumulator registers\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const std::string why = ptxasRejection("kiln_k", "sm_90a", serialized);
  EXPECT_EQ(why.find("kernel 'kiln_k' for sm_90a has a ptxas performance warning: rejected\n"
                     "  ptxas info    : (C7514) Potential Performance Loss"),
            0u)
      << why;
  EXPECT_EQ(why.find("#177-D"), std::string::npos) << why;
  EXPECT_EQ(why.find("bytes stack frame"), std::string::npos) << why;

  // What the compiler retries with a safer configuration: both kinds of
  // rejection, also behind the location the artifact writer puts first; not
  // a kernel that failed to compile, an unknown architecture, or nothing.
  EXPECT_TRUE(isPtxasRejection(why));
  EXPECT_TRUE(isPtxasRejection(ptxasRejection("kiln_k", "sm_90a", spilling)));
  EXPECT_TRUE(isPtxasRejection("the kernel of the ops at model.py:47: " +
                               ptxasRejection("kiln_k", "sm_90a", spilling)));
  EXPECT_FALSE(isPtxasRejection("NVRTC could not compile 'kiln_k' for sm_90a: "
                                "NVRTC_ERROR_COMPILATION\nkiln_k.cu(3): error: rejected"));
  EXPECT_FALSE(isPtxasRejection("unknown GPU architecture 'sm_91'"));
  EXPECT_FALSE(isPtxasRejection(""));
}
