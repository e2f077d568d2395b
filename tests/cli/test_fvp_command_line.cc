// The FVPs' command line (frontend/cli/fvp_command_line.h): each parameter the CI scripts pass, as
// the options of ethosu-emu system and the QEMU command line they become; the warnings for the
// ones without a meaning here; the errors, each naming its parameter.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "emulator/isa/error.h"
#include "frontend/cli/fvp_command_line.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class FvpCommandLine : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ethosu_fvp_command_line_" + std::to_string(::getpid()));
        fs::create_directories(dir_);
        firmware_ = (dir_ / "app.elf").string();
        blob_ = (dir_ / "blob.bin").string();
        std::ofstream(firmware_) << "ELF";
        std::ofstream(blob_) << "data";
    }
    void TearDown() override { fs::remove_all(dir_); }

    FvpRun parse(std::vector<std::string> args, FvpModel model = FvpModel::EthosU55) {
        return parse_fvp_command_line(model, args);
    }
    // The error a command line gives: it must be one.
    std::string error_of(std::vector<std::string> args, FvpModel model = FvpModel::EthosU55) {
        try {
            parse(std::move(args), model);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage);
            return e.what();
        }
        ADD_FAILURE() << "no error";
        return "";
    }

    fs::path dir_;
    std::string firmware_, blob_;
};

// tensorflow/tflite-micro, tensorflow/lite/micro/testing/test_with_arm_corstone_300.sh: its FVP
// variable is word-split by the shell, so out_file's quotes reach the FVP.
TEST_F(FvpCommandLine, TfliteMicrosParameterSet) {
    const FvpRun run = parse({"-C", "ethosu.num_macs=256", "-C", "mps3_board.visualisation.disable-visualisation=1",
                              "-C", "mps3_board.telnetterminal0.start_telnet=0", "-C",
                              "mps3_board.uart0.out_file=\"-\"", "-C", "mps3_board.uart0.unbuffered_output=1", "-C",
                              "mps3_board.uart0.shutdown_on_eot=1", "--stat", firmware_});
    EXPECT_EQ(run.options.firmware, firmware_);
    EXPECT_EQ(run.options.npu, "ethos-u55-256");
    EXPECT_EQ(run.options.uart_out, "-");
    EXPECT_TRUE(run.options.shutdown_on_eot);
    EXPECT_TRUE(run.statistics);
    EXPECT_EQ(run.options.timeout, 0);
    ASSERT_EQ(run.warnings.size(), 3u);
    EXPECT_THAT(run.warnings[0], HasSubstr("mps3_board.visualisation.disable-visualisation=1 ignored: there is no"));
    EXPECT_THAT(run.warnings[1], HasSubstr("mps3_board.telnetterminal0.start_telnet=0 ignored"));
    EXPECT_THAT(run.warnings[2], HasSubstr("mps3_board.uart0.unbuffered_output=1 ignored"));
}

// pytorch/executorch, backends/arm/test/runner_utils.py (run_corstone, corstone-300-u65): a list
// of arguments, with the quotes of '-', '--fast' and the command line inside them.
TEST_F(FvpCommandLine, ExecuTorchsParameterSet) {
    const std::string cwd = dir_.string();
    const FvpRun run =
        parse({"-C",          "ethosu.num_macs=256",
               "-C",          "mps3_board.visualisation.disable-visualisation=1",
               "-C",          "mps3_board.telnetterminal0.start_telnet=0",
               "-C",          "mps3_board.uart0.out_file='-'",
               "-C",          "cpu0.semihosting-enable=1",
               "-C",          "cpu0.semihosting-stack_base=0",
               "-C",          "cpu0.semihosting-heap_limit=0",
               "-C",          "cpu0.semihosting-cwd=" + cwd,
               "-C",          "ethosu.extra_args='--fast'",
               "-C",          "cpu0.semihosting-cmd_line='executor_runner -m program.pte -o out -i i0.bin'",
               "-a",          firmware_,
               "--timelimit", "120"},
              FvpModel::EthosU65);
    EXPECT_EQ(run.options.npu, "ethos-u65-256");
    EXPECT_EQ(run.options.uart_out, "-");
    EXPECT_TRUE(run.options.semihosting);
    EXPECT_EQ(run.options.semihosting_directory, cwd);
    EXPECT_EQ(run.options.command_line, "executor_runner -m program.pte -o out -i i0.bin");
    EXPECT_EQ(run.options.timeout, 120);
    EXPECT_FALSE(run.options.shutdown_on_eot);
    ASSERT_EQ(run.warnings.size(), 5u);
    EXPECT_THAT(run.warnings[2], HasSubstr("cpu0.semihosting-stack_base=0 ignored: QEMU answers SYS_HEAPINFO"));
    EXPECT_THAT(run.warnings[3], HasSubstr("cpu0.semihosting-heap_limit=0 ignored"));
    EXPECT_THAT(run.warnings[4], HasSubstr("ethosu.extra_args='--fast' ignored: options of Arm's NPU model"));
}

struct Mapping {
    std::vector<std::string> args;  // besides -a FILE
    std::function<void(const FvpRun&)> check;
};

TEST_F(FvpCommandLine, EachParameterMapsToTheSystemsOptions) {
    const std::vector<Mapping> table = {
        {{}, [](const FvpRun& r) { EXPECT_EQ(r.options.npu, "ethos-u55-128"); }},  // the FVP's default size
        {{"-C", "ethosu.num_macs=32"}, [](const FvpRun& r) { EXPECT_EQ(r.options.npu, "ethos-u55-32"); }},
        {{"-C", "ethosu.num_macs=64"}, [](const FvpRun& r) { EXPECT_EQ(r.options.npu, "ethos-u55-64"); }},
        {{"-C", "mps3_board.uart0.out_file=uart.log"},
         [](const FvpRun& r) { EXPECT_EQ(r.options.uart_out, "uart.log"); }},
        {{"-C", "mps3_board.uart0.shutdown_tag=\"EXITTHESIM\""},
         [](const FvpRun& r) { EXPECT_EQ(r.options.shutdown_tag, "EXITTHESIM"); }},
        {{"-C", "mps3_board.uart0.shutdown_tag=releasing platform"},
         [](const FvpRun& r) { EXPECT_EQ(r.options.shutdown_tag, "releasing platform"); }},
        {{"-C", "mps3_board.uart0.shutdown_on_eot=true"},
         [](const FvpRun& r) { EXPECT_TRUE(r.options.shutdown_on_eot); }},
        {{"-C", "cpu0.semihosting-enable=0"}, [](const FvpRun& r) { EXPECT_FALSE(r.options.semihosting); }},
        {{"-C", "cpu0.CFGITCMSZ=14", "-C", "cpu0.CFGDTCMSZ=15"},
         [](const FvpRun& r) {
             EXPECT_EQ(r.options.itcm_size, 8u << 20);
             EXPECT_EQ(r.options.dtcm_size, 16u << 20);
         }},
        {{"-C", "cpu0.CFGITCMSZ=3"}, [](const FvpRun& r) { EXPECT_EQ(r.options.itcm_size, 4096u); }},
        {{}, [](const FvpRun& r) { EXPECT_FALSE(r.options.itcm_size || r.options.dtcm_size); }},
        {{"-Cethosu.num_macs=256", "--parameter=cpu0.semihosting-cmd_line=a,b c"},
         [](const FvpRun& r) {
             EXPECT_EQ(r.options.npu, "ethos-u55-256");
             EXPECT_EQ(r.options.command_line, "a,b c");
         }},
        {{"-T", "2.5"}, [](const FvpRun& r) { EXPECT_EQ(r.options.timeout, 2.5); }},
        {{"-q"}, [](const FvpRun& r) { EXPECT_TRUE(r.quiet); }},
        {{"--simlimit", "30"},
         [](const FvpRun& r) { EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("--simlimit 30 ignored: no limit"))); }},
        {{"-C", "mps3_board.uart1.out_file=-", "-C", "mps3_board.telnetterminal5.start_telnet=0"},
         [](const FvpRun& r) {
             EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("uart1.out_file=- ignored: only UART0 is connected"),
                                                 HasSubstr("telnetterminal5.start_telnet=0 ignored")));
         }},
        {{"-C", "mps3_board.FPGA_SRAM_SIZE=2", "--frobnicate"},
         [](const FvpRun& r) {
             EXPECT_THAT(r.warnings, ElementsAre(HasSubstr("-C mps3_board.FPGA_SRAM_SIZE=2 ignored: not a parameter"),
                                                 HasSubstr("--frobnicate ignored: not an option")));
         }},
    };
    for (const Mapping& row : table) {
        std::vector<std::string> args = row.args;
        args.insert(args.end(), {"-a", firmware_});
        SCOPED_TRACE(::testing::PrintToString(args));
        row.check(parse(args));
    }
    EXPECT_EQ(parse({"-a", firmware_}, FvpModel::EthosU65).options.npu, "ethos-u65-256");
    EXPECT_EQ(parse({"-C", "ethosu.num_macs=512", "-a", firmware_}, FvpModel::EthosU65).options.npu, "ethos-u65-512");
}

TEST_F(FvpCommandLine, ApplicationAndDataTakeTheirInstanceForms) {
    const FvpRun run = parse({"--application", "cpu0=" + firmware_, "--data", blob_ + "@0x60100000", "--data",
                              "cpu0=\"" + blob_ + "\"@1024"});
    EXPECT_EQ(run.options.firmware, firmware_);
    ASSERT_EQ(run.options.data.size(), 2u);
    EXPECT_EQ(run.options.data[0].file, blob_);
    EXPECT_EQ(run.options.data[0].address, 0x60100000u);
    EXPECT_EQ(run.options.data[1].file, blob_);
    EXPECT_EQ(run.options.data[1].address, 1024u);
    EXPECT_TRUE(run.warnings.empty());
    EXPECT_EQ(parse({"-a", "cpu0*=" + firmware_}).options.firmware, firmware_);
}

TEST_F(FvpCommandLine, ConfigFileLinesAreParameters) {
    const std::string config = (dir_ / "fvp_config.txt").string();
    std::ofstream(config) << "# Corstone-300\nethosu.num_macs = 64\n\nmps3_board.uart0.shutdown_tag=\"EXITTHESIM\"\n";
    const FvpRun run = parse({"-f", config, "-a", firmware_});
    EXPECT_EQ(run.options.npu, "ethos-u55-64");
    EXPECT_EQ(run.options.shutdown_tag, "EXITTHESIM");
    std::ofstream(config) << "ethosu.num_macs=100\n";
    EXPECT_THAT(error_of({"--config-file", config, "-a", firmware_}),
                HasSubstr(config + ":1: ethosu.num_macs: '100' MACs"));
}

TEST_F(FvpCommandLine, MalformedValuesAreErrorsNamingTheParameter) {
    const std::string missing = (dir_ / "missing.bin").string();
    const std::vector<std::pair<std::vector<std::string>, std::string>> table = {
        {{"-C", "ethosu.num_macs=100"},
         "ethosu.num_macs: '100' MACs: the FVP_Corstone_SSE-300_Ethos-U55 has 32, 64, 128, 256"},
        {{"-C", "ethosu.num_macs=many"}, "ethosu.num_macs: 'many' MACs"},
        {{"-C", "cpu0.CFGITCMSZ=2"}, "cpu0.CFGITCMSZ: '2' is not a TCM size code: 3 to 15"},
        {{"-C", "cpu0.CFGDTCMSZ=16"}, "cpu0.CFGDTCMSZ: '16' is not a TCM size code"},
        {{"-C", "mps3_board.uart0.shutdown_on_eot=yes"}, "mps3_board.uart0.shutdown_on_eot: 'yes' is not a boolean"},
        {{"-C", "cpu0.semihosting-cwd=" + missing}, "cpu0.semihosting-cwd: '" + missing + "': no such directory"},
        {{"-C", "ethosu.num_macs"}, "-C: 'ethosu.num_macs' is not INSTANCE.PARAMETER=VALUE"},
        {{"--data", blob_}, "--data: '" + blob_ + "' is not FILE@ADDRESS"},
        {{"--data", missing + "@0x60000000"}, "--data: '" + missing + "': no such file"},
        {{"--data", blob_ + "@0x100000000"}, "--data: '0x100000000' is not a 32-bit address"},
        {{"--data", blob_ + "@zero"}, "--data: 'zero' is not a 32-bit address"},
        {{"-f", dir_.string()}, "-f: '" + dir_.string() + "': cannot read the file"},
        {{"--timelimit", "soon"}, "--timelimit: 'soon' is not a number of seconds above 0"},
        {{"--timelimit", "0"}, "--timelimit: '0' is not a number of seconds above 0"},
        {{"-a", "cpu1=" + missing}, "-a: 'cpu1': this platform has one CPU, cpu0"},
        {{"-a", blob_}, "-a: a second application"},
    };
    for (const auto& [args, message] : table) {
        std::vector<std::string> line = args;
        line.insert(line.end(), {"-a", firmware_});
        SCOPED_TRACE(::testing::PrintToString(line));
        EXPECT_THAT(error_of(line), HasSubstr(message));
    }
    EXPECT_THAT(error_of({"-C", "ethosu.num_macs=128", "-a", firmware_}, FvpModel::EthosU65),
                HasSubstr("ethosu.num_macs: '128' MACs: the FVP_Corstone_SSE-300_Ethos-U65 has 256, 512"));
    EXPECT_THAT(error_of({"-a", missing}), HasSubstr("-a: '" + missing + "': no such file"));
    EXPECT_THAT(error_of({"-a", firmware_, "-C"}), HasSubstr("-C: needs a value"));
    EXPECT_THAT(error_of({"--stat"}), HasSubstr("-a: no application"));
}

TEST_F(FvpCommandLine, TheExecutablesNameSelectsTheModel) {
    EXPECT_EQ(fvp_model_named("/opt/bin/FVP_Corstone_SSE-300_Ethos-U55"), FvpModel::EthosU55);
    EXPECT_EQ(fvp_model_named("FVP_Corstone_SSE-300_Ethos-U65"), FvpModel::EthosU65);
    EXPECT_EQ(fvp_model_named("build/ethosu-emu"), std::nullopt);
    EXPECT_EQ(fvp_model_named("FVP_Corstone_SSE-320"), std::nullopt);
}

// What QEMU is given: one semihosting arg holding the whole line (commas doubled, as QEMU's option
// syntax needs), a loader device per --data, TCM sizes only when asked for.
TEST_F(FvpCommandLine, QemuArgumentsCarryTheOptions) {
    const FvpRun run = parse({"-C", "cpu0.semihosting-cmd_line=run -m a,b.pte", "-C", "cpu0.CFGDTCMSZ=11", "--data",
                              blob_ + "@0x60100000", "-a", firmware_});
    const std::vector<std::string> args = qemu_arguments(run.options, "qemu-system-arm", "/tmp/s,1/npu.sock");
    auto has = [&](const std::string& arg) { return std::find(args.begin(), args.end(), arg) != args.end(); };
    EXPECT_TRUE(has("mps3-an547,ethosu-socket=/tmp/s,,1/npu.sock,ethosu-npu=ethos-u55-128,dtcm-size=1048576"));
    EXPECT_TRUE(has("enable=on,target=native,arg=run -m a,,b.pte"));
    EXPECT_TRUE(has("loader,file=" + blob_ + ",addr=0x60100000,force-raw=on"));
    const std::vector<std::string> plain = qemu_arguments(parse({"-C", "cpu0.semihosting-enable=0", firmware_}).options,
                                                          "qemu-system-arm", "/tmp/npu.sock");
    EXPECT_EQ(std::find(plain.begin(), plain.end(), "-semihosting-config"), plain.end());
    EXPECT_EQ(std::count_if(plain.begin(), plain.end(),
                            [](const std::string& a) { return a.find("tcm-size") != std::string::npos; }),
              0);
}

}  // namespace
}  // namespace ethosu
