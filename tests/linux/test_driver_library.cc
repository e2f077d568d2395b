// The 2025 kernel interface (BUFFERS_CREATE batches, buffer read/write/lseek) and the EthosU
// driver library over it, driven as ExecuTorch's Cortex-A backend drives it: direct-drive COP2
// streams with separate I/O regions, built by the project's command-stream builder, with two
// inputs and two outputs, on ethos-u85-256 and ethos-u55-128.

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ethosu.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <uapi/ethosu.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "emulator/engine/timing/pmu.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/npu_config.h"
#include "frontend/linux/ethosu_linux.h"
#include "frontend/linux/ethosu_uapi.h"
#include "frontend/loaders/model.h"
#include "frontend/runner/run_model.h"
#include "tests/config_test_name.h"

namespace {

namespace fs = std::filesystem;
namespace up = ethosu::uapi::upstream;
using ethosu::CommandStreamBuilder;
using ethosu::isa::Cmd;
using ethosu::isa::Field;

void select_npu(const std::string& name) { ::setenv(ethosu::linux_stack::kNpuVariable, name.c_str(), 1); }

// ---- The kernel interface itself ----

class BufferBatch : public ::testing::Test {
protected:
    void SetUp() override {
        select_npu("ethos-u55-128");
        device = ::open("/dev/ethosu0", O_RDWR);
        ASSERT_GE(device, 0);
    }
    void TearDown() override { ::close(device); }

    up::BuffersCreate create(std::vector<uint64_t> sizes) {
        up::BuffersCreate request{};
        request.num = static_cast<uint32_t>(sizes.size());
        std::ranges::copy(sizes, request.sizes);
        EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), 0) << ethosu::linux_stack::last_error();
        return request;
    }
    int device = -1;
};

// ethosu_buffer_read/_write/_llseek: the file position moves within the size asked for.
TEST_F(BufferBatch, ReadWriteAndSeekAsTheKernelsBufferFile) {
    const auto batch = create({5, 16});
    const int fd = batch.fds[0];
    const char hello[] = "hello, NPU";
    EXPECT_EQ(::write(fd, hello, sizeof hello), 5);  // clipped to the buffer's 5 bytes
    errno = 0;
    EXPECT_EQ(::write(fd, hello, 1), -1);
    EXPECT_EQ(errno, ENOSPC);
    EXPECT_EQ(::lseek(fd, 0, SEEK_END), 5);  // the size; the position stays at 5
    char back[8] = {};
    EXPECT_EQ(::read(fd, back, sizeof back), 0);
    EXPECT_EQ(::lseek(fd, 1, SEEK_SET), 1);
    EXPECT_EQ(::lseek(fd, 2, SEEK_CUR), 3);
    EXPECT_EQ(::read(fd, back, sizeof back), 2);
    EXPECT_EQ(std::string(back, 2), "lo");
    EXPECT_EQ(::lseek(fd, 6, SEEK_SET), -1);
    EXPECT_EQ(errno, ENXIO);
    EXPECT_EQ(::lseek(fd, -1, SEEK_SET), -1);
    EXPECT_EQ(errno, EINVAL);
    EXPECT_EQ(::read(fd, back, 0), -1);
    EXPECT_EQ(errno, EINVAL);
    // Bytes the process cannot read: copy_from_user's EFAULT, not a crash.
    void* page = ::mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(page, MAP_FAILED);
    ::munmap(page, 4096);
    EXPECT_EQ(::lseek(fd, 0, SEEK_SET), 0);
    EXPECT_EQ(::write(fd, page, 1), -1);
    EXPECT_EQ(errno, EFAULT);
    // The neighbour is its own file: its position and bytes are untouched.
    EXPECT_EQ(::read(batch.fds[1], back, sizeof back), 8);
    EXPECT_TRUE(std::ranges::all_of(back, [](char c) { return c == 0; }));
    // No mmap on these buffers; BUFFER_CLEAR zeroes and rewinds.
    EXPECT_EQ(::mmap(nullptr, 5, PROT_READ, MAP_SHARED, fd, 0), MAP_FAILED);
    EXPECT_EQ(errno, ENODEV);
    EXPECT_EQ(::ioctl(fd, up::kIoctlBufferClear), 0);
    EXPECT_EQ(::read(fd, back, sizeof back), 5);
    EXPECT_TRUE(std::ranges::all_of(std::span(back, 5), [](char c) { return c == 0; }));
    for (const int f : {batch.fds[0], batch.fds[1]}) ::close(f);
}

TEST_F(BufferBatch, RefusesWhatTheKernelRefuses) {
    up::BuffersCreate request{};
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), -1);  // no buffers
    EXPECT_EQ(errno, EINVAL);
    request.num = ETHOSU_FD_MAX + 1;
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), -1);
    EXPECT_EQ(errno, EINVAL);
    request.num = 2;
    request.sizes[0] = 8;  // sizes[1] is 0
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), -1);
    EXPECT_EQ(errno, EINVAL);
    request.sizes[1] = uint64_t{1} << 40;  // past the direct device's 40-bit DMA mask
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), -1);
    EXPECT_EQ(errno, EINVAL);
    request.sizes[1] = uint64_t{5} << 30;  // within the mask, beyond the emulated DMA memory
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, &request), -1);
    EXPECT_EQ(errno, ENOMEM);
    EXPECT_EQ(::ioctl(device, up::kIoctlBuffersCreate, nullptr), -1);
    EXPECT_EQ(errno, EFAULT);
}

// ---- A direct-drive network as Vela's --separate-io-regions --cop-format=COP2 lays it out ----

// Two int8 5x7x3 inputs in region 3 and two outputs in region 4, each at its predecessor's end
// rounded up to 16 (the kernel's batch layout); the region-1 intermediate holds max(in0, in1):
//   scratch = MAX(in0, in1); out0 = ADD(scratch, in1); out1 = SUB(in0, in1).
constexpr int kHeight = 5, kWidth = 7, kDepth = 3;
constexpr uint32_t kTensorBytes = kHeight * kWidth * kDepth;  // 105: the second tensor sits at 112
constexpr uint32_t kSecond = (kTensorBytes + 15) / 16 * 16;
constexpr int kScratchRegion = 1, kInputRegion = 3, kOutputRegion = 4;
constexpr uint64_t kMax = 4, kAdd = 1, kSub = 2;  // elementwise_mode

struct Operand {
    int region;
    uint32_t offset;
};

void emit_elementwise(CommandStreamBuilder& b, const ethosu::NpuConfig& npu, uint64_t mode, Operand ifm,
                      Operand ifm2, Operand ofm) {
    const bool u85 = npu.generation == ethosu::Generation::U85;
    b.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, uint64_t(ifm.region)}})
        .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, ifm.offset}})
        .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
        .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, kWidth - 1}})
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, kDepth - 1}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, kWidth * kDepth}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT)
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, uint64_t(ifm2.region)}})
        .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, ifm2.offset}})
        .emit(Cmd::SET_IFM2_BASE1).emit(Cmd::SET_IFM2_BASE2).emit(Cmd::SET_IFM2_BASE3)
        .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, kWidth - 1}})
        .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, kWidth * kDepth}})
        .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM2_ZERO_POINT)
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_BROADCAST)
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, uint64_t(ofm.region)}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, ofm.offset}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, kWidth - 1}})
        .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, kWidth - 1}})
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, kDepth - 1}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, kWidth * kDepth}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_OFM_ZERO_POINT)
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}})
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, 0xFF80}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 0x7F}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, kHeight - 1}})
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, kWidth - 1}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_BLOCKDEP);
    if (u85) {
        b.emit(Cmd::SET_IFM_SCALE, {{Field::SET_IFM_SCALE__scale, 1}})
            .emit(Cmd::SET_IFM2_SCALE, {{Field::SET_IFM2_SCALE__scale, 1}})
            .emit(Cmd::SET_IFM_BROADCAST)
            .emit(Cmd::SET_ACC_FORMAT, {{Field::SET_ACC_FORMAT__microblock, 1}});  // U1X2, Vela's for 256 MACs
    } else {
        b.emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, 1}})
            .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, 1}})
            .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, 8}})
            .emit(Cmd::SET_IFM2_IB_START, {{Field::SET_IFM2_IB_START__ib_start, 8}})
            .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, 16}})
            .emit(Cmd::SET_ACC_FORMAT);
    }
    b.emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, mode}});
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<uint8_t>(v >> (8 * k)));
}

// The COP2 payload as Vela's regor writes it: header, one command-stream entry whose "VEUM"
// metadata gives CONFIG, ID and the features (bit 1: local addressing, --separate-io-regions).
std::vector<uint8_t> cop2_payload(const ethosu::NpuConfig& npu, const std::vector<uint32_t>& words) {
    constexpr uint32_t kLocalAddressing = 0x2;
    std::vector<uint8_t> metadata;
    put_u32(metadata, 0x4D554556);  // "VEUM"
    put_u32(metadata, 1);           // version 1.0
    put_u32(metadata, 16);          // data: CONFIG, ID, features, staging usage
    for (const uint32_t v : {npu.config_word, npu.id_word, kLocalAddressing, 0u}) put_u32(metadata, v);
    std::vector<uint8_t> entry;
    put_u32(entry, static_cast<uint32_t>(metadata.size()));
    entry.insert(entry.end(), metadata.begin(), metadata.end());
    for (const uint32_t w : words) put_u32(entry, w);
    std::vector<uint8_t> out;
    put_u32(out, 0x32504F43);  // "COP2"
    put_u32(out, 1);           // version 1.0
    const uint64_t actions = 8 + entry.size();
    put_u32(out, static_cast<uint32_t>(actions));
    put_u32(out, 0);
    put_u32(out, 1);  // a command-stream entry
    put_u32(out, static_cast<uint32_t>(entry.size()));
    out.insert(out.end(), entry.begin(), entry.end());
    return out;
}

// What ExecuTorch's VelaBinStream hands the backend for the delegate.
struct Handles {
    std::vector<uint8_t> cmd_data;
    std::vector<uint8_t> weight_data{0};  // the network has no weights; the block is never empty
    uint32_t scratch_data_size = kSecond;
    std::vector<size_t> input_sizes{kTensorBytes, kTensorBytes};
    std::vector<size_t> output_sizes{kTensorBytes, kTensorBytes};
};

Handles direct_drive_network(const ethosu::NpuConfig& npu) {
    CommandStreamBuilder b(npu.generation);
    emit_elementwise(b, npu, kMax, {kInputRegion, 0}, {kInputRegion, kSecond}, {kScratchRegion, 0});
    emit_elementwise(b, npu, kAdd, {kScratchRegion, 0}, {kInputRegion, kSecond}, {kOutputRegion, 0});
    emit_elementwise(b, npu, kSub, {kInputRegion, 0}, {kInputRegion, kSecond}, {kOutputRegion, kSecond});
    b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    Handles h;
    h.cmd_data = cop2_payload(npu, b.words());
    return h;
}

// The same delegate as an ExecuTorch vela_bin_stream file, for ethosu-emu run and the engine.
std::vector<uint8_t> vela_bin_stream(const Handles& h) {
    std::vector<uint8_t> out;
    auto block = [&](std::string_view name, const std::vector<uint8_t>& data) {
        std::array<uint8_t, 16> header{};
        std::ranges::copy(name, header.begin());
        out.insert(out.end(), header.begin(), header.end());
        put_u32(out, static_cast<uint32_t>(data.size()));
        out.insert(out.end(), 12, uint8_t{0});
        out.insert(out.end(), data.begin(), data.end());
        out.insert(out.end(), (16 - data.size() % 16) % 16, uint8_t{0});
    };
    auto io = [](int region) {
        std::vector<uint8_t> entries;
        put_u32(entries, 2);
        for (const uint32_t offset : {0u, kSecond}) {
            for (const int d : {1, 1, 1, kHeight, kWidth, kDepth}) put_u32(entries, static_cast<uint32_t>(d));
            put_u32(entries, 1);  // element bytes
            put_u32(entries, offset);
            put_u32(entries, static_cast<uint32_t>(region));
        }
        return entries;
    };
    std::vector<uint8_t> scratch;
    put_u32(scratch, h.scratch_data_size);
    block("vela_bin_stream", {});
    block("cmd_data", h.cmd_data);
    block("weight_data", h.weight_data);
    block("scratch_size", scratch);
    block("inputs", io(kInputRegion));
    block("outputs", io(kOutputRegion));
    block("vela_end_stream", {});
    return out;
}

struct DriverRun {
    std::vector<std::vector<uint8_t>> outputs;
    uint64_t cycles = 0;
    std::vector<uint32_t> pmu;
};

// ExecuTorch's invoke_linux_driver, call for call: a network from the command stream, the
// weights in a constant buffer and an intermediate buffer (each a batch of one, or a default
// Buffer when the size is 0), one batch of IFM buffers written with the inputs, one batch of OFM
// buffers, the inference with PMU events and the cycle counter, wait, status, cycles, outputs read.
DriverRun invoke_like_the_backend(EthosU::Device& device, const Handles& h, const std::vector<std::vector<uint8_t>>& inputs,
                            const std::array<uint32_t, ETHOSU_PMU_EVENT_MAX>& pmu_events) {
    auto network = std::make_shared<EthosU::Network>(device, h.cmd_data.data(), h.cmd_data.size());
    std::shared_ptr<EthosU::Buffer> constant = std::make_shared<EthosU::Buffer>();
    if (!h.weight_data.empty()) {
        constant = device.createBuffers({h.weight_data.size()}).front();
        constant->write(reinterpret_cast<const char*>(h.weight_data.data()), h.weight_data.size());
    }
    std::shared_ptr<EthosU::Buffer> intermediate = std::make_shared<EthosU::Buffer>();
    if (h.scratch_data_size > 0) intermediate = device.createBuffers({h.scratch_data_size}).front();
    auto ifm = device.createBuffers(h.input_sizes);
    for (size_t i = 0; i < inputs.size(); ++i)
        ifm[i]->write(reinterpret_cast<const char*>(inputs[i].data()), h.input_sizes[i]);
    auto ofm = device.createBuffers(h.output_sizes);
    auto inference = std::make_unique<EthosU::Inference>(network, ifm.begin(), ifm.end(), ofm.begin(), ofm.end(),
                                                         intermediate, constant, pmu_events, true);
    EXPECT_FALSE(inference->wait(60'000'000'000LL)) << "timed out";
    EXPECT_EQ(inference->status(), EthosU::InferenceStatus::OK) << ethosu::linux_stack::last_error();
    DriverRun run;
    run.cycles = inference->getCycleCounter();
    run.pmu = inference->getPmuCounters();
    for (size_t i = 0; i < ofm.size(); ++i) {
        run.outputs.emplace_back(h.output_sizes[i]);
        ofm[i]->read(reinterpret_cast<char*>(run.outputs.back().data()), h.output_sizes[i]);
    }
    return run;
}

std::vector<uint8_t> random_bytes(std::mt19937& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rng());
    return v;
}

fs::path temp_file(const std::string& name, const std::vector<uint8_t>& bytes) {
    const fs::path path = fs::path(::testing::TempDir()) / name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    return path;
}

// ethosu-emu run --json on the vela_bin_stream: its PMU block.
nlohmann::json cli_pmu(const fs::path& model, const std::vector<fs::path>& inputs, const std::vector<std::string>& events) {
    std::string command = fmt::format("'{}' run '{}' --json", ETHOSU_EMU_CLI, model.string());
    for (const auto& input : inputs) command += fmt::format(" --input '{}'", input.string());
    for (const auto& event : events) command += fmt::format(" --pmu {}", event);
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char chunk[4096];
        for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) out.append(chunk, n);
        EXPECT_EQ(::pclose(pipe), 0) << command << "\n" << out;
    }
    return nlohmann::json::parse(out, nullptr, false).value("pmu", nlohmann::json{});
}

class DirectDrive : public ::testing::TestWithParam<const char*> {};

// 100 inferences through the backend's calls, each bit-exact against the engine's own run of the
// same delegate; PMU events and cycles equal to ethosu-emu run's.
TEST_P(DirectDrive, BackendCallsRunTwoInputStreamsBitExact) {
    const std::string config = GetParam();
    const auto npu = *ethosu::find_npu_config(config);
    select_npu(config);
    const Handles h = direct_drive_network(npu);
    const fs::path model_path = temp_file(config + "_direct.bin", vela_bin_stream(h));
    const auto model = ethosu::load_model(model_path.string(), {});
    ethosu::ModelSession engine(*model);

    const bool u85 = npu.generation == ethosu::Generation::U85;
    const std::vector<std::string> events = {"NPU_ACTIVE", u85 ? "EXT_RD_DATA_BEAT_RECEIVED" : "AXI0_RD_DATA_BEAT_RECEIVED",
                                             u85 ? "EXT_WR_DATA_BEAT_WRITTEN" : "AXI0_WR_DATA_BEAT_WRITTEN"};
    std::array<uint32_t, ETHOSU_PMU_EVENT_MAX> pmu_events{};
    for (size_t k = 0; k < events.size(); ++k) pmu_events[k] = *ethosu::pmu_event_id(npu.generation, events[k]);

    EthosU::Device device;
    ASSERT_EQ(device.capabilities().hwCfg.type, EthosU::HardwareConfiguration::DeviceType::DIRECT);
    std::mt19937 rng(7);
    std::vector<std::vector<uint8_t>> first_inputs;
    DriverRun first;
    for (int k = 0; k < 100; ++k) {
        const std::vector<std::vector<uint8_t>> inputs = {random_bytes(rng, kTensorBytes), random_bytes(rng, kTensorBytes)};
        const DriverRun run = invoke_like_the_backend(device, h, inputs, pmu_events);
        engine.run(inputs);
        ASSERT_EQ(run.outputs, engine.outputs()) << "inference " << k;
        if (k == 0) {
            first_inputs = inputs;
            first = run;
        }
        // Element-wise work on data of the same shape: the same cycles every time.
        EXPECT_EQ(run.cycles, first.cycles) << "inference " << k;
    }
    // The outputs are the NPU's work: out1 = in0 - in1 saturated, element by element.
    for (uint32_t i = 0; i < kTensorBytes; ++i) {
        const int diff = int8_t(first_inputs[0][i]) - int8_t(first_inputs[1][i]);
        EXPECT_EQ(int8_t(first.outputs[1][i]), std::clamp(diff, -128, 127)) << "element " << i;
    }

    const nlohmann::json cli = cli_pmu(model_path, {temp_file("in0.bin", first_inputs[0]), temp_file("in1.bin", first_inputs[1])}, events);
    ASSERT_TRUE(cli.contains("cycle_counter")) << cli.dump();
    EXPECT_GT(first.cycles, 0u);
    EXPECT_EQ(first.cycles, cli["cycle_counter"].get<uint64_t>());
    for (size_t k = 0; k < events.size(); ++k) {
        EXPECT_GT(first.pmu[k], 0u) << events[k];
        EXPECT_EQ(first.pmu[k], cli["event_counters"][k]["count"].get<uint64_t>()) << events[k];
    }
    EXPECT_EQ(first.pmu[3], 0u);  // counter 3 was left off
}

INSTANTIATE_TEST_SUITE_P(Configs, DirectDrive, ::testing::Values("ethos-u85-256", "ethos-u55-128"),
                         ethosu::ConfigTestName{});

// The kernel's INFERENCE_CREATE rules for batches: one batch per list, in its order.
TEST(DirectDriveRules, InputsFromTwoBatchesOrOutOfOrderAreRefused) {
    select_npu("ethos-u55-128");
    const auto npu = *ethosu::find_npu_config("ethos-u55-128");
    const Handles h = direct_drive_network(npu);
    EthosU::Device device;
    auto network = std::make_shared<EthosU::Network>(device, h.cmd_data.data(), h.cmd_data.size());
    const auto none = std::make_shared<EthosU::Buffer>();
    auto a = device.createBuffers({kTensorBytes}), b = device.createBuffers({kTensorBytes});
    auto ofm = device.createBuffers(h.output_sizes);
    std::vector<std::shared_ptr<EthosU::Buffer>> two_batches = {a[0], b[0]};
    EXPECT_THROW(EthosU::Inference(network, two_batches.begin(), two_batches.end(), ofm.begin(), ofm.end(), none, none,
                                   {}, false),
                 EthosU::Exception);
    EXPECT_EQ(errno, EINVAL);
    auto ifm = device.createBuffers(h.input_sizes);
    std::vector<std::shared_ptr<EthosU::Buffer>> reversed = {ifm[1], ifm[0]};
    EXPECT_THROW(EthosU::Inference(network, reversed.begin(), reversed.end(), ofm.begin(), ofm.end(), none, none, {},
                                   false),
                 EthosU::Exception);
    EXPECT_EQ(errno, EINVAL);
    std::vector<std::shared_ptr<EthosU::Buffer>> no_outputs;
    EXPECT_THROW(EthosU::Inference(network, ifm.begin(), ifm.end(), no_outputs.begin(), no_outputs.end(), none, none,
                                   {}, false),
                 EthosU::Exception);
    EXPECT_EQ(errno, EFAULT);
    // A cycle count the inference did not ask for is refused by the library.
    const auto scratch = device.createBuffers({h.scratch_data_size}).front();
    EthosU::Inference quiet(network, ifm.begin(), ifm.end(), ofm.begin(), ofm.end(), scratch, none, {}, false);
    EXPECT_FALSE(quiet.wait(0));
    EXPECT_EQ(quiet.status(), EthosU::InferenceStatus::OK) << ethosu::linux_stack::last_error();
    EXPECT_THROW(quiet.getCycleCounter(), EthosU::Exception);
}

}  // namespace
