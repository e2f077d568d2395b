#pragma once
// TFLite's BuiltinOperator codes by name, for naming a graph's operators.

#include <cstdint>
#include <string>

namespace ethosu {

// The codes a graph runner dispatches on (TFLite schema.fbs, enum BuiltinOperator).
enum class Builtin : int32_t { Dequantize = 6, Reshape = 22, Softmax = 25, Svdf = 27, Custom = 32, Quantize = 114 };

// "QUANTIZE", or "builtin operator <code>" for a code past the table.
std::string builtin_operator_name(int32_t code);

}  // namespace ethosu
