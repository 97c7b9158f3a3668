//===- Passes.td - every amp conversion pass, for the docs -*- tablegen -*-===//
//
// The passes are declared next to their libraries (AmpToLinalg/Passes.td,
// LinalgToCpu/Passes.td); this file gathers them for docs/ConversionPasses.md.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "amp/Conversion/AmpToLinalg/Passes.td"
include "amp/Conversion/LinalgToCpu/Passes.td"
include "amp/Conversion/LinalgToCUDA/Passes.td"

#endif // AMP_CONVERSION_PASSES_TD
