#include "frontend/cli/example_model.h"

#include "emulator/isa/builder.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace ethosu {

using isa::Cmd;
using isa::Field;

std::vector<uint8_t> make_cop1_payload(uint32_t config_word, uint32_t id_word, std::span<const uint32_t> stream) {
    constexpr uint32_t kCop1 = 0x31504F43;         // "COP1"
    constexpr uint32_t kOptimizerConfig = 0x00100001;  // tag 1, Vela release 0 patch 1
    constexpr uint32_t kNop = 0x00000005;
    std::vector<uint32_t> words{kCop1, kOptimizerConfig, config_word, id_word};
    // The stream itself starts 16-byte aligned, after its tag.
    while ((words.size() + 1) % 4 != 0) words.push_back(kNop);
    const uint32_t length = static_cast<uint32_t>(stream.size());
    words.push_back(0x02u | (((length >> 16) & 0xFF) << 8) | ((length & 0xFFFF) << 16));
    words.insert(words.end(), stream.begin(), stream.end());
    std::vector<uint8_t> bytes(words.size() * 4);
    for (size_t i = 0; i < words.size(); ++i)
        for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<uint8_t>(words[i] >> (8 * b));
    return bytes;
}

namespace {

// IFM 16x16x16 int8 NHWC at region 1 offset 0; pool OFM 8x8x16 at 0x1000; add OFM at 0x1400.
void emit_pool(CommandStreamBuilder& b) {
    b.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, 1}})
        .emit(Cmd::SET_IFM_BASE0).emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
        .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, 15}})
        .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, 15}})
        .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, 15}})
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, 16}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, 256}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_IFM_ZERO_POINT)
        .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM_UPSCALE)
        .emit(Cmd::SET_IFM_PAD_TOP).emit(Cmd::SET_IFM_PAD_LEFT).emit(Cmd::SET_IFM_PAD_BOTTOM).emit(Cmd::SET_IFM_PAD_RIGHT)
        .emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, 1}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, 0x1000}})
        .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
        .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, 7}})
        .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, 7}})
        .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, 7}})
        .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, 16}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, 128}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
        .emit(Cmd::SET_OFM_ZERO_POINT)
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                       {Field::SET_OFM_PRECISION__scale_mode, 1}})
        .emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, 1}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, 1}})
        .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, 1},
                                       {Field::SET_KERNEL_STRIDE__stride_y_lsb, 1}})
        // Average of 4 = multiply by 2^30 and shift right by 32.
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1u << 30}, {Field::SET_OFM_SCALE__shift, 32}})
        .emit(Cmd::SET_ACTIVATION)
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, 0xFF80}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, 0x7F}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, 7}})
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, 7}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, 8}})
        .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, 20}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_BLOCKDEP)
        .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, 1}});
}

// OFM(0x1400) = pool output + 3, with the scalar as IFM2.
void emit_add_scalar(CommandStreamBuilder& b) {
    b.emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, 0x1000}})
        .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, 7}})
        .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, 7}})
        .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, 7}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, 128}})
        .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, 0x1400}})
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}, {Field::SET_OFM_SCALE__shift, 0}})
        .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, 1}, {Field::SET_OPA_SCALE__shift, 0}})
        .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, 1}})
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1}})
        .emit(Cmd::SET_IFM2_ZERO_POINT)
        .emit(Cmd::SET_IFM2_SCALAR, {{Field::SET_IFM2_SCALAR__scalar, 3}})
        .emit(Cmd::SET_IFM2_BROADCAST, {{Field::SET_IFM2_BROADCAST__broadcast_constant, 1}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}});
}

}  // namespace

std::vector<uint8_t> build_example_payload() {
    CommandStreamBuilder b(Generation::U55);
    emit_pool(b);
    emit_add_scalar(b);
    b.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
    const auto config = find_npu_config("ethos-u55-128");
    return make_cop1_payload(config->config_word, config->id_word, b.words());
}

namespace {

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<uint8_t>(v >> (8 * b)));
}

// A block: 16-byte NUL-padded name, u32 size, 12 reserved bytes, data padded to 16 bytes.
void put_block(std::vector<uint8_t>& out, std::string_view name, const std::vector<uint8_t>& data) {
    std::array<uint8_t, 16> header_name{};
    std::copy(name.begin(), name.end(), header_name.begin());
    out.insert(out.end(), header_name.begin(), header_name.end());
    put_u32(out, static_cast<uint32_t>(data.size()));
    out.insert(out.end(), 12, uint8_t{0});
    out.insert(out.end(), data.begin(), data.end());
    out.insert(out.end(), (16 - data.size() % 16) % 16, uint8_t{0});
}

// One VelaIO entry: 6-D shape, element size, offset in scratch, region.
void put_io(std::vector<uint8_t>& out, std::array<uint32_t, 3> hwc, uint32_t offset) {
    for (uint32_t d : {1u, 1u, 1u, hwc[0], hwc[1], hwc[2]}) put_u32(out, d);
    put_u32(out, 1);
    put_u32(out, offset);
    put_u32(out, 1);
}

}  // namespace

std::vector<uint8_t> build_example_model() {
    constexpr uint32_t kScratchBytes = 0x1800;
    std::vector<uint8_t> scratch_size, inputs, outputs, out;
    put_u32(scratch_size, kScratchBytes);
    put_u32(inputs, 1);
    put_io(inputs, {16, 16, 16}, 0);
    put_u32(outputs, 1);
    put_io(outputs, {8, 8, 16}, 0x1400);
    put_block(out, "vela_bin_stream", {});
    put_block(out, "cmd_data", build_example_payload());
    put_block(out, "weight_data", {0});
    put_block(out, "scratch_size", scratch_size);
    put_block(out, "inputs", inputs);
    put_block(out, "outputs", outputs);
    put_block(out, "vela_end_stream", {});
    return out;
}

}  // namespace ethosu
