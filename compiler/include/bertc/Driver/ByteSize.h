//===- ByteSize.h - sizes like 6GB, 6GiB, 6000MB -----------------*- C++ -*-===//
#pragma once

// parseByteSize, which the trainer's flags share (bertc/abi/byte_size.h).
#include "bertc/abi/byte_size.h"

#include <cstdint>
#include <string>

namespace bertc {

/// A size for people: "1.23 GB", "512.0 MB", "96 B" (decimal units, as --vram's GB).
std::string formatBytes(int64_t bytes);

} // namespace bertc
