//===- Interface.cpp - GradientOpInterface definitions --------------------===//

#include "amp/Dialect/Amp/IR/AmpGradientInterface.h"

#include "amp/Dialect/Amp/IR/AmpGradientInterface.cpp.inc"
