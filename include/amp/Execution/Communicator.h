//===- Communicator.h - the replicas of a data-parallel job -----*- C++ -*-===//
//
// Data-parallel training (`mpirun -np N amp-run --train ...`): every rank
// runs the same program on its shard of each global batch, and the ranks
// sum their gradients with one all-reduce per optimizer step
// (docs/DataParallel.md). A Communicator is that world: its rank, its size
// and the collectives the train loop needs. MPI provides it when amp is
// built with MPI and the process runs under mpirun; otherwise there is one
// rank and no communication.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_EXECUTION_COMMUNICATOR_H
#define AMP_EXECUTION_COMMUNICATOR_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <memory>
#include <string>

namespace mlir::amp::execution {

class Communicator {
public:
  virtual ~Communicator();
  virtual int getRank() const = 0;
  virtual int getSize() const = 0;
  /// Sums `count` values over all ranks, in place (every rank gets the
  /// sum). One call moves the whole buffer.
  virtual llvm::Error allReduceSum(float *data, size_t count) = 0;
  virtual llvm::Error allReduceSum(double *data, size_t count) = 0;
  /// The largest of every rank's `value`.
  virtual llvm::Expected<double> allReduceMax(double value) = 0;
  /// Ends the whole job after a rank's error (its message already printed):
  /// every rank exits with `code`, none waits in a collective.
  [[noreturn]] virtual void abort(int code) = 0;
  /// "MPI (Open MPI 4.1.4), 2 ranks" and the like.
  virtual std::string describe() const = 0;
};

/// Whether the process was started by an MPI launcher (mpirun, mpiexec,
/// srun with PMI): it has the environment of an MPI job.
bool isLaunchedByMpi();

/// Whether amp was built with MPI.
bool hasMpiSupport();

/// The MPI world (MPI_Init on first use, MPI_Finalize at exit). An error
/// when amp was built without MPI or MPI cannot start.
llvm::Expected<std::unique_ptr<Communicator>> createMpiCommunicator();

} // namespace mlir::amp::execution

#endif // AMP_EXECUTION_COMMUNICATOR_H
