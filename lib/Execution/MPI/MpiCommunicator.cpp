//===- MpiCommunicator.cpp - MPI as the data-parallel world ---------------===//
//
// The MPI implementation of Communicator (compiled with MPI when CMake
// finds it: AMP_HAVE_MPI; otherwise createMpiCommunicator reports that amp
// was built without MPI). The gradients travel as one flat buffer in one
// MPI_Allreduce per optimizer step; MPI_Abort ends a job whose rank
// failed, so that no rank waits forever in a collective. Only the tools
// link it (AmpMpi), not the libraries.
//
//===----------------------------------------------------------------------===//

#include "amp/Execution/Communicator.h"

#include <algorithm>
#include <cstdlib>

#ifdef AMP_HAVE_MPI
#include <mpi.h>
#endif

using namespace mlir::amp::execution;

bool mlir::amp::execution::hasMpiSupport() {
#ifdef AMP_HAVE_MPI
  return true;
#else
  return false;
#endif
}

static llvm::Error mpiError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

#ifdef AMP_HAVE_MPI
namespace {

std::string mpiMessage(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(text, length);
}

class MpiCommunicator final : public Communicator {
public:
  static llvm::Expected<std::unique_ptr<Communicator>> create() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      int code =
          MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      if (code != MPI_SUCCESS)
        return mpiError("MPI_Init: " + mpiMessage(code));
      std::atexit([] {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (!finalized)
          MPI_Finalize();
      });
    }
    // Errors come back as codes (turned into llvm::Error), not as aborts
    // inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    auto world = std::make_unique<MpiCommunicator>();
    MPI_Comm_rank(MPI_COMM_WORLD, &world->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world->size);
    return world;
  }

  int getRank() const override { return rank; }
  int getSize() const override { return size; }

  llvm::Error allReduceSum(float *data, size_t count) override {
    return allReduce(data, count, MPI_FLOAT, MPI_SUM);
  }
  llvm::Error allReduceSum(double *data, size_t count) override {
    return allReduce(data, count, MPI_DOUBLE, MPI_SUM);
  }
  llvm::Expected<double> allReduceMax(double value) override {
    if (llvm::Error err = allReduce(&value, 1, MPI_DOUBLE, MPI_MAX))
      return std::move(err);
    return value;
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code); // MPI_Abort does not return; in case it does
  }
  std::string describe() const override {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version(version, &length);
    std::string library(version, length);
    library = library.substr(0, library.find_first_of(",\n"));
    return "MPI (" + library + "), " + std::to_string(size) + " ranks";
  }

private:
  llvm::Error allReduce(void *data, size_t count, MPI_Datatype type,
                        MPI_Op op) {
    // MPI counts are ints: large buffers go in pieces of at most 2^30.
    constexpr size_t kChunk = size_t(1) << 30;
    int elementBytes = 0;
    MPI_Type_size(type, &elementBytes);
    char *bytes = static_cast<char *>(data);
    for (size_t done = 0; done < count; done += kChunk) {
      int n = static_cast<int>(std::min(kChunk, count - done));
      int code = MPI_Allreduce(MPI_IN_PLACE, bytes + done * elementBytes, n,
                               type, op, MPI_COMM_WORLD);
      if (code != MPI_SUCCESS)
        return mpiError("MPI_Allreduce: " + mpiMessage(code));
    }
    return llvm::Error::success();
  }

  int rank = 0, size = 1;
};

} // namespace
#endif

llvm::Expected<std::unique_ptr<Communicator>>
mlir::amp::execution::createMpiCommunicator() {
#ifdef AMP_HAVE_MPI
  return MpiCommunicator::create();
#else
  return mpiError("this process runs under an MPI launcher, but amp was "
                  "built without MPI (install libopenmpi-dev and rebuild: "
                  "CMake's find_package(MPI) enables it)");
#endif
}
