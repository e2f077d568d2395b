#pragma once
// The command line of Arm's Corstone-300 FVPs (FVP_Corstone_SSE-300_Ethos-U55 and -U65) read into
// the options of ethosu-emu system: the parameters CI scripts pass are mapped, the ones without a
// meaning here accepted with a warning each (docs/fvp-command-line.md lists them and their sources).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/cli/system_command.h"

namespace ethosu {

enum class FvpModel { EthosU55, EthosU65 };

// The model an executable's name (basename of argv[0]) stands for, if it is one of the FVPs'.
std::optional<FvpModel> fvp_model_named(std::string_view program);
std::string_view fvp_model_name(FvpModel model);

struct FvpRun {
    SystemRunOptions options;
    bool statistics = false;  // --stat
    bool quiet = false;       // -q: no warnings
    bool help = false, version = false, list_parameters = false;
    std::vector<std::string> warnings;  // one per parameter or option accepted without effect
};

// Reads the arguments after the program name. Throws UsageError naming the parameter or option for
// a malformed value, a missing file, an NPU size the model does not have, or no application.
FvpRun parse_fvp_command_line(FvpModel model, const std::vector<std::string>& args);

// The parameters this front end knows: name, and what it does here (for -l and --help).
std::string fvp_parameter_list();

}  // namespace ethosu
