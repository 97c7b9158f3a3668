//===- ONNXOpsetUpgrade.cpp - models of opsets 1-10 through ONNX's converter ===//
//
// The importer's own version rules (ONNXVersionRules.cpp) start at opset 11.
// Older models are first brought to opset 11 by ONNX's version converter
// (onnx::version_conversion::ConvertVersion, the library behind
// onnx.version_converter): it holds the reference adapters for every
// operator change from opset 1 on (BatchNormalization's spatial and
// consumed_inputs, Upsample -> Resize, Slice/Pad/TopK/Clip attributes ->
// inputs, is_test, broadcast flags, ...), so amp does not restate them.
// The converter assumes schema-valid nodes, so the model is first checked
// with ONNX's checker; both throw on bad input, and each exception becomes
// one error naming the file. Both run in a child process: the converter
// also trusts structure the checker does not check (fuzzing found a null
// dereference for a graph output no node produces), and a crash or hang
// there must be amp's clean error, not amp's crash.
//
//===----------------------------------------------------------------------===//

#include "ONNXOpsetUpgrade.h"

#include "onnx/checker.h"
#include "onnx/version_converter/convert.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"

#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir::amp;

static llvm::Error upgradeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 message.str());
}

/// True if any tensor of `graph` or its subgraphs keeps its data in a file.
static bool hasExternalData(const onnx::GraphProto &graph) {
  for (const onnx::TensorProto &tensor : graph.initializer())
    if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
      return true;
  for (const onnx::NodeProto &node : graph.node())
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_t() &&
          attr.t().data_location() == onnx::TensorProto::EXTERNAL)
        return true;
      for (const onnx::TensorProto &tensor : attr.tensors())
        if (tensor.data_location() == onnx::TensorProto::EXTERNAL)
          return true;
      if (attr.has_g() && hasExternalData(attr.g()))
        return true;
      for (const onnx::GraphProto &g : attr.graphs())
        if (hasExternalData(g))
          return true;
    }
  return false;
}

/// The first node of `graph` or its subgraphs whose ONNX conversion is not
/// faithful: Scan before opset 9 carries a batch axis, and the converter's
/// Scan 8 -> 9 adapter only strips it from the declared shapes (right for a
/// batch of one, silently wrong for any other).
static const onnx::NodeProto *findUnfaithful(const onnx::GraphProto &graph,
                                             int64_t opset) {
  for (const onnx::NodeProto &node : graph.node()) {
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && node.op_type() == "Scan" && opset < 9)
      return &node;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.has_g())
        if (const onnx::NodeProto *found = findUnfaithful(attr.g(), opset))
          return found;
      for (const onnx::GraphProto &g : attr.graphs())
        if (const onnx::NodeProto *found = findUnfaithful(g, opset))
          return found;
    }
  }
  return nullptr;
}

/// The float values of constant `name` (an initializer or a Constant node's
/// tensor of `graph`), or std::nullopt.
static std::optional<std::vector<float>>
constantFloats(const onnx::GraphProto &graph, const std::string &name) {
  const onnx::TensorProto *tensor = nullptr;
  for (const onnx::TensorProto &t : graph.initializer())
    if (t.name() == name)
      tensor = &t;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1 &&
        node.output(0) == name)
      for (const onnx::AttributeProto &attr : node.attribute())
        if (attr.name() == "value" && attr.has_t())
          tensor = &attr.t();
  if (!tensor || tensor->data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  std::vector<float> values(tensor->float_data().begin(),
                            tensor->float_data().end());
  if (tensor->has_raw_data()) {
    const std::string &raw = tensor->raw_data();
    if (raw.size() % sizeof(float) != 0)
      return std::nullopt;
    values.resize(raw.size() / sizeof(float));
    std::memcpy(values.data(), raw.data(), raw.size());
  }
  return values;
}

/// Repairs what ONNX 1.12's converter gets wrong for opsets below 11.
///
/// Resize before opset 11 (and Upsample, which the converter turns into it)
/// maps output x to input x / scale (ONNX's "asymmetric") and, in nearest
/// mode, takes the input below when upsampling and above when downsampling
/// (onnxruntime's rule for these opsets, matching ONNX's Upsample tests).
/// The converter's Resize 10 -> 11 adapter leaves Resize-11's defaults
/// (half_pixel, round_prefer_floor) in place, which moves linear samples
/// and some nearest ones; this restores the old meaning.
///
/// Also: the converter's Reshape 4 -> 5 adapter makes the new shape input a
/// Constant without dims (a rank-0 tensor holding the whole shape); a shape
/// must be 1-D, so such a Constant gets its one dimension back.
static llvm::Error repairConvertedGraph(onnx::GraphProto &graph) {
  for (onnx::NodeProto &node : *graph.mutable_node()) {
    for (onnx::AttributeProto &attr : *node.mutable_attribute()) {
      if (attr.has_g())
        if (llvm::Error e = repairConvertedGraph(*attr.mutable_g()))
          return e;
      for (onnx::GraphProto &g : *attr.mutable_graphs())
        if (llvm::Error e = repairConvertedGraph(g))
          return e;
    }
    bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";
    if (defaultDomain && node.op_type() == "Reshape" && node.input_size() == 2)
      for (onnx::NodeProto &producer : *graph.mutable_node())
        if (producer.op_type() == "Constant" && producer.output_size() == 1 &&
            producer.output(0) == node.input(1))
          for (onnx::AttributeProto &attr : *producer.mutable_attribute())
            if (attr.name() == "value" && attr.has_t() &&
                attr.t().dims_size() == 0 &&
                attr.t().data_type() == onnx::TensorProto::INT64 &&
                !attr.t().has_raw_data())
              attr.mutable_t()->add_dims(attr.t().int64_data_size());
    if (!defaultDomain || node.op_type() != "Resize")
      continue;
    std::string mode = "nearest";
    bool hasCoordinateMode = false, hasNearestMode = false;
    for (const onnx::AttributeProto &attr : node.attribute()) {
      if (attr.name() == "mode")
        mode = attr.s();
      hasCoordinateMode |= attr.name() == "coordinate_transformation_mode";
      hasNearestMode |= attr.name() == "nearest_mode";
    }
    if (!hasCoordinateMode) {
      onnx::AttributeProto *attr = node.add_attribute();
      attr->set_name("coordinate_transformation_mode");
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s("asymmetric");
    }
    if (mode != "nearest" || hasNearestMode)
      continue;
    std::string nodeName =
        node.name().empty() ? std::string("an unnamed node")
                            : "node '" + node.name() + "'";
    std::optional<std::vector<float>> scales;
    if (node.input_size() >= 3)
      scales = constantFloats(graph, node.input(2));
    if (!scales)
      return upgradeError(
          nodeName + " (op Upsample or Resize before opset 11, nearest "
          "mode): the scales are not a constant, so amp cannot tell "
          "upsampling (scales >= 1, rounded down) from downsampling (scales "
          "<= 1, rounded up)");
    bool up = llvm::all_of(*scales, [](float s) { return s >= 1.0f; });
    bool down = llvm::all_of(*scales, [](float s) { return s <= 1.0f; });
    if (!up && !down)
      return upgradeError(
          nodeName + " (op Upsample or Resize before opset 11, nearest "
          "mode): scales both above and below 1 have no opset-11 form (the "
          "old rounding differs per direction)");
    onnx::AttributeProto *attr = node.add_attribute();
    attr->set_name("nearest_mode");
    attr->set_type(onnx::AttributeProto::STRING);
    attr->set_s(up ? "floor" : "ceil");
  }
  return llvm::Error::success();
}

/// An exception's text as printable ASCII (it may quote node names and
/// other bytes of the untrusted model).
static std::string printable(const char *text) {
  std::string result;
  for (const char *c = text; *c; ++c) {
    unsigned char byte = static_cast<unsigned char>(*c);
    if (byte == '\n') {
      result += ' ';
    } else if (byte < 0x20 || byte >= 0x7f) {
      result += "\\x";
      result += llvm::hexdigit(byte >> 4, /*LowerCase=*/true);
      result += llvm::hexdigit(byte & 15, /*LowerCase=*/true);
    } else {
      result += static_cast<char>(byte);
    }
  }
  while (!result.empty() && result.back() == ' ')
    result.pop_back();
  return result;
}

/// ONNX's checker and version converter on `model`, in this process. The
/// first byte of the result says what follows: 'M' and the converted model,
/// or 'E' and the error.
static std::string checkAndConvert(const onnx::ModelProto &model, int64_t from,
                                   int64_t to) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    return "E" + ("opset " + llvm::Twine(from) +
                  " model is invalid according to ONNX's checker, so it "
                  "cannot be upgraded: " +
                  printable(e.what()))
                     .str();
  }
  try {
    onnx::ModelProto upgraded =
        onnx::version_conversion::ConvertVersion(model, static_cast<int>(to));
    std::string bytes = "M";
    if (!upgraded.AppendToString(&bytes))
      return "EONNX's version converter produced a model that cannot be "
             "serialized";
    return bytes;
  } catch (const std::exception &e) {
    return "E" + ("ONNX's version converter cannot upgrade opset " +
                  llvm::Twine(from) + " to " + llvm::Twine(to) + ": " +
                  printable(e.what()))
                     .str();
  }
}

/// Runs checkAndConvert in a child process and replaces `model` with its
/// result. ONNX's converter trusts what its checker lets through (a graph
/// output that no node produces is a null dereference in its IR builder),
/// so it runs where a crash, a hang or a runaway allocation ends the child,
/// not amp: each becomes an error.
static llvm::Error convertIsolated(onnx::ModelProto &model, int64_t from,
                                   int64_t to) {
  constexpr unsigned kTimeoutSeconds = 120;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return upgradeError("cannot run ONNX's version converter: pipe: " +
                        llvm::Twine(std::strerror(errno)));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return upgradeError("cannot run ONNX's version converter: fork: " +
                        llvm::Twine(std::strerror(errno)));
  }
  if (pid == 0) {
    // The child: convert, write the result, leave without running
    // destructors or atexit handlers of the parent's state.
    ::close(fds[0]);
    // A crash here is reported by the parent: no crash handler (LLVM's
    // stack dump, a sanitizer's report) should print it as amp's.
    for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT})
      ::signal(sig, SIG_DFL);
    ::alarm(kTimeoutSeconds);
    std::string result = checkAndConvert(model, from, to);
    const char *data = result.data();
    size_t left = result.size();
    while (left > 0) {
      ssize_t n = ::write(fds[1], data, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        ::_exit(2);
      data += n;
      left -= static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string result;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    result.append(buffer, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFSIGNALED(status))
    return upgradeError(
        "ONNX's version converter " +
        llvm::Twine(WTERMSIG(status) == SIGALRM
                        ? "took more than " + std::to_string(kTimeoutSeconds) +
                              " s"
                        : "crashed (signal " +
                              std::to_string(WTERMSIG(status)) + ")") +
        " upgrading this opset-" + llvm::Twine(from) +
        " model: it is malformed in a way ONNX's checker does not catch "
        "(for example a graph output that no node produces)");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || result.empty())
    return upgradeError("ONNX's version converter failed without a result");
  if (result[0] == 'E')
    return upgradeError(llvm::StringRef(result).drop_front());
  onnx::ModelProto upgraded;
  if (result[0] != 'M' || result.size() - 1 > static_cast<size_t>(INT_MAX) ||
      !upgraded.ParseFromArray(result.data() + 1,
                               static_cast<int>(result.size() - 1)))
    return upgradeError("ONNX's version converter returned a model that does "
                        "not parse");
  model = std::move(upgraded);
  return llvm::Error::success();
}

llvm::Error mlir::amp::onnx_upgrade::upgradeToOpset(onnx::ModelProto &model,
                                                    int64_t from, int64_t to) {
  // ONNX's IR (onnx/common/ir.h), which the converter rewrites, has no
  // place for external data: the tensors would come back empty.
  if (hasExternalData(model.graph()))
    return upgradeError(
        "opset " + llvm::Twine(from) +
        " with external data is not supported (amp upgrades opsets below " +
        llvm::Twine(to) +
        " with ONNX's version converter, which drops external data; convert "
        "with onnx.version_converter after onnx.load_model, then save the "
        "weights as external data again)");
  if (const onnx::NodeProto *node = findUnfaithful(model.graph(), from))
    return upgradeError(
        (node->name().empty() ? std::string("an unnamed node")
                              : "node '" + node->name() + "'") +
        " (op " + node->op_type() + ", opset " +
        llvm::Twine(from) +
        "): Scan before opset 9 scans a batch axis, which ONNX's version "
        "converter drops instead of converting (amp upgrades opsets below " +
        llvm::Twine(to) + " with it); export the model at opset 9 or newer");
  llvm::Error converted = convertIsolated(model, from, to);
  if (converted)
    return converted;
  return repairConvertedGraph(*model.mutable_graph());
}
