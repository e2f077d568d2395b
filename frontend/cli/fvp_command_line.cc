#include "frontend/cli/fvp_command_line.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>

#include "frontend/cli/manifest.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;

UsageError usage(std::string_view what, const std::string& why) {
    return UsageError({std::string(what), std::nullopt, {}}, why);
}

bool parse_bool(std::string_view parameter, std::string_view value) {
    if (value == "1" || value == "true") return true;
    if (value == "0" || value == "false") return false;
    throw usage(parameter, fmt::format("'{}' is not a boolean (0, 1, true or false)", value));
}

// A TCM size as the Cortex-M55's CFGITCMSZ/CFGDTCMSZ encode it: 2^(N-1) KiB for N in 3..15
// (4 KiB to 16 MiB); 0 (no TCM) and 1, 2 (reserved) are not sizes QEMU's machine can take.
uint64_t tcm_bytes(std::string_view parameter, std::string_view value) {
    const auto n = parse_unsigned(value);
    if (!n || *n < 3 || *n > 15)
        throw usage(parameter,
                    fmt::format("'{}' is not a TCM size code: 3 to 15 (2^(N-1) KiB, 4 KiB to 16 MiB)", value));
    return (uint64_t{1} << (*n - 1)) * 1024;
}

std::string npu_for_macs(FvpModel model, std::string_view parameter, std::string_view value) {
    const auto macs = parse_unsigned(value);
    const bool u55 = model == FvpModel::EthosU55;
    const std::vector<uint64_t> valid = u55 ? std::vector<uint64_t>{32, 64, 128, 256} : std::vector<uint64_t>{256, 512};
    if (!macs || std::find(valid.begin(), valid.end(), *macs) == valid.end())
        throw usage(parameter,
                    fmt::format("'{}' MACs: the {} has {}", value, fvp_model_name(model), fmt::join(valid, ", ")));
    return fmt::format("ethos-u{}-{}", u55 ? 55 : 65, *macs);
}

using Apply = std::function<void(FvpModel, FvpRun&, std::string_view name, std::string_view value)>;

// A parameter: its name ('#' stands for a number, as in telnetterminal#), and either what it does
// or why it is ignored here.
struct Parameter {
    std::string_view name;
    std::string_view meaning;
    Apply apply;  // empty: ignored, with `meaning` saying why
};

const std::vector<Parameter>& parameters() {
    static const std::vector<Parameter> table = {
        {"ethosu.num_macs", "the NPU configuration: ethos-u55-N (U55: 32, 64, 128, 256) or ethos-u65-N (U65: 256, 512)",
         [](FvpModel model, FvpRun& run, std::string_view name, std::string_view value) {
             run.options.npu = npu_for_macs(model, name, value);
         }},
        {"mps3_board.uart0.out_file", "UART0's output: '-' is stdout (also without this parameter), else a file",
         [](FvpModel, FvpRun& run, std::string_view, std::string_view value) { run.options.uart_out = value; }},
        {"mps3_board.uart0.shutdown_tag", "UART0 printing this text ends the run, exit status 0",
         [](FvpModel, FvpRun& run, std::string_view, std::string_view value) { run.options.shutdown_tag = value; }},
        {"mps3_board.uart0.shutdown_on_eot", "UART0 printing EOT (0x04) ends the run, exit status 0",
         [](FvpModel, FvpRun& run, std::string_view name, std::string_view value) {
             run.options.shutdown_on_eot = parse_bool(name, value);
         }},
        {"cpu0.semihosting-enable", "semihosting on (1, the default here) or off (0)",
         [](FvpModel, FvpRun& run, std::string_view name, std::string_view value) {
             run.options.semihosting = parse_bool(name, value);
         }},
        {"cpu0.semihosting-cmd_line", "what the firmware reads with SYS_GET_CMDLINE",
         [](FvpModel, FvpRun& run, std::string_view, std::string_view value) { run.options.command_line = value; }},
        {"cpu0.semihosting-cwd", "the directory semihosting opens relative paths in (QEMU runs there)",
         [](FvpModel, FvpRun& run, std::string_view name, std::string_view value) {
             if (!fs::is_directory(value)) throw usage(name, fmt::format("'{}': no such directory", value));
             run.options.semihosting_directory = value;
         }},
        {"cpu0.CFGITCMSZ", "the ITCM's size, 2^(N-1) KiB (N = 3..15), as QEMU's machine option itcm-size",
         [](FvpModel, FvpRun& run, std::string_view name, std::string_view value) {
             run.options.itcm_size = tcm_bytes(name, value);
         }},
        {"cpu0.CFGDTCMSZ", "the DTCM's size, 2^(N-1) KiB (N = 3..15), as QEMU's machine option dtcm-size",
         [](FvpModel, FvpRun& run, std::string_view name, std::string_view value) {
             run.options.dtcm_size = tcm_bytes(name, value);
         }},
        {"mps3_board.uart0.unbuffered_output", "ignored: UART0's output is always passed on as it comes", {}},
        {"mps3_board.visualisation.disable-visualisation", "ignored: there is no visualisation window", {}},
        {"mps3_board.telnetterminal#.start_telnet",
         "ignored: there are no telnet terminals (UART0 goes to stdout)",
         {}},
        {"mps3_board.telnetterminal#.quiet", "ignored: there are no telnet terminals", {}},
        {"mps3_board.uart#.out_file", "ignored: only UART0 is connected; the other UARTs' output is discarded", {}},
        {"mps3_board.uart#.unbuffered_output", "ignored: only UART0 is connected", {}},
        {"mps3_board.uart#.shutdown_tag", "ignored: only UART0 is watched", {}},
        {"mps3_board.uart#.shutdown_on_eot", "ignored: only UART0 is watched", {}},
        {"cpu0.semihosting-heap_base", "ignored: QEMU answers SYS_HEAPINFO from the memory map", {}},
        {"cpu0.semihosting-heap_limit", "ignored: QEMU answers SYS_HEAPINFO from the memory map", {}},
        {"cpu0.semihosting-stack_base", "ignored: QEMU answers SYS_HEAPINFO from the memory map", {}},
        {"cpu0.semihosting-stack_limit", "ignored: QEMU answers SYS_HEAPINFO from the memory map", {}},
        {"ethosu.extra_args",
         "ignored: options of Arm's NPU model (--fast, --pmu-trace); ethosu-emu's NPU is always "
         "bit-exact and timed",
         {}},
    };
    return table;
}

// `pattern` with '#' matching one or more digits.
bool matches(std::string_view pattern, std::string_view name) {
    while (!pattern.empty()) {
        if (pattern.front() == '#') {
            size_t digits = 0;
            while (digits < name.size() && name[digits] >= '0' && name[digits] <= '9') ++digits;
            if (digits == 0) return false;
            pattern.remove_prefix(1), name.remove_prefix(digits);
        } else {
            if (name.empty() || name.front() != pattern.front()) return false;
            pattern.remove_prefix(1), name.remove_prefix(1);
        }
    }
    return name.empty();
}

class Parser {
public:
    Parser(FvpModel model, FvpRun& run) : model_(model), run_(run) {}

    // One -C setting, "INSTANCE.PARAMETER=VALUE"; `source` names where it came from in errors.
    void set_parameter(std::string_view setting, std::string_view source) {
        const size_t equals = setting.find('=');
        if (equals == std::string_view::npos || equals == 0)
            throw usage(source, fmt::format("'{}' is not INSTANCE.PARAMETER=VALUE", setting));
        const std::string_view name = setting.substr(0, equals);
        // Scripts pass out_file="-" and cmd_line='...' with the quotes inside the argument; the
        // FVP takes the value inside them.
        const std::string_view value = without_quotes(setting.substr(equals + 1));
        for (const Parameter& parameter : parameters()) {
            if (!matches(parameter.name, name)) continue;
            if (parameter.apply) {
                parameter.apply(model_, run_, name, value);
            } else {
                run_.warnings.push_back(fmt::format("-C {} {}", setting, parameter.meaning));
            }
            return;
        }
        run_.warnings.push_back(fmt::format("-C {} ignored: not a parameter this front end knows (see -l)", setting));
    }

    // A configuration file: one INSTANCE.PARAMETER=VALUE a line, '#' comments.
    void read_config_file(std::string_view option, std::string_view path) {
        std::ifstream in{std::string(path)};
        if (!fs::is_regular_file(path) || !in) throw usage(option, fmt::format("'{}': cannot read the file", path));
        std::string line;
        for (int number = 1; std::getline(in, line); ++number) {
            const size_t first = line.find_first_not_of(" \t\r");
            if (first == std::string::npos || line[first] == '#') continue;
            const size_t last = line.find_last_not_of(" \t\r");
            std::string setting = line.substr(first, last - first + 1);
            // The files write "name = value" as often as "name=value".
            if (const size_t equals = setting.find('='); equals != std::string::npos) {
                const size_t name_end = setting.find_last_not_of(" \t", equals - 1);
                const size_t value_start = setting.find_first_not_of(" \t", equals + 1);
                setting = setting.substr(0, name_end == std::string::npos ? 0 : name_end + 1) + "=" +
                          (value_start == std::string::npos ? "" : setting.substr(value_start));
            }
            const std::string where = fmt::format("{}:{}", path, number);
            try {
                set_parameter(setting, option);
            } catch (const UsageError& e) {
                throw usage(where, e.what());
            }
        }
    }

    // "[INSTANCE=]FILE": the firmware, for cpu0 (the only CPU).
    void set_application(std::string_view option, std::string_view text) {
        std::string_view file = text;
        if (const auto instance = instance_prefix(text)) {
            if (*instance != "cpu0" && *instance != "cpu0*" && *instance != "*")
                throw usage(option, fmt::format("'{}': this platform has one CPU, cpu0", *instance));
            file = text.substr(instance->size() + 1);
        }
        file = without_quotes(file);
        if (!run_.options.firmware.empty())
            throw usage(option,
                        fmt::format("a second application '{}' (the first: '{}')", file, run_.options.firmware));
        if (!fs::is_regular_file(file)) throw usage(option, fmt::format("'{}': no such file", file));
        run_.options.firmware = file;
    }

    // "[INSTANCE=]FILE@ADDRESS": raw bytes loaded at a physical address before the firmware starts.
    void add_data(std::string_view option, std::string_view text) {
        std::string_view load = text;
        if (const auto instance = instance_prefix(text)) {
            if (*instance != "cpu0" && *instance != "cpu0*")
                run_.warnings.push_back(
                    fmt::format("{} {}: loaded where cpu0 sees the address, not through {}", option, text, *instance));
            load = text.substr(instance->size() + 1);
        }
        run_.options.data.push_back(parse_data_load(load, option));
    }

private:
    // The INSTANCE of "INSTANCE=REST", when the part before '=' is a name rather than a path.
    static std::optional<std::string_view> instance_prefix(std::string_view text) {
        const size_t equals = text.find('=');
        if (equals == std::string_view::npos || equals == 0) return std::nullopt;
        const std::string_view name = text.substr(0, equals);
        for (char c : name) {
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '*')) return std::nullopt;
        }
        return name;
    }

    FvpModel model_;
    FvpRun& run_;
};

}  // namespace

std::optional<FvpModel> fvp_model_named(std::string_view program) {
    if (const size_t slash = program.rfind('/'); slash != std::string_view::npos) program.remove_prefix(slash + 1);
    if (program == fvp_model_name(FvpModel::EthosU55)) return FvpModel::EthosU55;
    if (program == fvp_model_name(FvpModel::EthosU65)) return FvpModel::EthosU65;
    return std::nullopt;
}

std::string_view fvp_model_name(FvpModel model) {
    return model == FvpModel::EthosU55 ? "FVP_Corstone_SSE-300_Ethos-U55" : "FVP_Corstone_SSE-300_Ethos-U65";
}

std::string fvp_parameter_list() {
    std::string text;
    for (const Parameter& parameter : parameters())
        text += fmt::format("  {:<48} {}\n", parameter.name, parameter.meaning);
    return text;
}

FvpRun parse_fvp_command_line(FvpModel model, const std::vector<std::string>& args) {
    FvpRun run;
    run.options.npu = model == FvpModel::EthosU55 ? "ethos-u55-128" : "ethos-u65-256";
    Parser parser(model, run);
    // Options that take a value and are accepted without effect here.
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> ignored_with_value = {{
        {"--simlimit", "no limit on simulated time: QEMU runs until the firmware ends (use --timelimit)"},
        {"--cyclelimit", "no limit on cycles: QEMU runs until the firmware ends (use --timelimit)"},
        {"--cpulimit", "no limit on CPU time (use --timelimit, wall seconds)"},
        {"--quantum", "QEMU has no quantum"},
        {"-Q", "QEMU has no quantum"},
        {"--log", "there is no simulator log"},
        {"--output", "there are no parameter or instance lists to write"},
        {"-o", "there are no parameter or instance lists to write"},
    }};
    for (size_t i = 0; i < args.size(); ++i) {
        std::string option = args[i];
        std::optional<std::string> attached;  // --option=value
        if (option.starts_with("--")) {
            if (const size_t equals = option.find('='); equals != std::string::npos)
                attached = option.substr(equals + 1), option.resize(equals);
        } else if (option.size() > 2 && option[0] == '-' && option[1] != '-' &&
                   (option[1] == 'C' || option[1] == 'a' || option[1] == 'f')) {
            attached = option.substr(2), option.resize(2);  // -Cname=value
        }
        auto value = [&]() -> std::string {
            if (attached) return *attached;
            if (i + 1 >= args.size()) throw usage(option, "needs a value");
            return args[++i];
        };
        if (option == "-C" || option == "--parameter") {
            parser.set_parameter(value(), option);
        } else if (option == "-a" || option == "--application") {
            parser.set_application(option, value());
        } else if (option == "-f" || option == "--config-file") {
            parser.read_config_file(option, value());
        } else if (option == "--data") {
            parser.add_data(option, value());
        } else if (option == "--timelimit" || option == "-T") {
            const std::string text = value();
            double seconds = 0;
            const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
            if (error != std::errc() || end != text.data() + text.size() || !(seconds > 0))
                throw usage(option, fmt::format("'{}' is not a number of seconds above 0", text));
            run.options.timeout = seconds;
        } else if (option == "--stat") {
            run.statistics = true;
        } else if (option == "-q" || option == "--quiet") {
            run.quiet = true;
        } else if (option == "-h" || option == "--help") {
            run.help = true;
        } else if (option == "--version") {
            run.version = true;
        } else if (option == "-l" || option == "--list-params") {
            run.list_parameters = true;
        } else if (const auto* known = std::find_if(ignored_with_value.begin(), ignored_with_value.end(),
                                                    [&](const auto& entry) { return entry.first == option; });
                   known != ignored_with_value.end()) {
            run.warnings.push_back(fmt::format("{} {} ignored: {}", option, value(), known->second));
        } else if (option.starts_with("-") && option.size() > 1) {
            run.warnings.push_back(fmt::format("{} ignored: not an option this front end knows", args[i]));
        } else {
            parser.set_application("application", option);  // the FVP also takes the firmware alone
        }
    }
    if (run.options.firmware.empty() && !run.help && !run.version && !run.list_parameters)
        throw usage("-a", "no application: give the firmware ELF with -a FILE");
    return run;
}

}  // namespace ethosu
