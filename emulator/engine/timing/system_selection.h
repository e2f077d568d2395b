#pragma once
// Which of Vela's memory systems a run takes, by name (make_memory_system reads it): apart from
// system_config.h so that an interface taking a choice (NpuDevice::Options) need not include it.

#include <string>
#include <vector>

namespace ethosu {

struct SystemSelection {
    std::string system_config;  // empty: Vela's default for the generation (NpuTraits)
    std::string memory_mode;    // empty: Vela's default (NpuTraits)
    std::vector<std::string> config_files;  // extra vela.ini-format files
};

}  // namespace ethosu
