//===- AtenCall.h - one ATen call being translated --------------*- C++ -*-===//
//
// What the translation rules (Aten*.cpp) see: the call's arguments with
// typed accessors that report what is wrong, the dtypes and shapes torch
// recorded for its results, and a checked way to build amp ops through
// their ODS builders (result types from shape inference; a failure is a
// diagnostic at the node, never an abort).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_TARGET_TORCH_ATENCALL_H
#define AMP_LIB_TARGET_TORCH_ATENCALL_H

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <optional>
#include <string>

namespace mlir::amp::torch_import {

/// A value of the graph: a tensor, a symbolic integer (held as a
/// tensor<1xi64>), or a tuple of them (multi-result ops; absent elements
/// are null).
struct GraphValue {
  enum class Kind { Tensor, SymInt, Tuple } kind = Kind::Tensor;
  Value value;
  llvm::SmallVector<Value> elements;
};

/// The element type of a torch dtype name ("float32"), or null.
Type convertDtype(MLIRContext *context, llvm::StringRef dtype);

/// The metadata torch recorded for a tensor: dtype and sizes (dynamic
/// sizes as ShapedType::kDynamic).
struct TensorMeta {
  Type elementType;
  llvm::SmallVector<int64_t> shape;
};
std::optional<TensorMeta> parseTensorMeta(MLIRContext *context,
                                          const llvm::json::Value *meta);

class AtenCall {
public:
  AtenCall(OpBuilder &builder, Location loc, const llvm::json::Object &node,
           const llvm::StringMap<GraphValue> &values, std::string describe);

  OpBuilder &builder;
  Location loc;
  MLIRContext *getContext() const { return builder.getContext(); }
  llvm::StringRef getTarget() const { return target; }

  /// Reports "node 'N' (aten.op): message (module M, at FILE:LINE)".
  LogicalResult fail(const llvm::Twine &message);

  //===--- Arguments (by position, else by keyword) ----------------------===//
  /// Null when absent; a JSON null when given as None.
  const llvm::json::Value *arg(unsigned i, llvm::StringRef keyword) const;
  /// Whether the argument is given and not None.
  bool has(unsigned i, llvm::StringRef keyword) const;
  unsigned getNumArgs() const;

  FailureOr<Value> tensor(unsigned i, llvm::StringRef keyword);
  /// The tensor a node reference (an element of a list argument) names.
  FailureOr<Value> tensorAt(const llvm::json::Value &ref,
                            const llvm::Twine &what);
  /// A tensor, or `none` when the argument is absent or None.
  FailureOr<Value> optionalTensor(unsigned i, llvm::StringRef keyword);
  FailureOr<llvm::SmallVector<Value>> tensors(unsigned i,
                                              llvm::StringRef keyword);
  FailureOr<int64_t> integer(unsigned i, llvm::StringRef keyword,
                             std::optional<int64_t> defaultValue = {});
  FailureOr<double> number(unsigned i, llvm::StringRef keyword,
                           std::optional<double> defaultValue = {});
  FailureOr<bool> flag(unsigned i, llvm::StringRef keyword,
                       std::optional<bool> defaultValue = {});
  FailureOr<std::string> string(unsigned i, llvm::StringRef keyword,
                                std::optional<std::string> defaultValue = {});
  /// A list of ints (a single int is a list of one).
  FailureOr<llvm::SmallVector<int64_t>>
  integers(unsigned i, llvm::StringRef keyword,
           std::optional<llvm::SmallVector<int64_t>> defaultValue = {});
  /// A list of ints and symbolic ints (nodes) as a tensor<Nxi64>.
  FailureOr<Value> sizes(unsigned i, llvm::StringRef keyword);
  /// A dtype argument; null type when absent or None.
  FailureOr<Type> dtype(unsigned i, llvm::StringRef keyword);
  /// A tensor, a symbolic int or a Python number, as a tensor of
  /// `elementType` (numbers and symbolic ints become rank-0 tensors;
  /// tensors of another type are cast).
  FailureOr<Value> operand(unsigned i, llvm::StringRef keyword,
                           Type elementType);
  /// Whether the argument is a tensor (not a number or a symbolic int).
  bool isTensor(unsigned i, llvm::StringRef keyword) const;
  /// The element type of a tensor argument, or of the type a Python
  /// number has in torch's promotion (i64, f32 for floats, i1).
  Type argElementType(unsigned i, llvm::StringRef keyword) const;

  //===--- Results ------------------------------------------------------===//
  /// What torch recorded for result `k` (null type when it did not).
  TensorMeta resultMeta(unsigned k = 0) const;
  Type resultElementType(unsigned k = 0) const {
    return resultMeta(k).elementType;
  }
  void setResult(Value value) { results.push_back(value); }
  /// Sets the single result of a built value (fails if building failed).
  LogicalResult finish(FailureOr<Value> value) {
    if (failed(value))
      return failure();
    setResult(*value);
    return success();
  }
  void setResults(ValueRange values) {
    results.append(values.begin(), values.end());
  }
  /// A symbolic int result (a tensor<1xi64>).
  void setSymIntResult(Value value) {
    results.push_back(value);
    symIntResult = true;
  }
  llvm::ArrayRef<Value> getResults() const { return results; }
  bool isSymIntResult() const { return symIntResult; }

  //===--- Building -------------------------------------------------------===//
  /// Builds an op through `OpTy::build(builder, state, TypeRange(), args...)`
  /// with the result types from shape inference; fails with the node's
  /// context where inference rejects it.
  template <typename OpTy, typename... Args>
  FailureOr<OpTy> create(Args &&...args) {
    OperationState state(loc, OpTy::getOperationName());
    OpTy::build(builder, state, TypeRange(), std::forward<Args>(args)...);
    Operation *op = finishCreate(state);
    if (!op)
      return failure();
    return cast<OpTy>(op);
  }
  /// Its single result.
  template <typename OpTy, typename... Args>
  FailureOr<Value> value(Args &&...args) {
    FailureOr<OpTy> op = create<OpTy>(std::forward<Args>(args)...);
    if (failed(op))
      return failure();
    return (*op)->getResult(0);
  }

  Value none();
  /// A 1-D i64 constant.
  Value i64s(llvm::ArrayRef<int64_t> values);
  /// A rank-0 constant of `elementType` (integer types truncate).
  Value scalar(double value, Type elementType);
  /// `value` cast to `elementType` (itself when it has that type).
  FailureOr<Value> castTo(Value value, Type elementType);
  static int64_t rankOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getRank();
  }
  static Type elementTypeOf(Value value) {
    return cast<RankedTensorType>(value.getType()).getElementType();
  }

private:
  Operation *finishCreate(OperationState &state);
  FailureOr<const GraphValue *> lookup(const llvm::json::Value &ref);

  const llvm::json::Object &node;
  const llvm::StringMap<GraphValue> &values;
  std::string target, describe;
  llvm::SmallVector<Value> results;
  bool symIntResult = false;
};

/// One translation: the ATen target and the function that builds it.
struct AtenRule {
  llvm::StringLiteral target;
  llvm::StringLiteral ampOps;
  LogicalResult (*translate)(AtenCall &call);
};

// The rule tables, one per op family.
llvm::ArrayRef<AtenRule> getElementwiseRules();
llvm::ArrayRef<AtenRule> getLinearAlgebraRules();
llvm::ArrayRef<AtenRule> getNormalizationRules();
llvm::ArrayRef<AtenRule> getShapeRules();

} // namespace mlir::amp::torch_import

#endif // AMP_LIB_TARGET_TORCH_ATENCALL_H
