//===- byte_size_test.cpp - --vram sizes: 6GB, 6GiB, 6000MB ---------------===//
//
// parseByteSize accepts a number with an optional decimal or binary unit, in any case,
// and rejects everything else; formatBytes prints decimal units.
//
//===----------------------------------------------------------------------===//

#include "bertc/Driver/ByteSize.h"

#include <gtest/gtest.h>

namespace {

using bertc::formatBytes;
using bertc::parseByteSize;

TEST(ByteSize, DecimalUnitsArePowersOfTen) {
  EXPECT_EQ(parseByteSize("6GB"), 6'000'000'000);
  EXPECT_EQ(parseByteSize("6000MB"), 6'000'000'000);
  EXPECT_EQ(parseByteSize("1.5GB"), 1'500'000'000);
  EXPECT_EQ(parseByteSize("2KB"), 2'000);
  EXPECT_EQ(parseByteSize("1TB"), 1'000'000'000'000);
}

TEST(ByteSize, BinaryUnitsArePowersOfTwo) {
  EXPECT_EQ(parseByteSize("6GiB"), int64_t(6) << 30);
  EXPECT_EQ(parseByteSize("2KiB"), 2048);
  EXPECT_EQ(parseByteSize("1TiB"), int64_t(1) << 40);
}

TEST(ByteSize, UnitsIgnoreCase) {
  EXPECT_EQ(parseByteSize("512mib"), int64_t(512) << 20);
  EXPECT_EQ(parseByteSize("6gb"), 6'000'000'000);
  EXPECT_EQ(parseByteSize("6Gb"), 6'000'000'000);
}

TEST(ByteSize, NoUnitMeansBytes) {
  EXPECT_EQ(parseByteSize("4096"), 4096);
  EXPECT_EQ(parseByteSize("4096B"), 4096);
  EXPECT_EQ(parseByteSize("0"), 0);
}

TEST(ByteSize, RejectsWhatIsNotASize) {
  for (const char *text : {"", "GB", "-1GB", "6XB", "1.2.3GB", ".GB", "GB6", "6 G B"})
    EXPECT_EQ(parseByteSize(text), std::nullopt) << '"' << text << '"';
}

TEST(ByteSize, RejectsOverflow) {
  EXPECT_EQ(parseByteSize("99999999999TB"), std::nullopt);
  EXPECT_EQ(parseByteSize("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(parseByteSize("9999999999TiB"), std::nullopt);
}

TEST(ByteSize, FormatsInDecimalUnits) {
  EXPECT_EQ(formatBytes(96), "96 B");
  EXPECT_EQ(formatBytes(512'000'000), "512.00 MB");
  EXPECT_EQ(formatBytes(1'234'567'890), "1.23 GB");
}

} // namespace
