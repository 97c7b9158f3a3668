//===- Views.cpp - the buffer a memref view reads -------------------------===//

#include "amp/Conversion/LinalgToCUDA/Views.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;

Value mlir::amp::cuda::getViewSource(Operation *op) {
  if (auto view = dyn_cast<ViewLikeOpInterface>(op))
    return view.getViewSource();
  if (auto transpose = dyn_cast<memref::TransposeOp>(op))
    return transpose.getIn();
  return {};
}

Value mlir::amp::cuda::getRootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    Value source = getViewSource(def);
    if (!source)
      break;
    value = source;
  }
  return value;
}
