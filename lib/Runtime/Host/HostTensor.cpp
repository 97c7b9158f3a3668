//===- HostTensor.cpp - tensors in host memory and .npy files -------------===//

#include "amp/Runtime/HostTensor.h"
#include "amp/Runtime/FloatConversion.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

using namespace amp_runtime;

size_t amp_runtime::getElementBytes(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
  case ElementType::U64:
    return 8;
  case ElementType::F32:
  case ElementType::I32:
  case ElementType::U32:
    return 4;
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::I16:
  case ElementType::U16:
    return 2;
  case ElementType::Bool:
  case ElementType::I8:
  case ElementType::U8:
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ:
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2:
    return 1;
  }
  return 1;
}

bool amp_runtime::isUnsignedType(ElementType type) {
  return type == ElementType::U8 || type == ElementType::U16 ||
         type == ElementType::U32 || type == ElementType::U64 ||
         type == ElementType::U4 || type == ElementType::U2;
}

bool amp_runtime::getFloat8Kind(ElementType type, Float8Kind &kind) {
  switch (type) {
  case ElementType::F8E4M3FN:
    kind = Float8Kind::E4M3FN;
    return true;
  case ElementType::F8E4M3FNUZ:
    kind = Float8Kind::E4M3FNUZ;
    return true;
  case ElementType::F8E5M2:
    kind = Float8Kind::E5M2;
    return true;
  case ElementType::F8E5M2FNUZ:
    kind = Float8Kind::E5M2FNUZ;
    return true;
  default:
    return false;
  }
}

unsigned amp_runtime::getNarrowIntegerBits(ElementType type) {
  switch (type) {
  case ElementType::I4:
  case ElementType::U4:
    return 4;
  case ElementType::I2:
  case ElementType::U2:
    return 2;
  default:
    return 0;
  }
}

/// The value of a 4- or 2-bit integer held in the low bits of `byte`.
static int narrowIntegerValue(uint8_t byte, ElementType type) {
  unsigned bits = getNarrowIntegerBits(type);
  unsigned value = byte & ((1u << bits) - 1);
  if (!isUnsignedType(type) && (value >> (bits - 1)))
    return static_cast<int>(value) - (1 << bits);
  return static_cast<int>(value);
}

const char *amp_runtime::getElementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F64:
    return "f64";
  case ElementType::F32:
    return "f32";
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::Bool:
    return "i1";
  case ElementType::I8:
    return "i8";
  case ElementType::I16:
    return "i16";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::U8:
    return "ui8";
  case ElementType::U16:
    return "ui16";
  case ElementType::U32:
    return "ui32";
  case ElementType::U64:
    return "ui64";
  case ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ElementType::F8E4M3FNUZ:
    return "f8E4M3FNUZ";
  case ElementType::F8E5M2:
    return "f8E5M2";
  case ElementType::F8E5M2FNUZ:
    return "f8E5M2FNUZ";
  case ElementType::I4:
    return "i4";
  case ElementType::U4:
    return "ui4";
  case ElementType::I2:
    return "i2";
  case ElementType::U2:
    return "ui2";
  }
  return "?";
}

std::string amp_runtime::formatShape(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

double Tensor::getAsDouble(int64_t i) const {
  const char *p = bytes.data() + i * getElementBytes(elementType);
  auto load = [&](auto value) {
    std::memcpy(&value, p, sizeof(value));
    return value;
  };
  switch (elementType) {
  case ElementType::F64:
    return load(double());
  case ElementType::F32:
    return load(float());
  case ElementType::F16:
    return halfBitsToFloat(load(uint16_t()));
  case ElementType::BF16:
    return bfloat16BitsToFloat(load(uint16_t()));
  case ElementType::Bool:
    return *p ? 1 : 0;
  case ElementType::I8:
    return load(int8_t());
  case ElementType::I16:
    return load(int16_t());
  case ElementType::I32:
    return load(int32_t());
  case ElementType::I64:
    return static_cast<double>(load(int64_t()));
  case ElementType::U8:
    return load(uint8_t());
  case ElementType::U16:
    return load(uint16_t());
  case ElementType::U32:
    return load(uint32_t());
  case ElementType::U64:
    return static_cast<double>(load(uint64_t()));
  case ElementType::F8E4M3FN:
  case ElementType::F8E4M3FNUZ:
  case ElementType::F8E5M2:
  case ElementType::F8E5M2FNUZ: {
    Float8Kind kind;
    getFloat8Kind(elementType, kind);
    return float8BitsToDouble(load(uint8_t()), kind);
  }
  case ElementType::I4:
  case ElementType::U4:
  case ElementType::I2:
  case ElementType::U2:
    return narrowIntegerValue(load(uint8_t()), elementType);
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

/// numpy descr <-> element type. bf16 has no numpy type: it is read and
/// written as float32 (exact on output, rounded to nearest even on input).
static std::optional<ElementType> typeFromDescr(const std::string &descr) {
  if (descr.size() < 3 || (descr[0] != '<' && descr[0] != '|'))
    return std::nullopt;
  std::string kind = descr.substr(1);
  static const struct {
    const char *kind;
    ElementType type;
  } table[] = {{"f2", ElementType::F16}, {"f4", ElementType::F32},
               {"f8", ElementType::F64}, {"b1", ElementType::Bool},
               {"i1", ElementType::I8},  {"i2", ElementType::I16},
               {"i4", ElementType::I32}, {"i8", ElementType::I64},
               {"u1", ElementType::U8},  {"u2", ElementType::U16},
               {"u4", ElementType::U32}, {"u8", ElementType::U64}};
  for (const auto &entry : table)
    if (kind == entry.kind)
      return entry.type;
  return std::nullopt;
}

static std::string descrFromType(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return "<f2";
  case ElementType::F32:
  case ElementType::BF16:
    return "<f4";
  case ElementType::F64:
    return "<f8";
  case ElementType::Bool:
    return "|b1";
  default:
    break;
  }
  size_t bytes = getElementBytes(type);
  char kind = isUnsignedType(type) ? 'u' : 'i';
  return (bytes == 1 ? "|" : "<") + std::string(1, kind) +
         std::to_string(bytes);
}

bool amp_runtime::readNpy(const std::string &path, Tensor &tensor,
                          std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "'" + path + "': cannot read: " + std::strerror(errno);
    return false;
  }
  std::string data((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  if (!parseNpy(data, tensor, error)) {
    error = "'" + path + "': " + error;
    return false;
  }
  return true;
}

bool amp_runtime::parseNpy(const std::string &data, Tensor &tensor,
                           std::string &error) {
  auto fail = [&](const std::string &why) {
    error = why;
    return false;
  };
  if (data.size() < 10 || data.compare(0, 6, "\x93NUMPY") != 0)
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
      headerLength |=
          static_cast<size_t>(static_cast<unsigned char>(data[8 + i]))
          << (8 * i);
    headerStart = 12;
  }
  if (data.size() < headerStart + headerLength)
    return fail("truncated header");
  std::string header = data.substr(headerStart, headerLength);
  // The text after "'key':", spaces skipped.
  auto field = [&](const std::string &key) -> std::string {
    size_t at = header.find("'" + key + "'");
    if (at == std::string::npos)
      return {};
    size_t start = header.find_first_not_of(" :", at + key.size() + 2);
    return start == std::string::npos ? std::string() : header.substr(start);
  };
  std::string descr = field("descr");
  if (descr.empty() || descr[0] != '\'')
    return fail("header has no descr");
  descr = descr.substr(1, descr.find('\'', 1) - 1);
  if (field("fortran_order").rfind("True", 0) == 0)
    return fail("Fortran-ordered arrays are not supported (save a "
                "C-contiguous array)");
  std::optional<ElementType> type = typeFromDescr(descr);
  if (!type)
    return fail("unsupported dtype '" + descr +
                "' (little-endian bool, "
                "int, uint and float arrays are supported)");
  std::string shapeText = field("shape");
  if (shapeText.empty() || shapeText[0] != '(')
    return fail("header has no shape");
  shapeText = shapeText.substr(1, shapeText.find(')') - 1);
  tensor = Tensor();
  tensor.elementType = *type;
  size_t pos = 0;
  while (pos < shapeText.size()) {
    size_t comma = shapeText.find(',', pos);
    std::string part = shapeText.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? shapeText.size() : comma + 1;
    size_t first = part.find_first_not_of(' ');
    if (first == std::string::npos)
      continue;
    part = part.substr(first, part.find_last_not_of(' ') - first + 1);
    char *end = nullptr;
    long long dim = std::strtoll(part.c_str(), &end, 10);
    if (*end != '\0' || dim < 0)
      return fail("bad shape '" + shapeText + "'");
    tensor.shape.push_back(dim);
  }
  // The data size the shape needs, without overflowing: a huge declared
  // shape in a small file is an error, never an allocation.
  size_t payload = data.size() - headerStart - headerLength;
  constexpr unsigned __int128 kHuge = (unsigned __int128)1 << 64;
  unsigned __int128 needed = getElementBytes(*type);
  for (int64_t dim : tensor.shape) {
    needed *= static_cast<uint64_t>(dim);
    if (needed > kHuge)
      needed = kHuge; // saturates (a later 0 still makes it 0)
  }
  if (needed != payload)
    return fail("holds " + std::to_string(payload) + " bytes of data but " +
                formatShape(tensor.shape) + " " + descr + " needs " +
                (needed >= kHuge ? std::string("more than 2^64")
                                 : std::to_string(uint64_t(needed))));
  tensor.bytes.assign(data.begin() + headerStart + headerLength, data.end());
  return true;
}

ElementType amp_runtime::getCarrierType(ElementType type) {
  Float8Kind kind;
  if (type == ElementType::BF16 || getFloat8Kind(type, kind))
    return ElementType::F32;
  if (getNarrowIntegerBits(type))
    return isUnsignedType(type) ? ElementType::U8 : ElementType::I8;
  return type;
}

Tensor amp_runtime::toCarrierType(const Tensor &tensor) {
  ElementType carrier = getCarrierType(tensor.elementType);
  if (carrier == tensor.elementType)
    return tensor;
  Tensor out;
  out.elementType = carrier;
  out.shape = tensor.shape;
  int64_t count = tensor.getNumElements();
  out.bytes.resize(static_cast<size_t>(count) * getElementBytes(carrier));
  for (int64_t i = 0; i < count; ++i) {
    // Exact: every value of these types is a float32 or an int8/uint8.
    double value = tensor.getAsDouble(i);
    if (carrier == ElementType::F32) {
      float f = static_cast<float>(value);
      std::memcpy(out.bytes.data() + 4 * i, &f, 4);
    } else {
      out.bytes[i] = static_cast<char>(static_cast<int>(value));
    }
  }
  return out;
}

std::string amp_runtime::encodeNpy(const Tensor &tensor) {
  std::string shape = "(";
  for (int64_t d : tensor.shape)
    shape += std::to_string(d) + ", ";
  if (tensor.shape.size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape.size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" +
                       descrFromType(getCarrierType(tensor.elementType)) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  if (getCarrierType(tensor.elementType) == tensor.elementType) {
    out.append(tensor.bytes.data(), tensor.bytes.size());
  } else {
    Tensor carried = toCarrierType(tensor);
    out.append(carried.bytes.data(), carried.bytes.size());
  }
  return out;
}

bool amp_runtime::writeFileAtomically(const std::string &path,
                                      const std::string &contents,
                                      std::string &error) {
  std::string partial = path + ".partial";
  {
    std::ofstream os(partial, std::ios::binary | std::ios::trunc);
    if (!os) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      return false;
    }
    os.write(contents.data(), contents.size());
    if (!os.flush()) {
      error = "cannot write '" + path + "': " + std::strerror(errno);
      std::remove(partial.c_str());
      return false;
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    std::remove(partial.c_str());
    return false;
  }
  return true;
}

bool amp_runtime::writeNpy(const std::string &path, const Tensor &tensor,
                           std::string &error) {
  return writeFileAtomically(path, encodeNpy(tensor), error);
}

bool amp_runtime::convertToStorageType(const Tensor &tensor, ElementType type,
                                       Tensor &converted, std::string &error) {
  converted = Tensor();
  converted.elementType = type;
  converted.shape = tensor.shape;
  int64_t count = tensor.getNumElements();
  converted.bytes.resize(static_cast<size_t>(count));
  Float8Kind kind;
  if (getFloat8Kind(type, kind) && tensor.elementType == ElementType::F32) {
    for (int64_t i = 0; i < count; ++i)
      converted.bytes[i] = static_cast<char>(
          doubleToFloat8Bits(tensor.getAsDouble(i), kind, /*saturate=*/true));
    return true;
  }
  unsigned bits = getNarrowIntegerBits(type);
  ElementType carrier =
      isUnsignedType(type) ? ElementType::U8 : ElementType::I8;
  if (bits && tensor.elementType == carrier) {
    int low = isUnsignedType(type) ? 0 : -(1 << (bits - 1));
    int high = isUnsignedType(type) ? (1 << bits) - 1 : (1 << (bits - 1)) - 1;
    for (int64_t i = 0; i < count; ++i) {
      int value = static_cast<int>(tensor.getAsDouble(i));
      if (value < low || value > high) {
        error = "element " + std::to_string(i) + " is " +
                std::to_string(value) + ", outside the range of " +
                getElementTypeName(type) + " [" + std::to_string(low) + ", " +
                std::to_string(high) + "]";
        return false;
      }
      converted.bytes[i] = static_cast<char>(value);
    }
    return true;
  }
  error = std::string("cannot hold ") + getElementTypeName(tensor.elementType) +
          " values as " + getElementTypeName(type);
  return false;
}

Tensor amp_runtime::convertF32Tensor(const Tensor &tensor, ElementType type) {
  Tensor converted;
  converted.elementType = type;
  converted.shape = tensor.shape;
  size_t count = static_cast<size_t>(tensor.getNumElements());
  converted.bytes.resize(count * 2);
  convertFloats(reinterpret_cast<const float *>(tensor.bytes.data()),
                reinterpret_cast<uint16_t *>(converted.bytes.data()), count,
                type == ElementType::BF16 ? LowFloatKind::BF16
                                          : LowFloatKind::F16,
                /*clampToFinite=*/false);
  return converted;
}

Tensor amp_runtime::makeRandomTensor(ElementType type,
                                     const std::vector<int64_t> &shape,
                                     std::mt19937_64 &rng) {
  Tensor t;
  t.elementType = type;
  t.shape = shape;
  size_t eb = getElementBytes(type);
  int64_t count = t.getNumElements();
  t.bytes.resize(count * eb);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (int64_t i = 0; i < count; ++i) {
    char *p = t.bytes.data() + i * eb;
    if (type == ElementType::F32) {
      float v = static_cast<float>(real(rng));
      std::memcpy(p, &v, 4);
    } else if (type == ElementType::F64) {
      double v = real(rng);
      std::memcpy(p, &v, 8);
    } else if (type == ElementType::F16) {
      uint16_t bits = floatToHalfBits(static_cast<float>(real(rng)));
      std::memcpy(p, &bits, 2);
    } else if (type == ElementType::BF16) {
      uint16_t bits = floatToBFloat16Bits(static_cast<float>(real(rng)));
      std::memcpy(p, &bits, 2);
    } else if (type == ElementType::Bool) {
      *p = small(rng) % 2;
    } else if (Float8Kind kind; getFloat8Kind(type, kind)) {
      *p = static_cast<char>(
          doubleToFloat8Bits(real(rng), kind, /*saturate=*/true));
    } else if (unsigned bits = getNarrowIntegerBits(type)) {
      // [0, 10) does not fit: the non-negative values of the type.
      unsigned limit = isUnsignedType(type) ? 1u << bits : 1u << (bits - 1);
      *p = static_cast<char>(small(rng) % limit);
    } else {
      int64_t v = small(rng);
      std::memcpy(p, &v, eb);
    }
  }
  return t;
}
