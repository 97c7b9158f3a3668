//===- ONNXTensors.cpp - ONNX types and tensors to MLIR -------------------===//

#include "ONNXTensors.h"

#include "amp/Target/ONNX/ExternalData.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "amp/Target/ONNX/ONNXImporter.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <climits>
#include <cstring>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::onnx_import;

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

Type onnx_import::convertElementType(MLIRContext *context, int32_t dataType) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto::INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  // Storage types (numbers of the ONNX versions after Debian's schema).
  case 17: // FLOAT8E4M3FN
    return b.getFloat8E4M3FNType();
  case 18: // FLOAT8E4M3FNUZ
    return b.getFloat8E4M3FNUZType();
  case 19: // FLOAT8E5M2
    return b.getFloat8E5M2Type();
  case 20: // FLOAT8E5M2FNUZ
    return b.getFloat8E5M2FNUZType();
  case 21: // UINT4
    return b.getIntegerType(4, false);
  case 22: // INT4
    return b.getIntegerType(4);
  case 25: // UINT2
    return b.getIntegerType(2, false);
  case 26: // INT2
    return b.getIntegerType(2);
  default:
    // FLOAT4E2M1 (23) and FLOAT8E8M0 (24) have no MLIR type in LLVM 19.
    return nullptr;
  }
}

int32_t onnx_import::toOnnxDataType(Type type) {
  static constexpr int32_t kLastDataType = 26;
  for (int32_t dataType = 1; dataType <= kLastDataType; ++dataType)
    if (Type known = convertElementType(type.getContext(), dataType))
      if (known == type)
        return dataType;
  return 0;
}

/// Bits of a 4- or 2-bit integer type (0 for the others): ONNX packs them,
/// low bits first; amp holds one per byte.
static unsigned packedBits(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    if (integer.getWidth() == 2 || integer.getWidth() == 4)
      return integer.getWidth();
  return 0;
}

std::string onnx_import::dataTypeName(int32_t dataType) {
  // Types newer than the ONNX schema Debian ships (onnx 1.12).
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1", "FLOAT8E8M0",
      "UINT2",        "INT2"};
  if (dataType >= 17 && dataType < 17 + static_cast<int32_t>(std::size(newer)))
    return newer[dataType - 17];
  if (onnx::TensorProto_DataType_IsValid(dataType))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(dataType));
  return "data type " + std::to_string(dataType);
}

/// Bytes per element of the storage amp uses (i1, i2 and i4 take one).
size_t onnx_import::storageBytes(Type type) {
  return std::max<unsigned>(1, type.getIntOrFloatBitWidth() / 8);
}

/// Element count of `dims`, or an error on negative sizes or overflow.
static llvm::Expected<uint64_t> elementCount(llvm::ArrayRef<int64_t> dims) {
  uint64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0)
      return error("negative dimension " + llvm::Twine(d));
    if (d != 0 && count > UINT64_MAX / static_cast<uint64_t>(d))
      return error("element count overflows 64 bits");
    count *= static_cast<uint64_t>(d);
  }
  return count;
}

llvm::Error onnx_import::checkTensorSize(llvm::StringRef what,
                                         uint64_t count, uint64_t elementBytes,
                                         const ModelLimits &limits) {
  if (count > static_cast<uint64_t>(limits.maxTensorElements))
    return error(what + " has " + llvm::Twine(count) +
                 " elements, more than the largest tensor amp accepts (" +
                 llvm::Twine(limits.maxTensorElements) +
                 " elements; --amp-max-tensor-elements)");
  if (count > static_cast<uint64_t>(limits.maxTensorBytes) / elementBytes)
    return error(what + " takes " +
                 (count > UINT64_MAX / elementBytes
                      ? std::string("more than 2^64")
                      : std::to_string(count * elementBytes)) +
                 " bytes, more than the largest tensor amp accepts (" +
                 llvm::Twine(limits.maxTensorBytes) +
                 " bytes; --amp-max-tensor-bytes)");
  return llvm::Error::success();
}

/// Copies typed-field values (ONNX stores small types widened) into
/// little-endian storage of `elementType`.
template <typename Field>
static void packTyped(const Field &field, Type elementType, char *out) {
  size_t bytes = storageBytes(elementType);
  for (int i = 0, e = field.size(); i < e; ++i) {
    auto value = field.Get(i);
    if (elementType.isF32()) {
      float f = static_cast<float>(value);
      std::memcpy(out + i * 4, &f, 4);
    } else if (elementType.isF64()) {
      double d = static_cast<double>(value);
      std::memcpy(out + i * 8, &d, 8);
    } else {
      // Integers, bool and the 16-bit float bit patterns: truncate.
      uint64_t bits = static_cast<uint64_t>(value);
      std::memcpy(out + i * bytes, &bits, bytes);
    }
  }
}

/// Number of values in the typed field that holds `elementType`.
static int64_t typedFieldSize(const onnx::TensorProto &t,
                                             Type elementType) {
  if (elementType.isF32())
    return t.float_data_size();
  if (elementType.isF64())
    return t.double_data_size();
  if (elementType.isInteger(64) && !elementType.isUnsignedInteger())
    return t.int64_data_size();
  if (elementType.isUnsignedInteger(32) || elementType.isUnsignedInteger(64))
    return t.uint64_data_size();
  return t.int32_data_size();
}

static void packTypedField(const onnx::TensorProto &t, Type elementType,
                           char *out) {
  if (elementType.isF32())
    packTyped(t.float_data(), elementType, out);
  else if (elementType.isF64())
    packTyped(t.double_data(), elementType, out);
  else if (elementType.isInteger(64) && !elementType.isUnsignedInteger())
    packTyped(t.int64_data(), elementType, out);
  else if (elementType.isUnsignedInteger(32) ||
           elementType.isUnsignedInteger(64))
    packTyped(t.uint64_data(), elementType, out);
  else
    packTyped(t.int32_data(), elementType, out);
}

/// Builds a dense attribute from little-endian bytes.
static ElementsAttr denseFromBytes(RankedTensorType type,
                                   llvm::ArrayRef<char> bytes) {
  if (type.getElementType().isInteger(1)) {
    llvm::SmallVector<bool> values;
    for (char c : bytes)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  bool isSplat = false;
  if (DenseElementsAttr::isValidRawBuffer(type, bytes, isSplat))
    return DenseElementsAttr::getFromRawBuffer(type, bytes);
  return nullptr;
}

llvm::Expected<ElementsAttr>
onnx_import::convertTensor(MLIRContext *context, onnx::TensorProto &tensor,
                           llvm::StringRef modelDir, int64_t denseElementsLimit,
                           const ModelLimits &limits, bool inlineSplats) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType)
    return error("tensor '" + tensor.name() + "' has unsupported element "
                 "type " + dataTypeName(tensor.data_type()));
  llvm::SmallVector<int64_t> dims(tensor.dims().begin(), tensor.dims().end());
  auto count = elementCount(dims);
  if (!count)
    return error("tensor '" + tensor.name() +
                 "': " + llvm::toString(count.takeError()));
  size_t elementBytes = storageBytes(elementType);
  if (llvm::Error err = checkTensorSize("tensor '" + tensor.name() + "'",
                                        *count, elementBytes, limits))
    return std::move(err);
  uint64_t byteSize = *count * elementBytes;
  // What the file holds: 4- and 2-bit integers packed, low bits first.
  unsigned bits = packedBits(elementType);
  uint64_t fileBytes = bits ? (*count * bits + 7) / 8 : byteSize;
  auto type = RankedTensorType::get(dims, elementType);
  bool useResource = static_cast<int64_t>(*count) > denseElementsLimit &&
                     !elementType.isInteger(1);
  auto sizeMismatch = [&](uint64_t have, llvm::StringRef unit) {
    return error("tensor '" + tensor.name() + "' holds " + llvm::Twine(have) +
                 " " + unit + " but its shape and type need " +
                 llvm::Twine(unit == "bytes" || bits ? fileBytes : *count));
  };

  // Where the bytes come from: external file, raw_data, or a typed field.
  std::optional<AsmResourceBlob> blob;
  std::string packed;
  llvm::ArrayRef<char> bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    llvm::SmallVector<std::pair<std::string, std::string>> entries;
    for (const auto &entry : tensor.external_data())
      entries.emplace_back(entry.key(), entry.value());
    auto ref = parseExternalDataEntries(entries);
    if (!ref)
      return error("tensor '" + tensor.name() +
                   "': " + llvm::toString(ref.takeError()));
    // The file must show that it holds the declared bytes before they
    // are allocated: a small model may declare terabytes.
    llvm::Expected<OpenedExternalData> opened =
        OpenedExternalData::open(modelDir, *ref, fileBytes);
    if (!opened)
      return error("tensor '" + tensor.name() +
                   "': " + llvm::toString(opened.takeError()));
    blob = HeapAsmResourceBlob::allocate(fileBytes, alignof(uint64_t));
    if (llvm::Error err = opened->readInto(blob->getMutableData().data()))
      return error("tensor '" + tensor.name() +
                   "': " + llvm::toString(std::move(err)));
    bytes = blob->getData();
  } else if (tensor.has_raw_data()) {
    if (tensor.raw_data().size() != fileBytes)
      return sizeMismatch(tensor.raw_data().size(), "bytes");
    if (useResource && !bits) {
      // Take ownership of the proto's string: no copy of the weights.
      std::string *raw = tensor.release_raw_data();
      llvm::ArrayRef<char> data(raw->data(), raw->size());
      if (reinterpret_cast<uintptr_t>(raw->data()) % alignof(uint64_t) == 0) {
        blob = AsmResourceBlob(
            data, alignof(uint64_t),
            [raw](void *, size_t, size_t) { delete raw; },
            /*dataIsMutable=*/false);
      } else {
        blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
            data, alignof(uint64_t));
        delete raw;
      }
      bytes = blob->getData();
    } else {
      bytes = llvm::ArrayRef<char>(tensor.raw_data().data(),
                                   tensor.raw_data().size());
    }
  } else {
    // Packed 4- and 2-bit integers: one packed byte per value.
    int64_t have = typedFieldSize(tensor, elementType);
    if (static_cast<uint64_t>(have) != (bits ? fileBytes : *count))
      return sizeMismatch(have, "values");
    packed.resize(fileBytes);
    packTypedField(tensor, elementType, packed.data());
    bytes = llvm::ArrayRef<char>(packed.data(), packed.size());
  }
  std::string unpacked;
  if (bits) {
    unpacked.resize(*count);
    bool isSigned = !elementType.isUnsignedInteger();
    unsigned perByte = 8 / bits, mask = (1u << bits) - 1;
    for (uint64_t i = 0; i < *count; ++i) {
      unsigned value =
          (static_cast<uint8_t>(bytes[i / perByte]) >> (bits * (i % perByte))) &
          mask;
      int extended = isSigned && (value >> (bits - 1))
                         ? static_cast<int>(value) - (1 << bits)
                         : static_cast<int>(value);
      unpacked[i] = static_cast<char>(extended);
    }
    bytes = llvm::ArrayRef<char>(unpacked.data(), unpacked.size());
    blob.reset();
  }

  if (useResource && inlineSplats && !bytes.empty()) {
    bool splat = true;
    for (size_t i = elementBytes; splat && i < bytes.size(); i += elementBytes)
      splat = std::memcmp(bytes.data(), bytes.data() + i, elementBytes) == 0;
    if (splat) {
      bytes = bytes.take_front(elementBytes);
      useResource = false;
    }
  }
  if (!useResource) {
    ElementsAttr attr = denseFromBytes(type, bytes);
    if (!attr)
      return error("tensor '" + tensor.name() + "' has malformed data");
    return attr;
  }
  if (!blob)
    blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes,
                                                         alignof(uint64_t));
  auto &manager = DenseResourceElementsHandle::getManagerInterface(context);
  DenseResourceElementsHandle handle =
      manager.insert(getWeightResourceKey(tensor.name()), std::move(*blob));
  return cast<ElementsAttr>(DenseResourceElementsAttr::get(type, handle));
}

llvm::Expected<ONNXTensorData>
mlir::amp::readONNXTensorFile(llvm::StringRef path, MLIRContext *context,
                              const ModelLimits &limits) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return error("cannot read '" + path.str() +
                 "': " + file.getError().message());
  return readONNXTensorBuffer((*file)->getBuffer(), path, context, limits);
}

llvm::Expected<ONNXTensorData>
mlir::amp::readONNXTensorBuffer(llvm::StringRef bytes, llvm::StringRef path,
                                MLIRContext *context,
                                const ModelLimits &limits) {
  onnx::TensorProto tensor;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return error("'" + path.str() + "' is not a serialized ONNX TensorProto");
  ONNXTensorData data;
  data.name = tensor.name();
  auto attr = convertTensor(context, tensor,
                            llvm::sys::path::parent_path(path), 0, limits);
  if (!attr)
    return error("'" + path.str() + "': " + llvm::toString(attr.takeError()));
  auto type = cast<ShapedType>(attr->getType());
  data.elementType = type.getElementType();
  data.shape.assign(type.getShape().begin(), type.getShape().end());
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(*attr)) {
    llvm::ArrayRef<char> bytes = resource.getRawHandle().getBlob()->getData();
    data.bytes.assign(bytes.begin(), bytes.end());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(*attr)) {
    if (data.elementType.isInteger(1)) {
      for (bool v : dense.getValues<bool>())
        data.bytes.push_back(v ? 1 : 0);
    } else {
      llvm::ArrayRef<char> raw = dense.getRawData();
      size_t elementBytes = storageBytes(data.elementType);
      size_t count = static_cast<size_t>(type.getNumElements());
      if (dense.isSplat()) {
        for (size_t i = 0; i < count; ++i)
          data.bytes.insert(data.bytes.end(), raw.begin(),
                            raw.begin() + elementBytes);
      } else {
        data.bytes.assign(raw.begin(), raw.end());
      }
    }
  }
  return data;
}
