//===- Interface.cpp - DecomposableOpInterface definitions ----------------===//

#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.h"

#include "amp/Dialect/Amp/IR/AmpDecompositionInterface.cpp.inc"
