#pragma once
// The files the CLI writes its reports to (--json-style outputs, --csv, --plot): "-" is stdout.

#include <string>

namespace ethosu {

inline constexpr std::string_view kStdoutPath = "-";

// Writes text to path, or to stdout for "-". Throws ethosu::Error (Io) naming option and path.
void write_output_file(const std::string& path, const std::string& text, const std::string& option);

}  // namespace ethosu
