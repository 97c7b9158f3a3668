//===- SourceNames.h - the model op a lowered op comes from -----*- C++ -*-===//

#ifndef AMP_CONVERSION_LINALGTOCUDA_SOURCENAMES_H
#define AMP_CONVERSION_LINALGTOCUDA_SOURCENAMES_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::amp::cuda {

/// The ONNX node name a location carries (its first NameLoc), else "".
/// Kernel names, schedule steps and runtime errors use it, so that a
/// profile or a failure points at the model.
std::string getSourceName(Location loc);

} // namespace mlir::amp::cuda

#endif // AMP_CONVERSION_LINALGTOCUDA_SOURCENAMES_H
