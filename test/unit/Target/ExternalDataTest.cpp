//===- ExternalDataTest.cpp - ONNX external-data path rules ---------------===//
//
// Each attack on the external-data location (CVE-2022-25882 and its
// successors) and each malformed key/offset/length must be rejected with a
// clear message; well-formed references must read exactly the right bytes.
//
//===----------------------------------------------------------------------===//

#include "amp/Target/ONNX/ExternalData.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

using namespace mlir::amp;

namespace {

class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("amp-extdata", root));
    modelDir = (root + "/model").str();
    ASSERT_FALSE(llvm::sys::fs::create_directory(modelDir));
    writeFile(modelDir + "/weights.bin", "0123456789abcdef");
    writeFile(root.str().str() + "/secret.bin", "SECRETSECRETSECR");
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  static void writeFile(const std::string &path, const std::string &data) {
    std::ofstream out(path, std::ios::binary);
    out << data;
  }

  /// Reads `size` bytes via `ref`; returns the error text ("" on success).
  std::string read(const ExternalDataRef &ref, uint64_t size,
                   std::string *bytes = nullptr) {
    std::string buffer(size, '\0');
    llvm::Error err = readExternalData(modelDir, ref, size, buffer.data());
    if (err)
      return llvm::toString(std::move(err));
    if (bytes)
      *bytes = buffer;
    return "";
  }

  static ExternalDataRef at(std::string location, uint64_t offset = 0,
                            std::optional<uint64_t> length = std::nullopt) {
    ExternalDataRef ref;
    ref.location = std::move(location);
    ref.offset = offset;
    ref.length = length;
    return ref;
  }

  llvm::SmallString<128> root;
  std::string modelDir;
};

TEST_F(ExternalDataTest, ReadsWholeFileAndRanges) {
  std::string bytes;
  EXPECT_EQ(read(at("weights.bin"), 16, &bytes), "");
  EXPECT_EQ(bytes, "0123456789abcdef");
  EXPECT_EQ(read(at("weights.bin", 4, 6), 6, &bytes), "");
  EXPECT_EQ(bytes, "456789");
  EXPECT_EQ(read(at("weights.bin", 10), 6, &bytes), "");
  EXPECT_EQ(bytes, "abcdef");
}

// Opening checks the declared size against the file before the caller
// allocates anything: a reference to 1 TiB in a 16-byte file fails at
// open(), and a good one reads exactly once opened.
TEST_F(ExternalDataTest, OpenChecksTheSizeBeforeAnyRead) {
  llvm::Expected<OpenedExternalData> huge =
      OpenedExternalData::open(modelDir, at("weights.bin"), uint64_t(1) << 40);
  ASSERT_FALSE(static_cast<bool>(huge));
  EXPECT_NE(llvm::toString(huge.takeError())
                .find("is 16 bytes but its shape and type need 1099511627776"),
            std::string::npos);
  llvm::Expected<OpenedExternalData> past = OpenedExternalData::open(
      modelDir, at("weights.bin", uint64_t(1) << 62), 4);
  ASSERT_FALSE(static_cast<bool>(past));
  EXPECT_NE(llvm::toString(past.takeError()).find("past the end"),
            std::string::npos);
  llvm::Expected<OpenedExternalData> good =
      OpenedExternalData::open(modelDir, at("weights.bin", 2, 3), 3);
  ASSERT_TRUE(static_cast<bool>(good)) << llvm::toString(good.takeError());
  EXPECT_EQ(good->size(), 3u);
  OpenedExternalData moved = std::move(*good);
  std::string bytes(3, '\0');
  ASSERT_FALSE(static_cast<bool>(moved.readInto(bytes.data())));
  EXPECT_EQ(bytes, "234");
}

TEST_F(ExternalDataTest, ReadsFromSubfolder) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(modelDir + "/sub"));
  writeFile(modelDir + "/sub/w.bin", "abcd");
  std::string bytes;
  EXPECT_EQ(read(at("sub/w.bin"), 4, &bytes), "");
  EXPECT_EQ(bytes, "abcd");
}

TEST_F(ExternalDataTest, RejectsParentTraversal) {
  std::string message = read(at("../secret.bin"), 16);
  EXPECT_NE(message.find("contains '..'"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsNestedParentTraversal) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(modelDir + "/sub"));
  std::string message = read(at("sub/../../secret.bin"), 16);
  EXPECT_NE(message.find("contains '..'"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsAbsolutePath) {
  std::string message = read(at(root.str().str() + "/secret.bin"), 16);
  EXPECT_NE(message.find("is absolute"), std::string::npos) << message;
  message = read(at("C:/secret.bin"), 16);
  EXPECT_NE(message.find("is absolute"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsBackslashAndNul) {
  std::string message = read(at("..\\secret.bin"), 16);
  EXPECT_NE(message.find("backslash"), std::string::npos) << message;
  message = read(at(std::string("weights.bin\0x", 13)), 16);
  EXPECT_NE(message.find("NUL"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsSymlinkFile) {
  ASSERT_EQ(::symlink("weights.bin", (modelDir + "/link.bin").c_str()), 0);
  std::string message = read(at("link.bin"), 16);
  EXPECT_NE(message.find("symbolic link"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsSymlinkedFolderLeavingModelDir) {
  ASSERT_EQ(::symlink(root.c_str(), (modelDir + "/up").c_str()), 0);
  std::string message = read(at("up/secret.bin"), 16);
  EXPECT_NE(message.find("outside the model's folder"), std::string::npos)
      << message;
}

TEST_F(ExternalDataTest, RejectsHardLinkedFile) {
  ASSERT_EQ(::link((root.str().str() + "/secret.bin").c_str(),
                   (modelDir + "/hard.bin").c_str()),
            0);
  std::string message = read(at("hard.bin"), 16);
  EXPECT_NE(message.find("hard links"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsMissingFileAndFolder) {
  std::string message = read(at("missing.bin"), 4);
  EXPECT_NE(message.find("cannot open"), std::string::npos) << message;
  message = read(at("sub"), 4);
  EXPECT_FALSE(message.empty());
  ExternalDataRef ref = at("weights.bin");
  llvm::Error err = readExternalData("", ref, 4, nullptr);
  ASSERT_TRUE(static_cast<bool>(err));
  EXPECT_NE(llvm::toString(std::move(err)).find("not loaded from a file"),
            std::string::npos);
}

TEST_F(ExternalDataTest, RejectsDirectory) {
  ASSERT_FALSE(llvm::sys::fs::create_directory(modelDir + "/dir"));
  std::string message = read(at("dir"), 4);
  EXPECT_NE(message.find("not a regular file"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsOffsetPastEnd) {
  std::string message = read(at("weights.bin", 17), 1);
  EXPECT_NE(message.find("past the end"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsRangeOverflow) {
  std::string message = read(at("weights.bin", 8, UINT64_MAX), 8);
  EXPECT_NE(message.find("exceeds"), std::string::npos) << message;
  message = read(at("weights.bin", 8, 9), 9);
  EXPECT_NE(message.find("exceeds"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, RejectsSizeMismatch) {
  std::string message = read(at("weights.bin", 0, 8), 16);
  EXPECT_NE(message.find("need 16"), std::string::npos) << message;
  message = read(at("weights.bin"), 12);
  EXPECT_NE(message.find("need 12"), std::string::npos) << message;
}

TEST_F(ExternalDataTest, VerifiesChecksum) {
  ExternalDataRef ref = at("weights.bin");
  // SHA-1 of "0123456789abcdef".
  ref.checksum = "fe5567e8d769550852182cdf69d74bb16dff8e29";
  EXPECT_EQ(read(ref, 16), "");
  ref.checksum = std::string(40, '0');
  std::string message = read(ref, 16);
  EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
}

TEST(ExternalDataEntries, AcceptsKnownKeys) {
  auto ref = parseExternalDataEntries({{"location", "w.bin"},
                                       {"offset", "4096"},
                                       {"length", "16"}});
  ASSERT_TRUE(static_cast<bool>(ref)) << llvm::toString(ref.takeError());
  EXPECT_EQ(ref->location, "w.bin");
  EXPECT_EQ(ref->offset, 4096u);
  EXPECT_EQ(ref->length, std::optional<uint64_t>(16));
}

static std::string entriesError(
    llvm::ArrayRef<std::pair<std::string, std::string>> entries) {
  auto ref = parseExternalDataEntries(entries);
  if (ref)
    return "";
  return llvm::toString(ref.takeError());
}

TEST(ExternalDataEntries, RejectsUnknownKey) {
  EXPECT_NE(entriesError({{"location", "w.bin"}, {"basepath", "/"}})
                .find("unknown external_data key 'basepath'"),
            std::string::npos);
}

TEST(ExternalDataEntries, RejectsDuplicateKey) {
  EXPECT_NE(entriesError({{"location", "a"}, {"location", "b"}})
                .find("appears twice"),
            std::string::npos);
}

TEST(ExternalDataEntries, RejectsMissingLocation) {
  EXPECT_NE(entriesError({{"offset", "0"}}).find("no 'location'"),
            std::string::npos);
}

TEST(ExternalDataEntries, RejectsBadNumbers) {
  for (const char *bad : {"-1", "12abc", "", " 1", "+5", "0x10",
                          "18446744073709551616", "99999999999999999999999"})
    EXPECT_NE(entriesError({{"location", "w.bin"}, {"offset", bad}})
                  .find("not a non-negative 64-bit decimal integer"),
              std::string::npos)
        << bad;
  EXPECT_EQ(entriesError({{"location", "w.bin"},
                          {"offset", "18446744073709551615"}}),
            "");
}

TEST(ExternalDataEntries, RejectsBadChecksum) {
  EXPECT_NE(entriesError({{"location", "w.bin"}, {"checksum", "xyz"}})
                .find("SHA-1"),
            std::string::npos);
}

TEST(ParseDecimal, Boundaries) {
  EXPECT_EQ(parseDecimalU64("0"), std::optional<uint64_t>(0));
  EXPECT_EQ(parseDecimalU64("18446744073709551615"),
            std::optional<uint64_t>(UINT64_MAX));
  EXPECT_EQ(parseDecimalU64("18446744073709551616"), std::nullopt);
}

} // namespace
