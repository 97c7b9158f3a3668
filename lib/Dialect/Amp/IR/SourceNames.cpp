//===- SourceNames.cpp - the model op a lowered op comes from -------------===//

#include "amp/Dialect/Amp/IR/SourceNames.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

std::string mlir::amp::getSourceName(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}
