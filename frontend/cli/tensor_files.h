#pragma once
// The CLI's tensor files: a model input or output as raw bytes (the format of the corpus's
// golden files), or as a numpy .npy array when the file name ends in ".npy". An .npy must hold
// the tensor's element type and shape, or a shape that differs only in dimensions of 1
// (same_element_order); anything else is an Error naming the file.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "frontend/loaders/model.h"

namespace ethosu {

bool is_npy_path(const std::string& path);

// Which tensor a file holds, for errors: a model input (--input) or an expected output (--expect).
enum class TensorFileRole { Input, ExpectedOutput };

// The bytes of input or output `index` (tensor `t`) from `path`: a raw file up to the tensor's
// size, or an .npy of its type and shape.
std::vector<uint8_t> read_tensor_file(const std::string& path, const TensorInfo& t, size_t index,
                                      TensorFileRole role = TensorFileRole::Input);

// Writes an output's bytes to `path`, raw or (".npy") as an array of its type and shape.
void write_tensor_file(const std::string& path, const TensorInfo& t, std::span<const uint8_t> bytes);

}  // namespace ethosu
