//===- amp-run-gpu.cpp - run a .ampgpu artifact on a CUDA device ----------===//
//
//   amp-run-gpu model.ampgpu -i x.npy --output-dir out --compare-to ref.npy
//   amp-run-gpu model.ampgpu --random-inputs --benchmark 100 --cuda-graph
//   amp-run-gpu model.ampgpu --describe          (no GPU needed)
//
// The interface mirrors amp-run's. It needs only the runtime (no MLIR).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/HostTensor.h"
#include "amp_gpu/Artifact.h"
#include "amp_gpu/HostTypes.h"
#include "amp_gpu/amp_gpu.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using amp_runtime::ElementType;
using amp_runtime::Tensor;

namespace {

const char *kUsage =
    "usage: amp-run-gpu MODEL.ampgpu [options]\n"
    "  -i FILE.npy          an input, in signature order (repeat)\n"
    "  --random-inputs      seeded random inputs instead (--seed N)\n"
    "  --output-dir DIR     write each output as DIR/<name>.npy\n"
    "  --compare-to FILE    a reference .npy per output, in order (repeat)\n"
    "  --rtol F --atol F    comparison tolerance (default per dtype)\n"
    "  --benchmark N        time N executions after 10 warm-ups\n"
    "  --cuda-graph         capture the program as one CUDA graph\n"
    "  --device K           CUDA device (default 0)\n"
    "  --describe           print the artifact's schedule and exit\n"
    "  --print-ptx          print the artifact's PTX and exit\n";

int usageError(const std::string &message) {
  std::fprintf(stderr, "amp-run-gpu: error: %s\n%s", message.c_str(), kUsage);
  return 2;
}

/// The tolerance a dtype's rounding allows when none is given.
double defaultRelTolerance(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return 1e-2;
  case ElementType::BF16:
    return 4e-2;
  case ElementType::F32:
    return 1e-3;
  default:
    return 0;
  }
}

/// Number of elements beyond tolerance (NaN never passes unless both are).
int64_t countMismatches(const Tensor &got, const Tensor &want, double atol,
                        double rtol, double &worst) {
  int64_t bad = 0;
  worst = 0;
  for (int64_t i = 0; i < got.getNumElements(); ++i) {
    double g = got.getAsDouble(i), w = want.getAsDouble(i);
    if (std::isnan(g) || std::isnan(w)) {
      bad += !(std::isnan(g) && std::isnan(w));
      continue;
    }
    if (g == w)
      continue;
    double error = std::fabs(g - w);
    worst = std::max(worst, error);
    if (!(error <= atol + rtol * std::fabs(w)))
      ++bad;
  }
  return bad;
}

} // namespace

int main(int argc, char **argv) {
  std::string model, outputDir;
  std::vector<std::string> inputFiles, references;
  bool randomInputs = false, describe = false, graph = false,
       printPtx = false;
  unsigned seed = 0;
  int device = 0, benchmark = 0;
  double rtol = -1, atol = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (arg == "-i") {
      if (!value(v))
        return usageError("-i needs a file");
      inputFiles.push_back(v);
    } else if (arg == "--compare-to") {
      if (!value(v))
        return usageError("--compare-to needs a file");
      references.push_back(v);
    } else if (arg == "--output-dir") {
      if (!value(outputDir))
        return usageError("--output-dir needs a folder");
    } else if (arg == "--random-inputs") {
      randomInputs = true;
    } else if (arg == "--describe") {
      describe = true;
    } else if (arg == "--print-ptx") {
      printPtx = true;
    } else if (arg == "--cuda-graph") {
      graph = true;
    } else if (arg == "--seed" || arg == "--device" || arg == "--benchmark" ||
               arg == "--rtol" || arg == "--atol") {
      if (!value(v))
        return usageError(arg + " needs a value");
      char *end = nullptr;
      double number = std::strtod(v.c_str(), &end);
      if (!end || *end || number < 0)
        return usageError(arg + ": '" + v + "' is not a number >= 0");
      if (arg == "--seed")
        seed = unsigned(number);
      if (arg == "--device")
        device = int(number);
      if (arg == "--benchmark")
        benchmark = int(number);
      if (arg == "--rtol")
        rtol = number;
      if (arg == "--atol")
        atol = number;
    } else if (!arg.empty() && arg[0] == '-') {
      return usageError("unknown option '" + arg + "'");
    } else if (model.empty()) {
      model = arg;
    } else {
      return usageError("more than one model given");
    }
  }
  if (model.empty())
    return usageError("no model given");

  amp_gpu::Artifact artifact;
  std::string error;
  if (!amp_gpu::readArtifact(model, artifact, error)) {
    std::fprintf(stderr, "amp-run-gpu: error: %s\n", error.c_str());
    return 1;
  }
  if (describe) {
    std::fputs(amp_gpu::describeArtifact(artifact).c_str(), stdout);
    return 0;
  }
  if (printPtx) {
    for (const amp_gpu::Module &module : artifact.modules)
      if (module.format == amp_gpu::ModuleFormat::Ptx)
        std::fwrite(module.bytes.data(), 1, module.bytes.size(), stdout);
    return 0;
  }

  // Inputs, checked against the signature before any device work.
  std::vector<Tensor> inputs(artifact.inputs.size());
  if (!randomInputs && inputFiles.size() != artifact.inputs.size())
    return usageError("the model has " +
                      std::to_string(artifact.inputs.size()) +
                      " input(s) but " + std::to_string(inputFiles.size()) +
                      " -i file(s) were given (or use --random-inputs)");
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const amp_gpu::TensorSignature &sig = artifact.inputs[i];
    ElementType type;
    if (!toElementType(sig.dtype, type))
      return usageError("input '" + sig.name + "' has an unknown type");
    if (randomInputs) {
      inputs[i] = amp_runtime::makeRandomTensor(type, sig.shape, rng);
      continue;
    }
    if (!amp_runtime::readNpy(inputFiles[i], inputs[i], error)) {
      std::fprintf(stderr, "amp-run-gpu: error: %s\n", error.c_str());
      return 1;
    }
    if (type == ElementType::BF16 && inputs[i].elementType == ElementType::F32)
      inputs[i] = amp_runtime::convertF32Tensor(inputs[i], type);
    if (inputs[i].elementType != type || inputs[i].shape != sig.shape) {
      std::fprintf(stderr,
                   "amp-run-gpu: error: '%s': input '%s' expects %s%s, got "
                   "%s%s\n",
                   inputFiles[i].c_str(), sig.name.c_str(),
                   amp_runtime::getElementTypeName(type),
                   amp_runtime::formatShape(sig.shape).c_str(),
                   amp_runtime::getElementTypeName(inputs[i].elementType),
                   amp_runtime::formatShape(inputs[i].shape).c_str());
      return 1;
    }
  }
  if (!references.empty() && references.size() != artifact.outputs.size())
    return usageError("the model has " +
                      std::to_string(artifact.outputs.size()) +
                      " output(s) but " + std::to_string(references.size()) +
                      " --compare-to file(s) were given");

  AmpContext *context = nullptr;
  AmpStatus status = ampCreateContext(device, &context);
  if (status != AMP_OK) {
    std::fprintf(stderr, "amp-run-gpu: error: %s\n", ampGetLastError());
    return status == AMP_NO_DEVICE ? 3 : 1;
  }
  AmpProgram *program = nullptr;
  int rc = 0;
  std::vector<Tensor> outputs(artifact.outputs.size());
  std::vector<const void *> inputPointers;
  std::vector<void *> outputPointers;
  for (Tensor &t : inputs)
    inputPointers.push_back(t.bytes.data());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const amp_gpu::TensorSignature &sig = artifact.outputs[i];
    toElementType(sig.dtype, outputs[i].elementType);
    outputs[i].shape = sig.shape;
    outputs[i].bytes.resize(sig.byteSize());
    outputPointers.push_back(outputs[i].bytes.data());
  }
  if (ampLoad(context, model.c_str(), &program) != AMP_OK ||
      ampSetGraphCapture(program, graph) != AMP_OK ||
      ampRun(program, inputPointers.data(), outputPointers.data()) != AMP_OK) {
    std::fprintf(stderr, "amp-run-gpu: error: %s\n", ampGetLastError());
    rc = 1;
  }
  for (size_t i = 0; rc == 0 && i < outputs.size(); ++i) {
    const std::string &name = artifact.outputs[i].name;
    if (!outputDir.empty() &&
        !amp_runtime::writeNpy(outputDir + "/" + name + ".npy", outputs[i],
                               error)) {
      std::fprintf(stderr, "amp-run-gpu: error: %s\n", error.c_str());
      rc = 1;
      break;
    }
    if (outputDir.empty() && references.empty())
      std::printf("%s: %s%s\n", name.c_str(),
                  amp_runtime::getElementTypeName(outputs[i].elementType),
                  amp_runtime::formatShape(outputs[i].shape).c_str());
    if (references.empty())
      continue;
    Tensor want;
    if (!amp_runtime::readNpy(references[i], want, error)) {
      std::fprintf(stderr, "amp-run-gpu: error: %s\n", error.c_str());
      rc = 1;
      break;
    }
    if (want.shape != outputs[i].shape) {
      std::fprintf(stderr,
                   "amp-run-gpu: error: '%s': shape %s, output '%s' "
                   "is %s\n",
                   references[i].c_str(),
                   amp_runtime::formatShape(want.shape).c_str(), name.c_str(),
                   amp_runtime::formatShape(outputs[i].shape).c_str());
      rc = 1;
      break;
    }
    double r = rtol >= 0 ? rtol : defaultRelTolerance(outputs[i].elementType);
    double a = atol >= 0 ? atol : r * 1e-2;
    double worst = 0;
    int64_t bad = countMismatches(outputs[i], want, a, r, worst);
    std::printf("%s: %s (%lld of %lld elements beyond atol %g + rtol %g * "
                "|ref|; max abs error %g)\n",
                name.c_str(), bad ? "MISMATCH" : "match", (long long)bad,
                (long long)want.getNumElements(), a, r, worst);
    if (bad)
      rc = 1;
  }
  if (rc == 0 && benchmark > 0) {
    double ms = 0;
    if (ampBenchmark(program, 10, benchmark, &ms) != AMP_OK) {
      std::fprintf(stderr, "amp-run-gpu: error: %s\n", ampGetLastError());
      rc = 1;
    } else {
      std::printf("benchmark: %.4f ms per run (%d runs%s)\n", ms, benchmark,
                  graph ? ", CUDA graph" : "");
    }
  }
  ampUnload(program);
  ampDestroyContext(context);
  return rc;
}
