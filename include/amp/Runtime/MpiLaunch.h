//===- MpiLaunch.h - whether an MPI launcher started this process -*- C++
//-*-===//
//
// amp-run and amp-train-gpu join an MPI job only when a launcher (mpirun,
// mpiexec, srun with PMI) started them; otherwise they are one process and
// never initialise MPI. Header-only, plain C++.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_MPILAUNCH_H
#define AMP_RUNTIME_MPILAUNCH_H

#include <cstdlib>

namespace amp_runtime {

/// Whether an MPI launcher (Open MPI, MPICH/PMI, PMIx) started this process.
inline bool isLaunchedByMpi() {
  for (const char *variable :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"})
    if (const char *value = std::getenv(variable); value && *value)
      return true;
  return false;
}

/// This process's rank among those of its node (one GPU each), 0 when the
/// launcher does not say.
inline int getLocalRank() {
  for (const char *variable : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                               "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *value = std::getenv(variable); value && *value)
      return std::atoi(value);
  return 0;
}

} // namespace amp_runtime

#endif // AMP_RUNTIME_MPILAUNCH_H
