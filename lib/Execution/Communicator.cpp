//===- Communicator.cpp - the replicas of a data-parallel job -------------===//

#include "amp/Execution/Communicator.h"
#include "amp/Runtime/MpiLaunch.h"

using namespace mlir::amp::execution;

Communicator::~Communicator() = default;

bool mlir::amp::execution::isLaunchedByMpi() {
  return amp_runtime::isLaunchedByMpi();
}
