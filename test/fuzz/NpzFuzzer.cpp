//===- NpzFuzzer.cpp - libFuzzer target: .npz state files (amp-run --train)
//
// Any bytes as a training state file (--load-state): readNpz fails with a
// message or returns arrays; a zip bomb or a huge declared array must fail
// without allocating gigabytes (the fuzzer's -rss_limit_mb catches that).
//
//===----------------------------------------------------------------------===//

#include "amp/Runtime/Npz.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path =
      "/tmp/amp-npz-fuzz-" + std::to_string(::getpid()) + ".npz";
  FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return 0;
  std::fwrite(data, 1, size, file);
  std::fclose(file);
  amp_runtime::NamedTensors arrays;
  std::string error;
  if (!amp_runtime::readNpz(path, arrays, error) && error.empty())
    std::abort();
  std::remove(path.c_str());
  return 0;
}
