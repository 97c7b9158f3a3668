//===- AmpDialect.cpp - amp dialect registration --------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpOpsDialect.cpp.inc"

void AmpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
      >();
}

Operation *AmpDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                           Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, type, elements);
}
