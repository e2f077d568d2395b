#pragma once
// TFLite's BuiltinOperator codes by name, for naming a graph's operators.

#include <cstdint>
#include <string>
#include <string_view>

namespace ethosu {

// The codes a graph runner dispatches on (TFLite schema.fbs, enum BuiltinOperator).
enum class Builtin : int32_t { Custom = 32 };

// "QUANTIZE", or "builtin operator <code>" for a code past the table.
std::string builtin_operator_name(int32_t code);

// The code of a builtin name ("QUANTIZE" -> 114), or -1.
int32_t builtin_code(std::string_view name);

}  // namespace ethosu
