//===- ArtifactFuzzer.cpp - libFuzzer target: .ampgpu reading -------------===//
//
// Any bytes (mostly with the header's size and checksum made to match, so
// that mutations reach the section decoders): parseArtifact either fails
// with a message or returns an artifact that validateArtifact accepts and
// describeArtifact lists, and re-serialising it reads back the same. Never
// a crash, a hang or a sanitizer report.
//
//===----------------------------------------------------------------------===//

#include "amp_gpu/Artifact.h"

#include <cstdint>
#include <cstdlib>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // The checksum over everything after the header stops nearly every
  // mutation before the section decoders (a planted bug there survived 3
  // million executions). Most inputs are resealed so that mutations reach
  // the decoders; inputs whose length is a multiple of 8 keep their header
  // and exercise the size and checksum checks.
  if (size % 8 != 0)
    amp_gpu::resealArtifact(bytes);
  amp_gpu::Artifact artifact;
  std::string error;
  if (!amp_gpu::parseArtifact(bytes, artifact, error)) {
    if (error.empty())
      std::abort(); // a failure must say why
    return 0;
  }
  if (!amp_gpu::validateArtifact(artifact, error))
    std::abort(); // parsing validates
  (void)amp_gpu::describeArtifact(artifact);
  amp_gpu::Artifact again;
  if (!amp_gpu::parseArtifact(amp_gpu::serializeArtifact(artifact), again,
                              error) ||
      amp_gpu::serializeArtifact(again) != amp_gpu::serializeArtifact(artifact))
    std::abort(); // a valid artifact round-trips
  return 0;
}
