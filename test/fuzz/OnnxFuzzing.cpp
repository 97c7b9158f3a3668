//===- OnnxFuzzing.cpp - shared parts of the ONNX fuzz targets ------------===//

#include "OnnxFuzzing.h"

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "onnx/onnx_pb.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t maxSize);

using namespace mlir;

amp::ModelLimits amp_fuzz::fuzzLimits() {
  amp::ModelLimits limits;
  limits.maxTensorElements = int64_t(1) << 20;
  limits.maxTensorBytes = int64_t(16) << 20;
  limits.maxInitializerBytes = int64_t(64) << 20;
  limits.maxNodes = 10000;
  limits.maxSubgraphDepth = 16;
  limits.maxFoldBytes = int64_t(1) << 20;
  return limits;
}

amp_fuzz::FuzzContext::FuzzContext() {
  context.loadDialect<amp::AmpDialect, func::FuncDialect>();
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  handler = context.getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errorCount;
    return success();
  });
}

amp_fuzz::FuzzContext::~FuzzContext() {
  context.getDiagEngine().eraseHandler(handler);
}

OwningOpRef<ModuleOp> amp_fuzz::importChecked(FuzzContext &context,
                                              llvm::StringRef bytes) {
  amp::ONNXImportOptions options;
  options.limits = fuzzLimits();
  context.resetErrors();
  OwningOpRef<ModuleOp> module = amp::importONNXBuffer(
      bytes, "/nonexistent-amp-fuzz/model.onnx", &context.get(), options);
  if (!module) {
    // A failure must say why.
    if (context.errors() == 0)
      std::abort();
    return module;
  }
  if (failed(verify(*module)))
    std::abort();
  return module;
}

//===----------------------------------------------------------------------===//
// The structure-aware mutator
//===----------------------------------------------------------------------===//

namespace {

/// Values that break assumptions: zero, one, negative, near and beyond
/// 32-bit limits, huge.
constexpr int64_t kInterestingInts[] = {
    0,  1,  2,  3,  -1, -2, 7, 255, 256, 65535, 1 << 20,
    int64_t(1) << 31, int64_t(1) << 32, int64_t(1) << 40,
    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
constexpr float kInterestingFloats[] = {
    0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1e-8f, 65504.0f, 1e30f,
    std::numeric_limits<float>::infinity(),
    std::numeric_limits<float>::quiet_NaN()};
const char *const kStrings[] = {"",        "nearest",   "linear",
                                "cubic",   "NOTSET",    "SAME_UPPER",
                                "VALID",   "half_pixel", "asymmetric",
                                "floor",   "round_prefer_ceil", "tanh",
                                "constant", "reflect",  "edge"};
const char *const kOpTypes[] = {
    "Add",     "Relu",      "Conv",     "MatMul",   "Gemm",       "Reshape",
    "Transpose", "Concat",  "Slice",    "Gather",   "Softmax",    "Cast",
    "ReduceSum", "ReduceMean", "Expand", "Tile",    "ConstantOfShape",
    "Range",   "Resize",    "If",       "Loop",     "Scan",       "Split",
    "Squeeze", "Unsqueeze", "Pad",      "MaxPool",  "BatchNormalization",
    "LayerNormalization", "Where", "Shape", "Identity", "TopK", "Einsum",
    "ConvTranspose", "Flatten", "Upsample", "Dropout"};

class Mutator {
public:
  explicit Mutator(unsigned seed) : rng(seed) {}

  void mutate(onnx::ModelProto &model) {
    collectGraphs(*model.mutable_graph());
    onnx::GraphProto &graph = *graphs[pick(graphs.size())];
    switch (pick(10)) {
    case 0:
      mutateDims(graph);
      break;
    case 1:
    case 2:
      mutateAttribute(graph);
      break;
    case 3:
      mutateDataType(graph);
      break;
    case 4:
      mutateEdge(graph);
      break;
    case 5:
      if (graph.node_size())
        graph.mutable_node(pick(graph.node_size()))
            ->set_op_type(kOpTypes[pick(std::size(kOpTypes))]);
      break;
    case 6:
      mutateOpset(model);
      break;
    case 7:
      mutateNodeList(graph);
      break;
    case 8:
      mutateData(graph);
      break;
    default:
      addAttribute(graph);
      break;
    }
  }

private:
  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
  }
  int64_t anyInt() { return kInterestingInts[pick(std::size(kInterestingInts))]; }
  /// Mostly small values (shapes, axes), sometimes extremes.
  int64_t smallOrExtreme() {
    return pick(3) ? static_cast<int64_t>(pick(9)) - 2 : anyInt();
  }

  void collectGraphs(onnx::GraphProto &graph) {
    graphs.push_back(&graph);
    for (onnx::NodeProto &node : *graph.mutable_node())
      for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
        if (attr.has_g())
          collectGraphs(*attr.mutable_g());
        for (onnx::GraphProto &g : *attr.mutable_graphs())
          collectGraphs(g);
      }
  }

  std::vector<onnx::ValueInfoProto *> valueInfos(onnx::GraphProto &graph) {
    std::vector<onnx::ValueInfoProto *> infos;
    for (auto *list : {graph.mutable_input(), graph.mutable_output(),
                       graph.mutable_value_info()})
      for (onnx::ValueInfoProto &info : *list)
        infos.push_back(&info);
    return infos;
  }

  std::vector<std::string> valueNames(const onnx::GraphProto &graph) {
    std::vector<std::string> names;
    for (const auto &info : graph.input())
      names.push_back(info.name());
    for (const auto &tensor : graph.initializer())
      names.push_back(tensor.name());
    for (const auto &node : graph.node())
      for (const auto &output : node.output())
        names.push_back(output);
    return names;
  }

  void mutateDims(onnx::GraphProto &graph) {
    if (pick(2) && graph.initializer_size()) {
      onnx::TensorProto &tensor =
          *graph.mutable_initializer(pick(graph.initializer_size()));
      if (tensor.dims_size() && pick(4))
        tensor.set_dims(pick(tensor.dims_size()), smallOrExtreme());
      else
        tensor.add_dims(smallOrExtreme());
      return;
    }
    std::vector<onnx::ValueInfoProto *> infos = valueInfos(graph);
    if (infos.empty())
      return;
    onnx::ValueInfoProto &info = *infos[pick(infos.size())];
    auto *shape = info.mutable_type()->mutable_tensor_type()->mutable_shape();
    switch (pick(3)) {
    case 0:
      if (shape->dim_size())
        shape->mutable_dim(pick(shape->dim_size()))
            ->set_dim_value(smallOrExtreme());
      break;
    case 1:
      shape->add_dim()->set_dim_value(smallOrExtreme());
      break;
    default:
      if (shape->dim_size())
        shape->mutable_dim(pick(shape->dim_size()))->set_dim_param("N");
      break;
    }
  }

  void mutateAttribute(onnx::GraphProto &graph) {
    if (!graph.node_size())
      return;
    onnx::NodeProto &node = *graph.mutable_node(pick(graph.node_size()));
    if (!node.attribute_size())
      return addAttribute(graph);
    onnx::AttributeProto &attr =
        *node.mutable_attribute(pick(node.attribute_size()));
    switch (attr.type()) {
    case onnx::AttributeProto::INT:
      attr.set_i(pick(2) ? smallOrExtreme() : pick(30));
      break;
    case onnx::AttributeProto::INTS:
      if (attr.ints_size() && pick(3))
        attr.set_ints(pick(attr.ints_size()), smallOrExtreme());
      else if (attr.ints_size() && pick(2))
        attr.mutable_ints()->RemoveLast();
      else
        attr.add_ints(smallOrExtreme());
      break;
    case onnx::AttributeProto::FLOAT:
      attr.set_f(kInterestingFloats[pick(std::size(kInterestingFloats))]);
      break;
    case onnx::AttributeProto::FLOATS:
      if (attr.floats_size())
        attr.set_floats(pick(attr.floats_size()),
                        kInterestingFloats[pick(std::size(kInterestingFloats))]);
      else
        attr.add_floats(kInterestingFloats[pick(std::size(kInterestingFloats))]);
      break;
    case onnx::AttributeProto::STRING:
      attr.set_s(kStrings[pick(std::size(kStrings))]);
      break;
    case onnx::AttributeProto::TENSOR:
      if (attr.t().dims_size())
        attr.mutable_t()->set_dims(pick(attr.t().dims_size()),
                                   smallOrExtreme());
      else
        attr.mutable_t()->set_data_type(static_cast<int32_t>(pick(27)));
      break;
    default:
      // Change the kind: the importer must check it.
      attr.set_type(static_cast<onnx::AttributeProto::AttributeType>(pick(15)));
      break;
    }
  }

  void addAttribute(onnx::GraphProto &graph) {
    if (!graph.node_size())
      return;
    static const char *const names[] = {"axis", "axes", "perm", "to",
                                        "keepdims", "mode", "alpha",
                                        "group", "pads", "kernel_shape"};
    onnx::AttributeProto &attr =
        *graph.mutable_node(pick(graph.node_size()))->add_attribute();
    attr.set_name(names[pick(std::size(names))]);
    if (pick(2)) {
      attr.set_type(onnx::AttributeProto::INT);
      attr.set_i(smallOrExtreme());
    } else {
      attr.set_type(onnx::AttributeProto::INTS);
      for (size_t i = 0, n = pick(5); i < n; ++i)
        attr.add_ints(smallOrExtreme());
    }
  }

  void mutateDataType(onnx::GraphProto &graph) {
    int32_t type = static_cast<int32_t>(pick(27));
    switch (pick(3)) {
    case 0:
      if (graph.initializer_size())
        graph.mutable_initializer(pick(graph.initializer_size()))
            ->set_data_type(type);
      break;
    case 1: {
      std::vector<onnx::ValueInfoProto *> infos = valueInfos(graph);
      if (!infos.empty())
        infos[pick(infos.size())]
            ->mutable_type()
            ->mutable_tensor_type()
            ->set_elem_type(type);
      break;
    }
    default:
      for (onnx::NodeProto &node : *graph.mutable_node())
        for (onnx::AttributeProto &attr : *node.mutable_attribute())
          if (attr.name() == "to" && pick(2))
            attr.set_i(type);
      break;
    }
  }

  void mutateEdge(onnx::GraphProto &graph) {
    if (!graph.node_size())
      return;
    onnx::NodeProto &node = *graph.mutable_node(pick(graph.node_size()));
    std::vector<std::string> names = valueNames(graph);
    std::string name = names.empty() || !pick(5) ? std::string()
                                                 : names[pick(names.size())];
    switch (pick(4)) {
    case 0:
      if (node.input_size())
        node.set_input(pick(node.input_size()), name);
      break;
    case 1:
      node.add_input(name);
      break;
    case 2:
      if (node.input_size())
        node.mutable_input()->RemoveLast();
      break;
    default:
      if (node.output_size())
        node.set_output(pick(node.output_size()), name);
      else
        node.add_output(name);
      break;
    }
  }

  void mutateOpset(onnx::ModelProto &model) {
    for (onnx::OperatorSetIdProto &entry : *model.mutable_opset_import())
      if (entry.domain().empty() || entry.domain() == "ai.onnx")
        entry.set_version(1 + static_cast<int64_t>(pick(30)));
  }

  void mutateNodeList(onnx::GraphProto &graph) {
    int n = graph.node_size();
    if (n == 0)
      return;
    int i = static_cast<int>(pick(n));
    switch (pick(3)) {
    case 0:
      graph.mutable_node()->DeleteSubrange(i, 1);
      break;
    case 1:
      *graph.add_node() = graph.node(i);
      break;
    default:
      graph.mutable_node()->SwapElements(i, static_cast<int>(pick(n)));
      break;
    }
  }

  void mutateData(onnx::GraphProto &graph) {
    if (!graph.initializer_size())
      return;
    onnx::TensorProto &tensor =
        *graph.mutable_initializer(pick(graph.initializer_size()));
    std::string *raw = tensor.mutable_raw_data();
    switch (pick(3)) {
    case 0:
      if (!raw->empty())
        raw->resize(pick(raw->size()));
      break;
    case 1:
      raw->append(1 + pick(8), '\x7f');
      break;
    default:
      if (!raw->empty())
        (*raw)[pick(raw->size())] = static_cast<char>(pick(256));
      break;
    }
  }

  std::mt19937 rng;
  std::vector<onnx::GraphProto *> graphs;
};

} // namespace

size_t amp_fuzz::mutateModel(uint8_t *data, size_t size, size_t maxSize,
                             unsigned seed) {
  onnx::ModelProto model;
  // Sometimes a byte-level change, so that the parser's edges stay covered.
  if (seed % 8 == 0 || size > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(data, static_cast<int>(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  Mutator(seed).mutate(model);
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}
