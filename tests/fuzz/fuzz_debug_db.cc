// Vela debug-database reader (XML, CDATA, CSV tables) on arbitrary bytes. Only ethosu::Error
// may escape (and is caught); anything else, or a crash, is a finding.

#include <cstdint>
#include <string_view>

#include "emulator/isa/error.h"
#include "traces/debug_db.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        ethosu::DebugDatabase::parse(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.xml");
    } catch (const ethosu::Error&) {
    }
    return 0;
}
