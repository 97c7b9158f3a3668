//===- SourceNames.h - the model op a lowered op comes from -----*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_IR_SOURCENAMES_H
#define AMP_DIALECT_AMP_IR_SOURCENAMES_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::amp {

/// The ONNX node name a location carries (its first NameLoc), else "".
/// Kernel names, schedule steps, run-time checks and errors use it, so that a
/// profile or a failure points at the model.
std::string getSourceName(Location loc);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_SOURCENAMES_H
