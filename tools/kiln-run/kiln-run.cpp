//===- kiln-run.cpp - run a .kiln artifact, check it, time it -------------===//
//
//   kiln-run model.kiln [--input NAME=FILE.npy ...] [--check REF.npy ...]
//            [--tolerance T] [--save-inputs DIR] [--save-outputs DIR]
//            [--bench N] [--seed S]
//
// Inputs not given as .npy are drawn at random (normal for floats). --check
// compares each output, in order, with a reference by relative L2 error
// (default tolerance: 1e-5 for fp32 outputs, 1e-2 for fp16/bf16). --bench
// times N runs after warm-up: wall time per run including copies, and the
// device time of the kernels alone. Depends on the runtime only.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "kiln/runtime/Model.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>

using namespace kiln;
using artifact::DType;

namespace {
[[noreturn]] void usage(const std::string &why) {
  std::fprintf(stderr,
               "kiln-run: error: %s\nusage: kiln-run model.kiln [--input NAME=FILE.npy]... "
               "[--check REF.npy]... [--tolerance T] [--save-inputs DIR] [--save-outputs DIR] [--bench N] "
               "[--seed S]\n",
               why.c_str());
  std::exit(1);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) // inf or nan
    return sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0);
  if (absx >= 0x477ff000u) // rounds to inf
    return sign | 0x7c00u;
  if (absx < 0x38800000u) { // subnormal half
    float magnitude;
    std::memcpy(&magnitude, &absx, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(magnitude * 16777216.0f));
  }
  uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

float bf16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

/// The tensor's elements as doubles.
std::vector<double> toDouble(const std::string &data, DType type) {
  size_t n = data.size() / artifact::dtypeBytes(type);
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    const char *p = data.data() + i * artifact::dtypeBytes(type);
    switch (type) {
    case DType::F32: { float v; std::memcpy(&v, p, 4); out[i] = v; break; }
    case DType::F16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = halfToFloat(v); break; }
    case DType::BF16: { uint16_t v; std::memcpy(&v, p, 2); out[i] = bf16ToFloat(v); break; }
    case DType::I64: { int64_t v; std::memcpy(&v, p, 8); out[i] = double(v); break; }
    case DType::I32: { int32_t v; std::memcpy(&v, p, 4); out[i] = v; break; }
    case DType::Bool: out[i] = *p ? 1 : 0; break;
    }
  }
  return out;
}

std::string fromDouble(const std::vector<double> &values, DType type) {
  std::string out(values.size() * artifact::dtypeBytes(type), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    char *p = out.data() + i * artifact::dtypeBytes(type);
    switch (type) {
    case DType::F32: { float v = float(values[i]); std::memcpy(p, &v, 4); break; }
    case DType::F16: { uint16_t v = floatToHalf(float(values[i])); std::memcpy(p, &v, 2); break; }
    case DType::BF16: { uint16_t v = floatToBf16(float(values[i])); std::memcpy(p, &v, 2); break; }
    case DType::I64: { int64_t v = int64_t(values[i]); std::memcpy(p, &v, 8); break; }
    case DType::I32: { int32_t v = int32_t(values[i]); std::memcpy(p, &v, 4); break; }
    case DType::Bool: *p = values[i] != 0; break;
    }
  }
  return out;
}

DType npyType(const std::string &descr) {
  if (descr == "<f4") return DType::F32;
  if (descr == "<f2") return DType::F16;
  if (descr == "<i8") return DType::I64;
  if (descr == "<i4") return DType::I32;
  if (descr == "|b1") return DType::Bool;
  throw std::runtime_error("unsupported .npy dtype " + descr);
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

int run(int argc, char **argv) {
  std::string modelPath, saveDir, saveInputsDir;
  std::map<std::string, std::string> inputFiles;
  std::vector<std::string> checks;
  double tolerance = -1;
  int bench = 0;
  unsigned seed = 1234;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos)
        usage("--input takes NAME=FILE.npy, got '" + v + "'");
      inputFiles[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (arg == "--check") {
      checks.push_back(value());
    } else if (arg == "--tolerance") {
      tolerance = std::stod(value());
    } else if (arg == "--save-outputs") {
      saveDir = value();
    } else if (arg == "--save-inputs") {
      saveInputsDir = value();
    } else if (arg == "--bench") {
      bench = std::stoi(value());
    } else if (arg == "--seed") {
      seed = std::stoul(value());
    } else if (!arg.empty() && arg[0] == '-') {
      usage("unknown option " + arg);
    } else if (modelPath.empty()) {
      modelPath = arg;
    } else {
      usage("more than one model given");
    }
  }
  if (modelPath.empty())
    usage("no model given");

  auto model = rt::Model::load(modelPath);
  const rt::Artifact &a = model->artifact();
  if (!checks.empty() && checks.size() != a.outputs.size())
    usage("the model has " + std::to_string(a.outputs.size()) + " outputs but " +
          std::to_string(checks.size()) + " --check references were given");
  for (const auto &[name, file] : inputFiles)
    if (std::none_of(a.inputs.begin(), a.inputs.end(),
                     [&](const rt::TensorSpec &s) { return s.name == name; }))
      usage("the model has no input named '" + name + "'");

  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<std::string> inputData;
  for (const rt::TensorSpec &spec : a.inputs) {
    auto file = inputFiles.find(spec.name);
    if (file != inputFiles.end()) {
      npy::Array array = npy::read(file->second);
      if (array.shape != spec.shape)
        throw rt::Error("input '" + spec.name + "' from " + file->second + " has shape " +
                        shapeText(array.shape) + "; the model expects " +
                        shapeText(spec.shape));
      inputData.push_back(fromDouble(toDouble(array.data, npyType(array.descr)), spec.dtype));
    } else {
      std::vector<double> values(spec.elements());
      for (double &v : values)
        v = spec.dtype == DType::F32 || spec.dtype == DType::F16 || spec.dtype == DType::BF16
                ? normal(rng)
                : double(rng() % 8);
      inputData.push_back(fromDouble(values, spec.dtype));
    }
    if (!saveInputsDir.empty())
      npy::write(saveInputsDir + "/" + spec.name + ".npy",
                 {"<f4", spec.shape,
                  fromDouble(toDouble(inputData.back(), spec.dtype), DType::F32)});
  }
  std::vector<std::string> outputData;
  for (const rt::TensorSpec &spec : a.outputs)
    outputData.emplace_back(spec.bytes(), '\0');
  std::vector<rt::HostTensor> in, out;
  for (std::string &d : inputData)
    in.push_back({d.data(), d.size()});
  for (std::string &d : outputData)
    out.push_back({d.data(), d.size()});

  rt::Session session(model);
  session.run(in, out);
  std::printf("kiln-run: %s on %s (%s): %zu launches of %zu kernels\n", modelPath.c_str(),
              rt::queryDevice(0).name.c_str(), model->loadedArch().c_str(),
              a.launches.size(), a.kernels.size());

  bool ok = true;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const rt::TensorSpec &spec = a.outputs[i];
    std::vector<double> values = toDouble(outputData[i], spec.dtype);
    size_t nonFinite = std::count_if(values.begin(), values.end(),
                                     [](double v) { return !std::isfinite(v); });
    std::printf("  %s %s %s: %zu non-finite\n", spec.name.c_str(),
                artifact::dtypeName(spec.dtype), shapeText(spec.shape).c_str(), nonFinite);
    if (!saveDir.empty()) {
      npy::Array array{"<f4", spec.shape, fromDouble(values, DType::F32)};
      npy::write(saveDir + "/" + spec.name + ".npy", array);
    }
    if (checks.empty())
      continue;
    npy::Array reference = npy::read(checks[i]);
    if (reference.shape != spec.shape)
      throw rt::Error(checks[i] + " has shape " + shapeText(reference.shape) + ", output '" +
                      spec.name + "' is " + shapeText(spec.shape));
    std::vector<double> expected = toDouble(reference.data, npyType(reference.descr));
    double diff = 0, norm = 0, maxAbs = 0;
    for (size_t k = 0; k < values.size(); ++k) {
      double d = values[k] - expected[k];
      diff += d * d;
      norm += expected[k] * expected[k];
      maxAbs = std::max(maxAbs, std::fabs(d));
    }
    double relL2 = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
    double limit = tolerance >= 0 ? tolerance : (spec.dtype == DType::F32 ? 1e-5 : 1e-2);
    bool pass = relL2 <= limit && nonFinite == 0;
    ok &= pass;
    std::printf("  check %s against %s: rel L2 %.3e, max abs %.3e (tolerance %.0e) %s\n",
                spec.name.c_str(), checks[i].c_str(), relL2, maxAbs, limit,
                pass ? "ok" : "FAIL");
  }

  if (bench > 0) {
    for (int i = 0; i < 3; ++i)
      session.run(in, out);
    std::vector<double> wall;
    for (int i = 0; i < bench; ++i) {
      auto start = std::chrono::steady_clock::now();
      session.run(in, out);
      wall.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start).count());
    }
    std::sort(wall.begin(), wall.end());
    float device = session.timeLaunches(bench);
    std::printf("  bench (%d runs): wall per run with copies: median %.4f ms, p10 %.4f, "
                "p90 %.4f; kernels alone: %.4f ms per run (device time)\n",
                bench, wall[wall.size() / 2], wall[wall.size() / 10],
                wall[wall.size() * 9 / 10], device);
  }
  return ok ? 0 : 1;
}
} // namespace

int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kiln-run: error: %s\n", e.what());
    return 1;
  }
}
