//===- LaunchLoops.cpp - a launch's blocks and threads as loops -----------===//

#include "amp/Conversion/LinalgToCUDA/LaunchLoops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

scf::ForOp mlir::amp::cuda::buildLaunchLoops(OpBuilder &b, Location loc,
                                             ArrayRef<Value> bounds,
                                             SmallVectorImpl<Value> &ids) {
  assert(bounds.size() == 6 && "grid and block sizes");
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  ids.assign(6, Value());
  scf::ForOp outermost;
  for (int i : {2, 1, 0, 5, 4, 3}) {
    auto loop = b.create<scf::ForOp>(loc, zero, bounds[i], one);
    if (!outermost)
      outermost = loop;
    ids[i] = loop.getInductionVar();
    b.setInsertionPointToStart(loop.getBody());
  }
  return outermost;
}
