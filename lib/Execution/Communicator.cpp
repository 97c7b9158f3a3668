//===- Communicator.cpp - the replicas of a data-parallel job -------------===//

#include "amp/Execution/Communicator.h"

#include <cstdlib>

using namespace mlir::amp::execution;

Communicator::~Communicator() = default;

bool mlir::amp::execution::isLaunchedByMpi() {
  for (const char *variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (const char *value = std::getenv(variable); value && *value)
      return true;
  return false;
}
