//===- ONNXWeights.cpp - write trained weights back into ONNX -------------===//

#include "amp/Target/ONNX/ONNXWeights.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"

#include <algorithm>
#include <climits>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

using namespace mlir;
using amp_runtime::ElementType;
using amp_runtime::Tensor;

static llvm::Error failure(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The ONNX data type of a host element type (0 if none).
static int onnxDataType(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return onnx::TensorProto::FLOAT;
  case ElementType::F16:
    return onnx::TensorProto::FLOAT16;
  case ElementType::BF16:
    return onnx::TensorProto::BFLOAT16;
  case ElementType::F64:
    return onnx::TensorProto::DOUBLE;
  case ElementType::I64:
    return onnx::TensorProto::INT64;
  case ElementType::I32:
    return onnx::TensorProto::INT32;
  default:
    return 0;
  }
}

/// Reads the ONNX model file `path` into `model`.
static llvm::Error readModel(llvm::StringRef path, onnx::ModelProto &model) {
  std::ifstream in(path.str(), std::ios::binary);
  if (!in)
    return failure("cannot read '" + path + "'");
  google::protobuf::io::IstreamInputStream raw(&in);
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  if (!model.ParseFromCodedStream(&coded))
    return failure("'" + path + "' is not a valid ONNX model");
  return llvm::Error::success();
}

static llvm::Error
writeWithWeights(onnx::ModelProto &model, llvm::StringRef source,
                 llvm::StringRef dest,
                 const std::vector<std::pair<std::string, Tensor>> &values);

llvm::Error mlir::amp::writeONNXWithWeights(
    llvm::StringRef source, llvm::StringRef dest,
    const std::vector<std::pair<std::string, Tensor>> &values) {
  onnx::ModelProto model;
  if (llvm::Error err = readModel(source, model))
    return err;
  return writeWithWeights(model, source, dest, values);
}

llvm::Error mlir::amp::writeONNXBytesWithWeights(
    llvm::StringRef sourceBytes, llvm::StringRef sourceName,
    llvm::StringRef dest,
    const std::vector<std::pair<std::string, Tensor>> &values) {
  onnx::ModelProto model;
  google::protobuf::io::CodedInputStream coded(
      reinterpret_cast<const uint8_t *>(sourceBytes.data()),
      static_cast<int>(std::min<size_t>(sourceBytes.size(), INT_MAX)));
  coded.SetTotalBytesLimit(INT_MAX);
  if (sourceBytes.size() > INT_MAX || !model.ParseFromCodedStream(&coded))
    return ::failure("the ONNX model stored in " + sourceName +
                   " is not valid");
  return writeWithWeights(model, sourceName, dest, values);
}

llvm::Error mlir::amp::attachONNXSource(ModuleOp module, llvm::StringRef path,
                                        llvm::ArrayRef<std::string> stripped) {
  onnx::ModelProto model;
  if (llvm::Error err = readModel(path, model))
    return err;
  llvm::StringSet<> strip;
  for (const std::string &name : stripped)
    strip.insert(name);
  for (onnx::TensorProto &tensor : *model.mutable_graph()->mutable_initializer())
    if (strip.contains(tensor.name())) {
      tensor.clear_float_data();
      tensor.clear_double_data();
      tensor.clear_int32_data();
      tensor.clear_int64_data();
      tensor.clear_raw_data();
      tensor.clear_external_data();
      tensor.set_data_location(onnx::TensorProto::DEFAULT);
    }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return ::failure("cannot serialize '" + path + "'");
  MLIRContext *context = module.getContext();
  auto type = RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                    IntegerType::get(context, 8));
  auto blob = HeapAsmResourceBlob::allocateAndCopyInferAlign(
      llvm::ArrayRef<char>(bytes.data(), bytes.size()));
  module->setAttr(kONNXSourceAttrName,
                  DenseResourceElementsAttr::get(type, "amp_onnx_source",
                                                 std::move(blob)));
  return llvm::Error::success();
}

std::optional<std::string> mlir::amp::getONNXSource(ModuleOp module) {
  auto attr =
      module->getAttrOfType<DenseResourceElementsAttr>(kONNXSourceAttrName);
  if (!attr)
    return std::nullopt;
  AsmResourceBlob *blob = attr.getRawHandle().getBlob();
  if (!blob)
    return std::nullopt;
  llvm::ArrayRef<char> data = blob->getData();
  return std::string(data.begin(), data.end());
}

static llvm::Error
writeWithWeights(onnx::ModelProto &model, llvm::StringRef source,
                 llvm::StringRef dest,
                 const std::vector<std::pair<std::string, Tensor>> &values) {
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringMap<onnx::TensorProto *> initializers;
  for (onnx::TensorProto &tensor : *graph->mutable_initializer())
    initializers[tensor.name()] = &tensor;
  for (const auto &[name, value] : values) {
    onnx::TensorProto *tensor = initializers.lookup(name);
    if (!tensor)
      return failure("'" + source + "' has no initializer '" + name + "'");
    std::vector<int64_t> dims(tensor->dims().begin(), tensor->dims().end());
    if (dims != value.shape || tensor->data_type() !=
                                   onnxDataType(value.elementType))
      return failure("initializer '" + name + "' of '" + source +
                     "' has another type or shape than the trained value");
    std::string bytes(value.bytes.begin(), value.bytes.end());
    tensor->clear_float_data();
    tensor->clear_double_data();
    tensor->clear_int32_data();
    tensor->clear_int64_data();
    tensor->clear_external_data();
    tensor->set_data_location(onnx::TensorProto::DEFAULT);
    tensor->set_raw_data(bytes);
  }
  // Inference-mode BatchNormalization and Dropout (whose training_mode
  // input goes: an absent mode means inference).
  llvm::StringSet<> dropped;
  for (onnx::NodeProto &node : *graph->mutable_node()) {
    if (!(node.domain().empty() || node.domain() == "ai.onnx"))
      continue;
    if (node.op_type() == "Dropout") {
      while (node.input_size() > 2)
        node.mutable_input()->RemoveLast();
      continue;
    }
    if (node.op_type() != "BatchNormalization")
      continue;
    auto *attrs = node.mutable_attribute();
    for (int i = attrs->size() - 1; i >= 0; --i)
      if (attrs->Get(i).name() == "training_mode")
        attrs->DeleteSubrange(i, 1);
    for (int i = 1; i < node.output_size(); ++i)
      dropped.insert(node.output(i));
    while (node.output_size() > 1)
      node.mutable_output()->RemoveLast();
  }
  auto *outputs = graph->mutable_output();
  for (int i = outputs->size() - 1; i >= 0; --i)
    if (dropped.contains(outputs->Get(i).name()))
      outputs->DeleteSubrange(i, 1);

  std::string partial = (dest + ".partial").str();
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (!out || !model.SerializeToOstream(&out) || !out.flush()) {
      llvm::sys::fs::remove(partial);
      return failure("cannot write '" + dest + "'");
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, dest)) {
    llvm::sys::fs::remove(partial);
    return failure("cannot write '" + dest + "': " + ec.message());
  }
  return llvm::Error::success();
}
