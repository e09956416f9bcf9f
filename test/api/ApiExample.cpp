//===- ApiExample.cpp - compile at load time and run, through kiln.h ------===//
//
//   kiln-api-example model.pt [NAME:SHAPE:DTYPE ...] [--io DIR]
//                    [--runtime-sizes] [--kernel-library DIR]
//
// What a C++ inference server does with kiln: compile a TorchScript archive
// in memory when it starts, load the artifact, and serve from sessions (here
// two threads, one session each, on one shared model). Host inputs go in,
// host outputs come back; both threads must agree bit for bit. With --io,
// the inputs and the outputs are written to DIR as raw little-endian
// arrays (in.NAME.bin, out.NAME.bin, described by signature.txt), so that
// test/api/check_example.py can compare the outputs with LibTorch's. Exits
// 77 where there is no GPU after the compile succeeded, 1 on any error.
//
//===----------------------------------------------------------------------===//

#include "kiln/compile.h"
#include "kiln/kiln.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>

namespace {
/// fp32 to IEEE half, round to nearest even; the inputs are in [-1, 1), so
/// neither overflow nor NaN arises.
uint16_t toHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t sign = (bits >> 16) & 0x8000u, exponent = (bits >> 23) & 0xff, mantissa = bits & 0x7fffffu;
  if (exponent < 103)
    return static_cast<uint16_t>(sign);
  if (exponent < 113) { // a half subnormal
    mantissa |= 0x800000u;
    uint32_t shift = 126 - exponent, half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    half += rest > midpoint || (rest == midpoint && (half & 1));
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = ((exponent - 112) << 10) | (mantissa >> 13), rest = mantissa & 0x1fffu;
  half += rest > 0x1000u || (rest == 0x1000u && (half & 1));
  return static_cast<uint16_t>(sign | half);
}

/// Random values in the input's dtype: uniform in [-1, 1) for floating
/// point, 0..3 for integers (valid indices and masks of the test models).
std::vector<unsigned char> randomInput(const kiln::TensorInfo &info, std::mt19937 &rng) {
  std::vector<unsigned char> bytes(info.bytes());
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < info.elements(); ++i) {
    float value = uniform(rng);
    unsigned char *at = bytes.data() + i * kiln::dtypeBytes(info.dtype);
    switch (info.dtype) {
    case kiln::DType::F32:
      std::memcpy(at, &value, 4);
      break;
    case kiln::DType::F16: {
      uint16_t half = toHalf(value);
      std::memcpy(at, &half, 2);
      break;
    }
    case kiln::DType::BF16: {
      uint32_t bits;
      std::memcpy(&bits, &value, 4);
      uint16_t upper = static_cast<uint16_t>(bits >> 16);
      std::memcpy(at, &upper, 2);
      break;
    }
    case kiln::DType::I64: {
      int64_t v = rng() % 4;
      std::memcpy(at, &v, 8);
      break;
    }
    case kiln::DType::I32: {
      int32_t v = static_cast<int32_t>(rng() % 4);
      std::memcpy(at, &v, 4);
      break;
    }
    case kiln::DType::Bool:
      *at = static_cast<unsigned char>(rng() % 2);
      break;
    }
  }
  return bytes;
}

void writeArray(const std::string &dir, const std::string &role, const kiln::TensorInfo &info,
                const std::vector<unsigned char> &bytes, std::ofstream &signature) {
  if (info.name.find_first_of("/\\") != std::string::npos || info.name.empty() ||
      info.name[0] == '.')
    throw kiln::Error("tensor name '" + info.name + "' cannot be a file name");
  std::string path = dir + "/" + role + "." + info.name + ".bin";
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char *>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  if (!file)
    throw kiln::Error("cannot write " + path);
  signature << role << " " << info.name << " " << kiln::dtypeName(info.dtype);
  for (int64_t d : info.shape)
    signature << " " << d;
  signature << "\n";
}
} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string ioDir;
  kiln::CompileOptions options;
  for (size_t i = 0; i < args.size();) {
    if (args[i] == "--runtime-sizes") {
      options.runtimeSizes = true;
      args.erase(args.begin() + static_cast<long>(i));
      continue;
    }
    if (args[i] != "--io" && args[i] != "--kernel-library" && args[i] != "--kernel-tuning") {
      ++i;
      continue;
    }
    if (i + 1 == args.size()) {
      std::fprintf(stderr, "kiln-api-example: %s needs a %s\n", args[i].c_str(),
                   args[i] == "--kernel-tuning" ? "file" : "folder");
      return 1;
    }
    (args[i] == "--io"               ? ioDir
     : args[i] == "--kernel-tuning" ? options.kernelTuning
                                    : options.kernelLibrary) = args[i + 1];
    args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
  }
  if (args.empty()) {
    std::fprintf(stderr, "usage: kiln-api-example model.pt [NAME:SHAPE:DTYPE ...] [--io DIR] "
                         "[--runtime-sizes] [--kernel-library DIR] [--kernel-tuning FILE]\n");
    return 1;
  }
  try {
    options.inputs.assign(args.begin() + 1, args.end());
    options.precision = "fp16";
    auto start = std::chrono::steady_clock::now();
    std::string artifact = kiln::compileModel(args[0], options);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto model = kiln::Model::fromMemory(artifact, args[0]);
    std::printf("compiled %s at load time in %.2f s: %zu-byte artifact, %zu launches\n",
                args[0].c_str(), seconds, artifact.size(), model->launchCount());

    std::vector<std::vector<unsigned char>> inputs;
    std::mt19937 rng(7);
    for (const kiln::TensorInfo &info : model->inputs())
      inputs.push_back(randomInput(info, rng));
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
    if (!ioDir.empty()) {
      std::ofstream signature(ioDir + "/signature.txt");
      for (size_t i = 0; i < inputs.size(); ++i)
        writeArray(ioDir, "in", model->inputs()[i], inputs[i], signature);
      for (size_t i = 0; i < first.size(); ++i)
        writeArray(ioDir, "out", model->outputs()[i], first[i], signature);
      if (!signature)
        throw kiln::Error("cannot write " + ioDir + "/signature.txt");
      std::printf("inputs and outputs written to %s\n", ioDir.c_str());
    }
    return first == second ? 0 : 1;
  } catch (const kiln::NoDeviceError &e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-api-example: error: %s\n", e.what());
    return 1;
  }
}
