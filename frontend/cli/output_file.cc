#include "frontend/cli/output_file.h"

#include <fstream>
#include <iostream>

#include "emulator/isa/error.h"

namespace ethosu {

void write_output_file(const std::string& path, const std::string& text, const std::string& option) {
    if (path == kStdoutPath) {
        std::cout << text << std::flush;
        return;
    }
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw Error({path, std::nullopt, option}, "cannot write file", ErrorKind::Io);
}

}  // namespace ethosu
