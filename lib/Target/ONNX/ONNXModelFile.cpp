//===- ONNXModelFile.cpp - reading ONNX model files and buffers -----------===//
//
// The bytes of a model, from a file (streamed: a 2 GiB model is not held
// twice) or from memory, parsed with protobuf under amp's limits, then
// handed to the importer (ONNXImporter.cpp). Files that are something else
// (MLIR, zip, HDF5) and models nested deeper than protobuf's recursion limit
// get errors that say so.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/ONNXImporter.h"

#include "ONNXImporterInternal.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/MemoryBuffer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <optional>
#include <string>

#include <fcntl.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::onnx_import;
using llvm::SmallVector;
using llvm::StringRef;

/// Protobuf's nesting limit for a model whose subgraphs may nest
/// `maxSubgraphDepth` levels: each level is a NodeProto, an AttributeProto
/// and a GraphProto; the rest (ModelProto, the main graph, value infos with
/// nested sequence and map types) fits in the margin. Capped so that the
/// recursive parser and importer stay well inside the stack.
static int protobufRecursionLimit(int64_t maxSubgraphDepth) {
  constexpr int64_t kMaxDepth = 1000;
  return static_cast<int>(3 * std::clamp<int64_t>(maxSubgraphDepth, 0, kMaxDepth) + 40);
}

namespace {
/// Where a model's subgraphs nest deepest, found by walking the protobuf
/// wire format without recursion (protobuf's parser gives up on deep
/// nesting without saying so).
struct NestingProbe {
  int64_t depth = 0;
  /// The main-graph node that holds the deepest subgraph.
  std::string nodeName, opType;
};
} // namespace

static std::optional<NestingProbe> probeSubgraphNesting(StringRef bytes) {
  enum Kind { Model, Graph, Node, Attribute, Skip };
  struct Frame {
    Kind kind;
    size_t end;
    int64_t depth; // of the graph this frame is in (main graph: 0)
  };
  NestingProbe result;
  std::string topName, topOp;
  SmallVector<Frame> stack{{Model, bytes.size(), 0}};
  size_t pos = 0;
  auto readVarint = [&](uint64_t &value) {
    value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= stack.back().end)
        return false;
      uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  };
  while (!stack.empty()) {
    Frame frame = stack.back();
    if (pos == frame.end) {
      stack.pop_back();
      continue;
    }
    uint64_t tag, length;
    if (!readVarint(tag))
      return std::nullopt;
    uint64_t field = tag >> 3;
    switch (tag & 7) {
    case 0:
      if (!readVarint(length))
        return std::nullopt;
      continue;
    case 1:
    case 5: {
      size_t size = (tag & 7) == 1 ? 8 : 4;
      if (frame.end - pos < size)
        return std::nullopt;
      pos += size;
      continue;
    }
    case 2:
      break;
    default:
      return std::nullopt;
    }
    if (!readVarint(length) || length > frame.end - pos)
      return std::nullopt;
    size_t end = pos + length;
    Kind next = Skip;
    int64_t depth = frame.depth;
    if (frame.kind == Model && field == 7)
      next = Graph;
    else if (frame.kind == Graph && field == 1)
      next = Node;
    else if (frame.kind == Node && field == 5)
      next = Attribute;
    else if (frame.kind == Attribute && (field == 6 || field == 11)) {
      next = Graph;
      ++depth;
    }
    if (frame.kind == Node && frame.depth == 0 && (field == 3 || field == 4))
      (field == 3 ? topName : topOp) = bytes.substr(pos, length).str();
    if (frame.kind == Graph && frame.depth == 0 && field == 1)
      topName.clear(), topOp.clear();
    if (next == Skip) {
      pos = end;
      continue;
    }
    if (depth > result.depth) {
      result.depth = depth;
      result.nodeName = topName;
      result.opType = topOp;
    }
    stack.push_back({next, end, depth});
  }
  return result;
}

/// Recognises files that are something else than ONNX, for a clear message.
static std::optional<std::string> describeForeignFile(StringRef head) {
  if (head.empty())
    return "the file is empty";
  if (head.starts_with("ML\xEFR"))
    return "this is MLIR bytecode, not an ONNX model";
  if (head.starts_with("PK\x03\x04"))
    return "this is a zip archive (a PyTorch checkpoint?), not an ONNX model";
  if (head.starts_with("module") || head.starts_with("func.func") ||
      head.starts_with("//"))
    return "this looks like MLIR text, not an ONNX model";
  if (head.starts_with("\x89HDF"))
    return "this is an HDF5 file (a Keras model?), not an ONNX model";
  return std::nullopt;
}

/// The error for bytes protobuf could not parse as a ModelProto: deep
/// nesting when that is what stopped the parser, else damage.
static void reportUnparsable(Location loc, StringRef path, StringRef bytes,
                             const ModelLimits &limits) {
  // Too deep a nesting is the one failure that says nothing about the file
  // being damaged: find it and say so.
  std::optional<NestingProbe> nesting = probeSubgraphNesting(bytes);
  int64_t allowed = std::min<int64_t>(
      limits.maxSubgraphDepth,
      (protobufRecursionLimit(limits.maxSubgraphDepth) - 40) / 3);
  if (nesting && nesting->depth > allowed) {
    emitError(loc) << path << ": node '" << nesting->nodeName << "' (op "
                   << nesting->opType << ") nests subgraphs " << nesting->depth
                   << " levels deep, more than " << allowed
                   << " (--amp-max-subgraph-depth)";
    return;
  }
  emitError(loc) << path
                 << ": not a valid ONNX protobuf (truncated, corrupted, or "
                    "larger than protobuf's 2 GiB limit; store large weights "
                    "as external data)";
}

/// Parses `model` from `stream` with amp's limits.
static bool parseModel(google::protobuf::io::ZeroCopyInputStream &stream,
                       onnx::ModelProto &model, const ModelLimits &limits) {
  google::protobuf::io::CodedInputStream coded(&stream);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(protobufRecursionLimit(limits.maxSubgraphDepth));
  return model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

OwningOpRef<ModuleOp> mlir::amp::importONNXBuffer(
    StringRef bytes, StringRef path, MLIRContext *context,
    const ONNXImportOptions &options) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  if (auto foreign = describeForeignFile(bytes.take_front(16))) {
    emitError(loc) << path << ": " << *foreign;
    return nullptr;
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    reportUnparsable(loc, path, {}, options.limits);
    return nullptr;
  }
  onnx::ModelProto model;
  google::protobuf::io::ArrayInputStream raw(bytes.data(),
                                             static_cast<int>(bytes.size()));
  if (!parseModel(raw, model, options.limits)) {
    reportUnparsable(loc, path, bytes, options.limits);
    return nullptr;
  }
  return importModelProto(model, path, context, options);
}

OwningOpRef<ModuleOp> mlir::amp::importONNXFile(StringRef path,
                                                MLIRContext *context,
                                                const ONNXImportOptions &options) {
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    emitError(loc) << path << ": cannot open file: " << std::strerror(errno);
    return nullptr;
  }
  char head[16] = {0};
  ssize_t headSize = ::pread(fd, head, sizeof(head), 0);
  if (auto foreign =
          describeForeignFile(StringRef(head, std::max<ssize_t>(headSize, 0)))) {
    ::close(fd);
    emitError(loc) << path << ": " << *foreign;
    return nullptr;
  }

  // Streamed from the file: a model of 2 GiB is not held twice.
  onnx::ModelProto model;
  bool parsed;
  {
    google::protobuf::io::FileInputStream raw(fd);
    raw.SetCloseOnDelete(true);
    parsed = parseModel(raw, model, options.limits);
  }
  if (!parsed) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    reportUnparsable(loc, path, buffer ? (*buffer)->getBuffer() : StringRef(),
                     options.limits);
    return nullptr;
  }
  return importModelProto(model, path, context, options);
}
