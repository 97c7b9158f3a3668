//===- AtenCall.cpp - arguments, results and checked op building ----------===//

#include "AtenCall.h"

#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::torch_import;

Type torch_import::convertDtype(MLIRContext *context, StringRef dtype) {
  Builder b(context);
  return llvm::StringSwitch<Type>(dtype)
      .Case("float32", b.getF32Type())
      .Case("float16", b.getF16Type())
      .Case("bfloat16", b.getBF16Type())
      .Case("float64", b.getF64Type())
      .Case("int64", b.getIntegerType(64))
      .Case("int32", b.getIntegerType(32))
      .Case("int16", b.getIntegerType(16))
      .Case("int8", b.getIntegerType(8))
      .Case("uint8", b.getIntegerType(8, /*isSigned=*/false))
      .Case("bool", b.getI1Type())
      .Default(Type());
}

std::optional<TensorMeta>
torch_import::parseTensorMeta(MLIRContext *context,
                              const llvm::json::Value *meta) {
  const llvm::json::Object *object = meta ? meta->getAsObject() : nullptr;
  if (!object)
    return std::nullopt;
  std::optional<StringRef> dtype = object->getString("dtype");
  const llvm::json::Array *shape = object->getArray("shape");
  if (!dtype || !shape)
    return std::nullopt;
  TensorMeta result;
  result.elementType = convertDtype(context, *dtype);
  if (!result.elementType)
    return std::nullopt;
  for (const llvm::json::Value &size : *shape) {
    if (std::optional<int64_t> n = size.getAsInteger()) {
      if (*n < 0)
        return std::nullopt;
      result.shape.push_back(*n);
    } else if (size.getAsString()) {
      result.shape.push_back(ShapedType::kDynamic);
    } else {
      return std::nullopt;
    }
  }
  return result;
}

AtenCall::AtenCall(OpBuilder &builder, Location loc,
                   const llvm::json::Object &node,
                   const llvm::StringMap<GraphValue> &values,
                   std::string describe)
    : builder(builder), loc(loc), node(node), values(values),
      target(node.getString("target").value_or("").str()),
      describe(std::move(describe)) {}

LogicalResult AtenCall::fail(const Twine &message) {
  return emitError(loc) << describe << ": " << message;
}

unsigned AtenCall::getNumArgs() const {
  const llvm::json::Array *args = node.getArray("args");
  return args ? args->size() : 0;
}

const llvm::json::Value *AtenCall::arg(unsigned i, StringRef keyword) const {
  if (const llvm::json::Array *args = node.getArray("args"))
    if (i < args->size())
      return &(*args)[i];
  if (const llvm::json::Object *kwargs = node.getObject("kwargs"))
    if (!keyword.empty())
      return kwargs->get(keyword);
  return nullptr;
}

bool AtenCall::has(unsigned i, StringRef keyword) const {
  const llvm::json::Value *value = arg(i, keyword);
  return value && value->kind() != llvm::json::Value::Null;
}

static std::string argName(unsigned i, StringRef keyword) {
  return keyword.empty() ? llvm::formatv("argument #{0}", i).str()
                         : llvm::formatv("argument '{0}'", keyword).str();
}

FailureOr<const GraphValue *> AtenCall::lookup(const llvm::json::Value &ref) {
  const llvm::json::Object *object = ref.getAsObject();
  std::optional<StringRef> name =
      object ? object->getString("node") : std::nullopt;
  if (!name)
    return failure();
  auto it = values.find(*name);
  if (it == values.end()) {
    (void)fail("uses '" + *name + "', which is not defined before it");
    return failure();
  }
  return &it->second;
}

bool AtenCall::isTensor(unsigned i, StringRef keyword) const {
  const llvm::json::Value *value = arg(i, keyword);
  const llvm::json::Object *object = value ? value->getAsObject() : nullptr;
  std::optional<StringRef> name =
      object ? object->getString("node") : std::nullopt;
  if (!name)
    return false;
  auto it = values.find(*name);
  return it != values.end() && it->second.kind == GraphValue::Kind::Tensor;
}

FailureOr<Value> AtenCall::tensor(unsigned i, StringRef keyword) {
  const llvm::json::Value *value = arg(i, keyword);
  if (!value || !value->getAsObject() ||
      !value->getAsObject()->getString("node"))
    return fail(argName(i, keyword) + " must be a tensor");
  FailureOr<const GraphValue *> bound = lookup(*value);
  if (failed(bound))
    return failure();
  if ((*bound)->kind == GraphValue::Kind::Tuple)
    return fail(argName(i, keyword) + " is a tuple, not a tensor");
  return (*bound)->value;
}

FailureOr<Value> AtenCall::tensorAt(const llvm::json::Value &ref,
                                    const Twine &what) {
  if (!ref.getAsObject() || !ref.getAsObject()->getString("node"))
    return fail(what + " must be a tensor");
  FailureOr<const GraphValue *> bound = lookup(ref);
  if (failed(bound))
    return failure();
  if ((*bound)->kind != GraphValue::Kind::Tensor)
    return fail(what + " must be a tensor");
  return (*bound)->value;
}

FailureOr<Value> AtenCall::optionalTensor(unsigned i, StringRef keyword) {
  if (!has(i, keyword))
    return none();
  return tensor(i, keyword);
}

FailureOr<SmallVector<Value>> AtenCall::tensors(unsigned i,
                                                StringRef keyword) {
  const llvm::json::Value *value = arg(i, keyword);
  const llvm::json::Array *list = value ? value->getAsArray() : nullptr;
  if (!list)
    return fail(argName(i, keyword) + " must be a list of tensors");
  SmallVector<Value> result;
  for (const llvm::json::Value &element : *list) {
    FailureOr<const GraphValue *> bound = lookup(element);
    if (failed(bound) || (*bound)->kind != GraphValue::Kind::Tensor)
      return fail(argName(i, keyword) + " must be a list of tensors");
    result.push_back((*bound)->value);
  }
  return result;
}

FailureOr<int64_t> AtenCall::integer(unsigned i, StringRef keyword,
                                     std::optional<int64_t> defaultValue) {
  const llvm::json::Value *value = arg(i, keyword);
  if ((!value || value->kind() == llvm::json::Value::Null) && defaultValue)
    return *defaultValue;
  if (value)
    if (std::optional<int64_t> n = value->getAsInteger())
      return *n;
  if (value && value->getAsObject() && value->getAsObject()->get("node"))
    return fail(argName(i, keyword) +
                " is a symbolic size here; amp needs a constant");
  return fail(argName(i, keyword) + " must be an integer");
}

FailureOr<double> AtenCall::number(unsigned i, StringRef keyword,
                                   std::optional<double> defaultValue) {
  const llvm::json::Value *value = arg(i, keyword);
  if ((!value || value->kind() == llvm::json::Value::Null) && defaultValue)
    return *defaultValue;
  if (value) {
    if (std::optional<bool> b = value->getAsBoolean())
      return *b ? 1.0 : 0.0;
    if (std::optional<double> d = value->getAsNumber())
      return *d;
    if (const llvm::json::Object *object = value->getAsObject())
      if (std::optional<StringRef> special = object->getString("float")) {
        if (*special == "inf")
          return std::numeric_limits<double>::infinity();
        if (*special == "-inf")
          return -std::numeric_limits<double>::infinity();
        if (*special == "nan")
          return std::numeric_limits<double>::quiet_NaN();
      }
  }
  return fail(argName(i, keyword) + " must be a number");
}

FailureOr<bool> AtenCall::flag(unsigned i, StringRef keyword,
                               std::optional<bool> defaultValue) {
  const llvm::json::Value *value = arg(i, keyword);
  if ((!value || value->kind() == llvm::json::Value::Null) && defaultValue)
    return *defaultValue;
  if (value)
    if (std::optional<bool> b = value->getAsBoolean())
      return *b;
  return fail(argName(i, keyword) + " must be a bool");
}

FailureOr<std::string>
AtenCall::string(unsigned i, StringRef keyword,
                 std::optional<std::string> defaultValue) {
  const llvm::json::Value *value = arg(i, keyword);
  if ((!value || value->kind() == llvm::json::Value::Null) && defaultValue)
    return *defaultValue;
  if (value)
    if (std::optional<StringRef> s = value->getAsString())
      return s->str();
  return fail(argName(i, keyword) + " must be a string");
}

FailureOr<SmallVector<int64_t>>
AtenCall::integers(unsigned i, StringRef keyword,
                   std::optional<SmallVector<int64_t>> defaultValue) {
  const llvm::json::Value *value = arg(i, keyword);
  if ((!value || value->kind() == llvm::json::Value::Null) && defaultValue)
    return *defaultValue;
  if (value)
    if (std::optional<int64_t> n = value->getAsInteger())
      return SmallVector<int64_t>{*n};
  const llvm::json::Array *list = value ? value->getAsArray() : nullptr;
  if (!list)
    return fail(argName(i, keyword) + " must be a list of integers");
  SmallVector<int64_t> result;
  for (const llvm::json::Value &element : *list) {
    std::optional<int64_t> n = element.getAsInteger();
    if (!n)
      return fail(argName(i, keyword) +
                  " must be a list of constant integers");
    result.push_back(*n);
  }
  return result;
}

FailureOr<Value> AtenCall::sizes(unsigned i, StringRef keyword) {
  const llvm::json::Value *value = arg(i, keyword);
  const llvm::json::Array *list = value ? value->getAsArray() : nullptr;
  if (!list)
    return fail(argName(i, keyword) + " must be a list of sizes");
  SmallVector<Value> pieces;
  SmallVector<int64_t> run;
  auto flush = [&] {
    if (!run.empty())
      pieces.push_back(i64s(run));
    run.clear();
  };
  for (const llvm::json::Value &element : *list) {
    if (std::optional<int64_t> n = element.getAsInteger()) {
      run.push_back(*n);
      continue;
    }
    FailureOr<const GraphValue *> bound = lookup(element);
    if (failed(bound) || (*bound)->kind == GraphValue::Kind::Tuple)
      return fail(argName(i, keyword) + " must be a list of sizes");
    Value size = (*bound)->value;
    if ((*bound)->kind == GraphValue::Kind::Tensor) {
      // A 0-d integer tensor used as a size.
      auto type = cast<RankedTensorType>(size.getType());
      if (type.getRank() != 0 || !isa<IntegerType>(type.getElementType()))
        return fail(argName(i, keyword) + " holds a tensor that is not a "
                                          "0-d integer");
      FailureOr<Value> cast = castTo(size, builder.getIntegerType(64));
      if (failed(cast))
        return failure();
      FailureOr<Value> one =
          this->value<UnsqueezeOp>(*cast, i64s({0}));
      if (failed(one))
        return failure();
      size = *one;
    }
    flush();
    pieces.push_back(size);
  }
  flush();
  if (pieces.empty())
    return i64s({});
  if (pieces.size() == 1)
    return pieces.front();
  return this->value<ConcatOp>(ValueRange(pieces),
                               builder.getI64IntegerAttr(0));
}

FailureOr<Type> AtenCall::dtype(unsigned i, StringRef keyword) {
  const llvm::json::Value *value = arg(i, keyword);
  if (!value || value->kind() == llvm::json::Value::Null)
    return Type();
  const llvm::json::Object *object = value->getAsObject();
  std::optional<StringRef> name =
      object ? object->getString("dtype") : std::nullopt;
  if (!name)
    return fail(argName(i, keyword) + " must be a dtype");
  Type type = convertDtype(getContext(), *name);
  if (!type)
    return fail("dtype " + *name + " is not supported by amp");
  return type;
}

Type AtenCall::argElementType(unsigned i, StringRef keyword) const {
  const llvm::json::Value *value = arg(i, keyword);
  if (!value)
    return Type();
  if (isTensor(i, keyword)) {
    auto it = values.find(*value->getAsObject()->getString("node"));
    return elementTypeOf(it->second.value);
  }
  if (value->getAsObject() && value->getAsObject()->get("node"))
    return builder.getIntegerType(64); // a symbolic int
  if (value->getAsBoolean())
    return builder.getI1Type();
  if (value->getAsInteger())
    return builder.getIntegerType(64);
  return builder.getF32Type();
}

FailureOr<Value> AtenCall::operand(unsigned i, StringRef keyword,
                                   Type elementType) {
  const llvm::json::Value *value = arg(i, keyword);
  if (value && value->getAsObject() && value->getAsObject()->get("node")) {
    FailureOr<const GraphValue *> bound = lookup(*value);
    if (failed(bound))
      return failure();
    if ((*bound)->kind == GraphValue::Kind::Tuple)
      return fail(argName(i, keyword) + " is a tuple, not a tensor");
    Value v = (*bound)->value;
    if ((*bound)->kind == GraphValue::Kind::SymInt) {
      FailureOr<Value> scalar = this->value<SqueezeOp>(v, i64s({0}));
      if (failed(scalar))
        return failure();
      v = *scalar;
    }
    return castTo(v, elementType);
  }
  FailureOr<double> n = number(i, keyword);
  if (failed(n))
    return failure();
  return scalar(*n, elementType);
}

TensorMeta AtenCall::resultMeta(unsigned k) const {
  const llvm::json::Value *meta = node.get("meta");
  if (meta && meta->getAsArray()) {
    const llvm::json::Array &list = *meta->getAsArray();
    meta = k < list.size() ? &list[k] : nullptr;
  } else if (k != 0) {
    meta = nullptr;
  }
  if (std::optional<TensorMeta> parsed = parseTensorMeta(getContext(), meta))
    return *parsed;
  return TensorMeta();
}

Value AtenCall::none() { return builder.create<NoneOp>(loc); }

Value AtenCall::i64s(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    builder.getIntegerType(64));
  return builder.create<ConstantOp>(loc,
                                    DenseIntElementsAttr::get(type, values));
}

Value AtenCall::scalar(double value, Type elementType) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute attr;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    attr = DenseElementsAttr::get(type, builder.getFloatAttr(floatType, value));
  } else if (elementType.isInteger(1)) {
    attr = DenseElementsAttr::get(type, value != 0);
  } else {
    // Saturate what does not fit (a huge slice bound means "to the end").
    auto intType = cast<IntegerType>(elementType);
    int64_t n = 0;
    if (std::isnan(value))
      n = 0;
    else if (value >= 9.2233720368547758e18)
      n = std::numeric_limits<int64_t>::max();
    else if (value <= -9.2233720368547758e18)
      n = std::numeric_limits<int64_t>::min();
    else
      n = static_cast<int64_t>(value);
    APInt bits(64, static_cast<uint64_t>(n), /*isSigned=*/true);
    attr = DenseElementsAttr::get(type, intType.getWidth() < 64 ? bits.trunc(intType.getWidth()) : bits);
  }
  return builder.create<ConstantOp>(loc, cast<ElementsAttr>(attr));
}

FailureOr<Value> AtenCall::castTo(Value value, Type elementType) {
  if (elementTypeOf(value) == elementType)
    return value;
  return this->value<CastOp>(value, TypeAttr::get(elementType),
                             builder.getI64IntegerAttr(1));
}

Operation *AtenCall::finishCreate(OperationState &state) {
  MLIRContext *context = getContext();
  std::string problems;
  SmallVector<Type> types;
  {
    ScopedDiagnosticHandler handler(context, [&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error) {
        if (!problems.empty())
          problems += "; ";
        problems += diag.str();
      }
      return success();
    });
    std::optional<RegisteredOperationName> name =
        state.name.getRegisteredInfo();
    auto *inference =
        name ? name->getInterface<InferTypeOpInterface>() : nullptr;
    SmallVector<Region *> regions;
    if (!inference ||
        failed(inference->inferReturnTypes(
            context, loc, state.operands,
            state.attributes.getDictionary(context), OpaqueProperties(nullptr),
            regions, types)))
      types.clear();
  }
  if (types.empty() && state.name.getStringRef() != NoneOp::getOperationName()) {
    (void)fail("cannot build " + state.name.getStringRef() + ": " +
               (problems.empty() ? "its result types cannot be inferred"
                                 : problems));
    return nullptr;
  }
  state.types.clear();
  state.addTypes(types);
  return builder.create(state);
}
