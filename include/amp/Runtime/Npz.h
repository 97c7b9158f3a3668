//===- Npz.h - numpy .npz archives of named tensors -------------*- C++ -*-===//
//
// Training state files: numpy's .npz format (a zip archive of .npy files,
// one per named array), read and written with libzip. np.load reads what
// writeNpz writes, and readNpz reads np.savez and np.savez_compressed.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_NPZ_H
#define AMP_RUNTIME_NPZ_H

#include "amp/Runtime/HostTensor.h"

#include <string>
#include <utility>
#include <vector>

namespace amp_runtime {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Reads every array of `path` in archive order (names without ".npy").
bool readNpz(const std::string &path, NamedTensors &arrays,
             std::string &error);

/// Writes `arrays` to `path` (stored, not compressed), atomically.
bool writeNpz(const std::string &path, const NamedTensors &arrays,
              std::string &error);

} // namespace amp_runtime

#endif // AMP_RUNTIME_NPZ_H
