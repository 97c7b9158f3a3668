//===- MemRefABI.h - calling compiled amp programs --------------*- C++ -*-===//
//
// The calling convention of a function compiled by MLIR with the C
// interface (`llvm.emit_c_interface`), in its packed form (`void(void **)`,
// what ExecutionEngine::lookupPacked returns): every tensor argument is a
// ranked memref descriptor {allocated, aligned, offset, sizes[rank],
// strides[rank]}, and the results come back as one struct of descriptors.
// Plain C++ (no MLIR or LLVM), so that any runtime can call compiled code.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_MEMREFABI_H
#define AMP_RUNTIME_MEMREFABI_H

#include "amp/Runtime/HostTensor.h"

namespace amp_runtime {

using PackedFunction = void (*)(void **);

/// What a result of a compiled program is: its element type and rank.
struct ResultType {
  ElementType elementType;
  int64_t rank;
};

/// Calls `function` on `inputs` (C-order tensors, copied so that the
/// program may not alias the caller's data) and returns its results as
/// tensors in `outputs`. Buffers the program allocated for its results are
/// freed once (results may share a buffer); constants (memref.get_global,
/// marked 0xdeadbeef) and results that alias an input are not.
void callPacked(PackedFunction function, const std::vector<Tensor> &inputs,
                const std::vector<ResultType> &results,
                std::vector<Tensor> &outputs);

/// callPacked without the copy of the inputs: the program runs on the
/// inputs' own buffers (it may write into them) and a result that is an
/// input's whole buffer, updated in place, is moved into `outputs`
/// instead of copied. For callers that hand their tensors over, such as a
/// training loop whose new state replaces the old.
void callPackedConsuming(PackedFunction function, std::vector<Tensor> &&inputs,
                         const std::vector<ResultType> &results,
                         std::vector<Tensor> &outputs);

} // namespace amp_runtime

#endif // AMP_RUNTIME_MEMREFABI_H
