//===- HostTensor.cpp - amp-run's host tensors and tensor files -----------===//

#include "HostTensor.h"

#include "amp/Target/ONNX/ONNXImporter.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstring>

using namespace mlir;
using namespace mlir::amp_run;
using llvm::APFloat;

namespace mlir::amp_run {

size_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

std::string typeName(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      s += ", ";
    s += ShapedType::isDynamic(d) ? "?" : std::to_string(d);
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

/// numpy descr <-> element type. bf16 has no numpy type: it is read and
/// written as float32 (exact on output, rounded to nearest even on input).
static std::optional<Type> typeFromDescr(StringRef descr, MLIRContext *context) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|'))
    return std::nullopt;
  StringRef kind = descr.drop_front();
  Builder b(context);
  if (kind == "f2")
    return b.getF16Type();
  if (kind == "f4")
    return b.getF32Type();
  if (kind == "f8")
    return b.getF64Type();
  if (kind == "b1")
    return b.getI1Type();
  unsigned width;
  if (kind.size() >= 2 && !kind.drop_front().getAsInteger(10, width)) {
    if (kind[0] == 'i')
      return b.getIntegerType(width * 8);
    if (kind[0] == 'u')
      return b.getIntegerType(width * 8, /*isSigned=*/false);
  }
  return std::nullopt;
}

static std::string descrFromType(Type type) {
  if (type.isF16())
    return "<f2";
  if (type.isF32() || type.isBF16())
    return "<f4";
  if (type.isF64())
    return "<f8";
  if (type.isInteger(1))
    return "|b1";
  unsigned bytes = type.getIntOrFloatBitWidth() / 8;
  char kind = type.isUnsignedInteger() ? 'u' : 'i';
  return (bytes == 1 ? "|" : "<") + std::string(1, kind) +
         std::to_string(bytes);
}

llvm::Expected<Tensor> readNpy(StringRef path, MLIRContext *context) {
  auto fail = [&](const Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + path + "': " + why);
  };
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return fail("cannot read: " + file.getError().message());
  StringRef data = (*file)->getBuffer();
  if (!data.starts_with("\x93NUMPY") || data.size() < 10)
    return fail("not a .npy file");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) |
                   static_cast<unsigned char>(data[9]) << 8;
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return fail("truncated header");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= static_cast<size_t>(
                          static_cast<unsigned char>(data[8 + i]))
                      << (8 * i);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return fail("truncated header");
  StringRef header = data.substr(headerStart, headerLength);
  auto field = [&](StringRef key) -> StringRef {
    size_t at = header.find("'" + key.str() + "'");
    if (at == StringRef::npos)
      return {};
    StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
    return rest;
  };
  StringRef descr = field("descr");
  if (!descr.consume_front("'"))
    return fail("header has no descr");
  descr = descr.take_until([](char c) { return c == '\''; });
  if (field("fortran_order").starts_with("True"))
    return fail("Fortran-ordered arrays are not supported (save a "
                "C-contiguous array)");
  std::optional<Type> type = typeFromDescr(descr, context);
  if (!type)
    return fail("unsupported dtype '" + descr + "' (little-endian bool, "
                "int, uint and float arrays are supported)");
  StringRef shapeText = field("shape");
  if (!shapeText.consume_front("("))
    return fail("header has no shape");
  shapeText = shapeText.take_until([](char c) { return c == ')'; });
  Tensor tensor;
  tensor.elementType = *type;
  SmallVector<StringRef> parts;
  shapeText.split(parts, ',', -1, /*KeepEmpty=*/false);
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return fail("bad shape '" + shapeText + "'");
    tensor.shape.push_back(dim);
  }
  size_t needed = static_cast<size_t>(tensor.count()) * elementBytes(*type);
  StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() != needed)
    return fail("holds " + Twine(payload.size()) + " bytes of data but " +
                shapeString(tensor.shape) + " " + descr + " needs " +
                Twine(needed));
  tensor.bytes.assign(payload.begin(), payload.end());
  return tensor;
}

/// bf16 bits -> float (exact).
float bf16ToFloat(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return f;
}
/// float -> bf16 bits, round to nearest even, NaN kept.
uint16_t floatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  uint32_t rounding = 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + rounding) >> 16);
}

LogicalResult writeNpy(StringRef path, const Tensor &tensor) {
  std::string descr = descrFromType(tensor.elementType);
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string errorMessage;
  auto output = openOutputFile(path, &errorMessage);
  if (!output) {
    llvm::errs() << "error: " << errorMessage << "\n";
    return failure();
  }
  llvm::raw_ostream &os = output->os();
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  if (tensor.elementType.isBF16()) {
    for (size_t i = 0; i < tensor.bytes.size(); i += 2) {
      uint16_t bits;
      std::memcpy(&bits, tensor.bytes.data() + i, 2);
      float f = bf16ToFloat(bits);
      os.write(reinterpret_cast<const char *>(&f), 4);
    }
  } else {
    os.write(tensor.bytes.data(), tensor.bytes.size());
  }
  output->keep();
  return success();
}

llvm::Expected<Tensor> readTensorFile(StringRef path, MLIRContext *context) {
  if (path.ends_with(".npy"))
    return readNpy(path, context);
  if (path.ends_with(".pb")) {
    auto data = amp::readONNXTensorFile(path, context);
    if (!data)
      return data.takeError();
    Tensor tensor;
    tensor.elementType = data->elementType;
    tensor.shape = data->shape;
    tensor.bytes = std::move(data->bytes);
    return tensor;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "'" + path +
                                     "': unknown tensor file type (use .npy "
                                     "or an ONNX TensorProto .pb)");
}

/// Element i of a tensor as a double (for comparisons).
double elementAsDouble(const Tensor &t, int64_t i) {
  const char *p = t.bytes.data() + i * elementBytes(t.elementType);
  Type type = t.elementType;
  if (type.isF32()) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (type.isF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    APFloat f(APFloat::IEEEhalf(), APInt(16, bits));
    return f.convertToDouble();
  }
  if (type.isBF16()) {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    return bf16ToFloat(bits);
  }
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return *p ? 1 : 0;
  uint64_t raw = 0;
  std::memcpy(&raw, p, width / 8);
  if (type.isUnsignedInteger())
    return static_cast<double>(raw);
  int64_t value = static_cast<int64_t>(raw << (64 - width)) >> (64 - width);
  return static_cast<double>(value);
}

} // namespace mlir::amp_run
