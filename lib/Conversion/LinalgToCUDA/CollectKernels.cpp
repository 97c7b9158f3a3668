//===- CollectKernels.cpp - kernels named after the model, in one module -===//

#include "amp/Conversion/LinalgToCUDA/Passes.h"
#include "amp/Dialect/Amp/IR/SourceNames.h"

#include "llvm/ADT/StringSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCOLLECTKERNELS
#include "amp/Conversion/LinalgToCUDA/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

struct CollectKernels
    : public mlir::amp::impl::AmpCollectKernelsBase<CollectKernels> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    llvm::StringSet<> used;
    unsigned counter = 0;
    // Every kernel moves into the first kernel module: one PTX, one ptxas
    // run, one library to load.
    gpu::GPUModuleOp target;
    SmallVector<gpu::GPUModuleOp> emptied;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto gpuModule =
          module.lookupSymbol<gpu::GPUModuleOp>(launch.getKernelModuleName());
      if (!gpuModule)
        return;
      auto kernel =
          gpuModule.lookupSymbol<gpu::GPUFuncOp>(launch.getKernelName());
      if (!kernel)
        return;
      // A C identifier: letters, digits, '_'; a counter keeps it unique.
      std::string base;
      for (char c : mlir::amp::getSourceName(launch.getLoc()))
        base.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
      if (base.empty())
        base = "kernel";
      else if (std::isdigit(static_cast<unsigned char>(base[0])))
        base = "k_" + base;
      std::string name;
      do
        name = base + "_" + std::to_string(counter++);
      while (!used.insert(name).second);
      SymbolTable::setSymbolName(kernel, name);
      if (!target) {
        target = gpuModule;
      } else if (gpuModule != target) {
        kernel->moveBefore(&target.getBody()->back());
        if (gpuModule.getBody()->getOperations().size() <= 1)
          emptied.push_back(gpuModule);
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          context, target.getName(), {FlatSymbolRefAttr::get(context, name)}));
    });
    for (gpu::GPUModuleOp empty : emptied)
      if (empty.getBody()->getOperations().size() <= 1)
        empty.erase();
    if (target)
      SymbolTable(module).setSymbolName(target, "amp_kernels");
    // Launches name the module; renaming it updates them.
    if (target)
      module.walk([&](gpu::LaunchFuncOp launch) {
        launch.setKernelAttr(SymbolRefAttr::get(
            context, "amp_kernels",
            {FlatSymbolRefAttr::get(context, launch.getKernelName())}));
      });
  }
};

} // namespace
