// amp-tblgen -gen-pass-option-binders: one OptionsBinder call per option of
// each pass with options, under its argument name and description; passes
// without options get nothing; an option type OptionsBinder does not take
// is an error at the option.
//
// RUN: split-file %s %t
// RUN: amp-tblgen -gen-pass-option-binders -I %mlir_include %t/good.td | FileCheck %s
// RUN: not amp-tblgen -gen-pass-option-binders -I %mlir_include %t/bad.td 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK: /// my-pass's options.
// CHECK-NEXT: inline void bindOptions(MyPassOptions &options, ::mlir::amp::OptionsBinder &binder) {
// CHECK-NEXT:   binder.bind({"type", "Low type: \"f16\" or bf16"}, options.type);
// CHECK-NEXT:   binder.bind({"level", "Level"}, options.level);
// CHECK-NEXT:   binder.bind({"flag", "A flag"}, options.flag);
// CHECK-NEXT:   binder.bind({"bytes", "Bytes"}, options.maxBytes);
// CHECK-NEXT:   binder.bind({"ratio", "Ratio"}, options.ratio);
// CHECK-NEXT:   binder.bind({"ops", "Op names"}, options.ops);
// CHECK-NEXT: }
// CHECK-NOT: NoOptions

// BAD: bad.td:{{[0-9]+}}:{{[0-9]+}}: error: pass 'BadPass': option 'kind' has type 'Kind', which OptionsBinder does not take

//--- good.td
include "mlir/Pass/PassBase.td"
def MyPass : Pass<"my-pass"> {
  let options = [
    Option<"type", "type", "std::string", "\"f16\"", "Low type: \"f16\" or bf16">,
    Option<"level", "level", "unsigned", "1", "Level">,
    Option<"flag", "flag", "bool", "false", "A flag">,
    Option<"maxBytes", "bytes", "int64_t", "0", "Bytes">,
    Option<"ratio", "ratio", "double", "0.5", "Ratio">,
    ListOption<"ops", "ops", "std::string", "Op names">,
  ];
}
def NoOptions : Pass<"no-options">;

//--- bad.td
include "mlir/Pass/PassBase.td"
def BadPass : Pass<"bad-pass"> {
  let options = [
    Option<"kind", "kind", "Kind", "Kind::A", "An enum">,
  ];
}
