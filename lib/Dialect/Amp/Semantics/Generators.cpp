//===- Generators.cpp - ops that generate values (Range) ------------------===//

#include "amp/Dialect/Amp/Semantics/Generators.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::amp;

Type semantics::getRangeComputeType(Type elementType, int64_t stashType) {
  MLIRContext *context = elementType.getContext();
  Type stash;
  switch (stashType) {
  case 1:
    stash = Float32Type::get(context);
    break;
  case 11:
    stash = Float64Type::get(context);
    break;
  default:
    return nullptr;
  }
  return isa<Float16Type, BFloat16Type>(elementType) ? stash : elementType;
}
