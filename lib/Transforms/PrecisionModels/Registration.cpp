//===- Registration.cpp - every upstream precision model ------------------===//

#include "amp/Transforms/PrecisionModels.h"

#include "ModelUtils.h"

void mlir::amp::registerUpstreamPrecisionModels(DialectRegistry &registry) {
  precision_models::registerArithMathModels(registry);
  precision_models::registerLinalgModels(registry);
  precision_models::registerTensorModels(registry);
  precision_models::registerTosaModels(registry);
}
