//===- ApiExample.cpp - compile at load time and run, through kiln.h ------===//
//
//   kiln-api-example model.pt [NAME:SHAPE:DTYPE ...]
//
// What a C++ inference server does with kiln: compile a TorchScript archive
// in memory when it starts, load the artifact, and serve from sessions (here
// two threads, one session each, on one shared model). Host inputs go in,
// host outputs come back; both threads must agree bit for bit. Exits 77
// where there is no GPU after the compile succeeded, 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "kiln/kiln.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: kiln-api-example model.pt [NAME:SHAPE:DTYPE ...]\n");
    return 1;
  }
  try {
    kiln::CompileOptions options;
    options.inputs.assign(argv + 2, argv + argc);
    options.precision = "fp16";
    auto start = std::chrono::steady_clock::now();
    std::string artifact = kiln::compileTorchScript(argv[1], options);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto model = kiln::Model::fromMemory(artifact, argv[1]);
    std::printf("compiled %s at load time in %.2f s: %zu-byte artifact, %zu launches\n",
                argv[1], seconds, artifact.size(), model->launchCount());

    // Inputs: small integers, exact in every dtype.
    std::vector<std::vector<unsigned char>> inputs;
    std::mt19937 rng(7);
    for (const kiln::TensorInfo &info : model->inputs()) {
      inputs.emplace_back(info.bytes());
      for (size_t i = 0; i < inputs.back().size(); ++i)
        inputs.back()[i] = static_cast<unsigned char>(rng() % 3 == 0 ? 0x3c : 0);
    }
    auto serve = [&](std::vector<std::vector<unsigned char>> &outputs) {
      kiln::Session session(model);
      std::vector<kiln::Tensor> in, out;
      for (size_t i = 0; i < inputs.size(); ++i)
        in.push_back(kiln::Tensor::host(inputs[i].data(), model->inputs()[i].dtype,
                                        model->inputs()[i].shape));
      for (const kiln::TensorInfo &info : model->outputs()) {
        outputs.emplace_back(info.bytes());
        out.push_back(kiln::Tensor::host(outputs.back().data(), info.dtype, info.shape));
      }
      for (int i = 0; i < 10; ++i)
        session.run(in, out);
    };
    std::vector<std::vector<unsigned char>> first, second;
    std::string failure;
    std::thread other([&] {
      try {
        serve(second);
      } catch (const std::exception &e) {
        failure = e.what();
      }
    });
    try {
      serve(first);
    } catch (...) {
      other.join();
      throw;
    }
    other.join();
    if (!failure.empty())
      throw kiln::Error(failure);
    std::printf("ran on %s (%s): two sessions on two threads, outputs %s\n",
                model->deviceName().c_str(), model->loadedArch().c_str(),
                first == second ? "identical" : "DIFFER");
    return first == second ? 0 : 1;
  } catch (const kiln::NoDeviceError &e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-api-example: error: %s\n", e.what());
    return 1;
  }
}
