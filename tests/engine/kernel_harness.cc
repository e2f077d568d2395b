#include "tests/engine/kernel_harness.h"

#include <algorithm>
#include <random>
#include <stdexcept>

#include "emulator/engine/executor.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"
#include "tests/engine/weight_encoder.h"

namespace ethosu::kernel_test {

using isa::Cmd;
using isa::Field;

namespace {

using namespace test_streams;

constexpr size_t kSramBytes = 1 << 20;
constexpr uint8_t kUnwritten = 0xCD;  // fills OFMs before a run, so unwritten elements show


// Little-endian scale/bias records (bias int40, scale uint32, shift 6 bits) of one core's channels.
std::vector<uint8_t> scale_records(const std::vector<ChannelScale>& scales, int core, int cores) {
    std::vector<uint8_t> bytes;
    for (size_t c = static_cast<size_t>(core); c < scales.size(); c += static_cast<size_t>(cores)) {
        for (int b = 0; b < 5; ++b) bytes.push_back(static_cast<uint8_t>(scales[c].bias >> (8 * b)));
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>(scales[c].scale >> (8 * b)));
        bytes.push_back(static_cast<uint8_t>(scales[c].shift & 0x3F));
    }
    return bytes;
}

}  // namespace

int64_t type_min(const Precision& p) { return p.is_signed ? -(int64_t{1} << (p.bits - 1)) : 0; }
int64_t type_max(const Precision& p) {
    return p.is_signed ? (int64_t{1} << (p.bits - 1)) - 1 : (int64_t{1} << p.bits) - 1;
}

Tensor random_tensor(int h, int w, int c, Precision p, uint32_t seed) {
    Tensor t(h, w, c, p);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int64_t> any(type_min(p), type_max(p));
    for (size_t i = 0; i < t.values.size(); ++i) {
        // Every seventh element is an extreme of the type.
        t.values[i] = i % 7 == 3 ? (i % 2 ? type_max(p) : type_min(p)) : any(rng);
    }
    return t;
}

Rig::Rig(const char* config_name)
    : config_(*find_npu_config(config_name)), stream_(config_.generation), sram_(kSramBytes, kUnwritten) {}

Placement Rig::reserve(int height, int width, int depth, Precision precision, const Layout& layout) {
    Placement p;
    p.height = height, p.width = width, p.depth = depth;
    p.precision = precision;
    p.layout = layout;
    const int elem = precision.bits / 8;
    if (layout.format == DataFormat::NHCWB16) {
        p.stride_x = 16 * elem;
        p.stride_c = int64_t{width} * 16 * elem;           // one brick of 16 channels
        p.stride_y = (depth + 15) / 16 * p.stride_c + 32;  // slack between rows
    } else {
        p.stride_x = int64_t{depth} * elem;
        p.stride_c = elem;
        p.stride_y = int64_t{width} * p.stride_x + 16;
    }
    if (layout.four_tiles) {
        if (height < 2 || width < 2) throw std::invalid_argument("four tiles need at least 2x2");
        p.width0 = width / 2;
        p.height0 = height / 2;
        p.height1 = (height + 1) / 2;  // the right-hand tiles split at another row when odd
    } else {
        p.width0 = width;
        p.height0 = p.height1 = height;
    }
    const uint64_t tile_bytes = align16(static_cast<uint64_t>(height * p.stride_y));
    const int tiles = layout.four_tiles ? 4 : 1;
    for (int t = 0; t < 4; ++t) p.tile_base[t] = sram_used_ + static_cast<uint64_t>(t % tiles) * tile_bytes;
    sram_used_ += tiles * tile_bytes + 64;
    if (sram_used_ > sram_.size()) throw std::invalid_argument("feature maps do not fit the test SRAM");
    return p;
}

uint64_t Rig::address(const Placement& p, int y, int x, int c) const {
    int tile = 0;
    if (x >= p.width0) {
        x -= p.width0;
        tile = 1;
        if (y >= p.height1) y -= p.height1, tile = 3;
    } else if (y >= p.height0) {
        y -= p.height0, tile = 2;
    }
    const int elem = p.precision.bits / 8;
    const uint64_t within = p.layout.format == DataFormat::NHCWB16
                                ? (c / 16) * p.stride_c + x * 16 * elem + (c % 16) * elem
                                : x * p.stride_x + c * elem;
    return p.tile_base[tile] + y * p.stride_y + within;
}

Placement Rig::place(const Tensor& t, const Layout& layout) {
    const Placement p = reserve(t.height, t.width, t.depth, t.precision, layout);
    const int elem = t.precision.bits / 8;
    for (int y = 0; y < t.height; ++y)
        for (int x = 0; x < t.width; ++x)
            for (int c = 0; c < t.depth; ++c) {
                const uint64_t at = address(p, y, x, c);
                for (int b = 0; b < elem; ++b) sram_[at + b] = static_cast<uint8_t>(t.at(y, x, c) >> (8 * b));
            }
    return p;
}

Tensor Rig::read(const Placement& p) const {
    Tensor t(p.height, p.width, p.depth, p.precision);
    const int elem = p.precision.bits / 8;
    for (int y = 0; y < p.height; ++y)
        for (int x = 0; x < p.width; ++x)
            for (int c = 0; c < p.depth; ++c) {
                const uint64_t at = address(p, y, x, c);
                uint64_t raw = 0;
                for (int b = 0; b < elem; ++b) raw |= uint64_t{sram_[at + b]} << (8 * b);
                const int unused = 64 - p.precision.bits;
                t.at(y, x, c) =
                    p.precision.is_signed ? static_cast<int64_t>(raw << unused) >> unused : static_cast<int64_t>(raw);
            }
    return t;
}

void Rig::emit_tile_bases(Cmd c0, Cmd c1, Cmd c2, Cmd c3, const Placement& p) {
    const Cmd cmds[4] = {c0, c1, c2, c3};
    for (int t = 0; t < 4; ++t) {
        const isa::FieldDesc& f = stream_.generation().command(cmds[t])->fields[0];
        stream_.emit(cmds[t], {{f.id, p.tile_base[t]}});
    }
}

void Rig::emit_ifm(const Placement& p, int ifm_scale_mode) {
    stream_.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, kSramRegion}});
    emit_tile_bases(Cmd::SET_IFM_BASE0, Cmd::SET_IFM_BASE1, Cmd::SET_IFM_BASE2, Cmd::SET_IFM_BASE3, p);
    stream_.emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, p.width0 - 1}})
        .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, p.height0 - 1}})
        .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, p.height1 - 1}})
        .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, p.depth - 1}})
        .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, static_cast<uint64_t>(p.stride_x)}})
        .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, static_cast<uint64_t>(p.stride_y)}})
        .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, static_cast<uint64_t>(p.stride_c)}})
        .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, u16(p.layout.zero_point)}});
    if (config_.generation == Generation::U85) {  // no IFM scale mode
        stream_.emit(Cmd::SET_IFM_PRECISION,
                     {{Field::SET_IFM_PRECISION__activation_type, p.precision.is_signed},
                      {Field::SET_IFM_PRECISION__activation_precision, precision_code(p.precision)},
                      {Field::SET_IFM_PRECISION__activation_format, format_code(p.layout.format)}});
        return;
    }
    stream_.emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, p.precision.is_signed},
                                          {Field::SET_IFM_PRECISION__activation_precision, precision_code(p.precision)},
                                          {Field::SET_IFM_PRECISION__activation_format, format_code(p.layout.format)},
                                          {Field::SET_IFM_PRECISION__scale_mode, static_cast<uint64_t>(ifm_scale_mode)}});
}

void Rig::emit_ifm2(const Placement& p) {
    stream_.emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, kSramRegion}});
    emit_tile_bases(Cmd::SET_IFM2_BASE0, Cmd::SET_IFM2_BASE1, Cmd::SET_IFM2_BASE2, Cmd::SET_IFM2_BASE3, p);
    stream_.emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, p.width0 - 1}})
        .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, p.height0 - 1}})
        .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, p.height1 - 1}})
        .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, static_cast<uint64_t>(p.stride_x)}})
        .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, static_cast<uint64_t>(p.stride_y)}})
        .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, static_cast<uint64_t>(p.stride_c)}})
        .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, u16(p.layout.zero_point)}})
        .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, p.precision.is_signed},
                                        {Field::SET_IFM2_PRECISION__activation_precision, precision_code(p.precision)},
                                        {Field::SET_IFM2_PRECISION__activation_format, format_code(p.layout.format)}});
}

void Rig::emit_ofm(const Placement& p, RoundMode round, bool global_scale) {
    stream_.emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, kSramRegion}});
    emit_tile_bases(Cmd::SET_OFM_BASE0, Cmd::SET_OFM_BASE1, Cmd::SET_OFM_BASE2, Cmd::SET_OFM_BASE3, p);
    stream_.emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, p.width - 1}})
        .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, p.height - 1}})
        .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, p.depth - 1}})
        .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, p.width0 - 1}})
        .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, p.height0 - 1}})
        .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, p.height1 - 1}})
        .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, static_cast<uint64_t>(p.stride_x)}})
        .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, static_cast<uint64_t>(p.stride_y)}})
        .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, static_cast<uint64_t>(p.stride_c)}})
        .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(p.layout.zero_point)}});
    if (config_.generation == Generation::U85) {  // the rounding mode is in OFM_SCALE
        stream_.emit(Cmd::SET_OFM_PRECISION,
                     {{Field::SET_OFM_PRECISION__activation_type, p.precision.is_signed},
                      {Field::SET_OFM_PRECISION__activation_precision, precision_code(p.precision)},
                      {Field::SET_OFM_PRECISION__activation_format, format_code(p.layout.format)},
                      {Field::SET_OFM_PRECISION__scale_mode, global_scale ? 1u : 0u}});
        return;
    }
    stream_.emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, p.precision.is_signed},
                                          {Field::SET_OFM_PRECISION__activation_precision, precision_code(p.precision)},
                                          {Field::SET_OFM_PRECISION__activation_format, format_code(p.layout.format)},
                                          {Field::SET_OFM_PRECISION__scale_mode, global_scale ? 1u : 0u},
                                          {Field::SET_OFM_PRECISION__round_mode, round_code(round)}});
}

void Rig::emit_weights(const Weights& w, const std::vector<ChannelScale>& scales, const WeightTraversal& t) {
    const int cores = config_.cores;
    const bool u65 = config_.generation == Generation::U65;
    if (!u65 && cores != 1) throw std::invalid_argument("only U65 has two cores");
    std::vector<std::pair<uint64_t, uint64_t>> weight_streams, scale_streams;  // offset, length
    for (int core = 0; core < cores; ++core) {
        test_support::OrderSpec order;
        order.depthwise = t.depthwise;
        order.part_kernel = t.part_kernel_first;
        order.ofm_depth = (w.ofm_depth + cores - 1 - core) / cores;  // the cores take channels in turn
        order.kernel_h = w.kernel_height;
        order.kernel_w = w.kernel_width;
        order.ifm_depth = w.ifm_depth;
        order.ofm_block = (t.ofm_block_depth + cores - 1 - core) / cores;
        order.ifm_bits = t.ifm_bits;
        order.dilation_x = t.dilation_x;
        order.dilation_y = t.dilation_y;
        order.ofm_micro = config_.macs == 32 ? 4 : 8;
        std::vector<int16_t> values;
        for (const auto& [o, y, x, i] : test_support::vela_order(order))
            values.push_back(o < 0 ? int16_t{0} : w.at(o * cores + core, y, x, i));
        const auto stream = order.ofm_depth ? test_support::encode_values(values) : std::vector<uint8_t>{};
        weight_streams.emplace_back(append_aligned(weights_, stream), stream.size());
        const auto records = scale_records(scales, core, cores);
        scale_streams.emplace_back(append_aligned(weights_, records), records.size());
    }
    stream_.emit(Cmd::SET_WEIGHT_REGION, {{Field::SET_WEIGHT_REGION__region, kWeightRegion}})
        .emit(Cmd::SET_WEIGHT_BASE, {{Field::SET_WEIGHT_BASE__addr, weight_streams[0].first}})
        .emit(Cmd::SET_WEIGHT_LENGTH, {{Field::SET_WEIGHT_LENGTH__length, weight_streams[0].second}})
        .emit(Cmd::SET_SCALE_REGION, {{Field::SET_SCALE_REGION__region, kWeightRegion}})
        .emit(Cmd::SET_SCALE_BASE, {{Field::SET_SCALE_BASE__addr, scale_streams[0].first}})
        .emit(Cmd::SET_SCALE_LENGTH, {{Field::SET_SCALE_LENGTH__length, scale_streams[0].second}});
    if (cores == 2) {
        stream_.emit(Cmd::SET_WEIGHT1_BASE, {{Field::SET_WEIGHT1_BASE__addr, weight_streams[1].first}})
            .emit(Cmd::SET_WEIGHT1_LENGTH, {{Field::SET_WEIGHT1_LENGTH__length, weight_streams[1].second}})
            .emit(Cmd::SET_SCALE1_BASE, {{Field::SET_SCALE1_BASE__addr, scale_streams[1].first}})
            .emit(Cmd::SET_SCALE1_LENGTH, {{Field::SET_SCALE1_LENGTH__length, scale_streams[1].second}});
    }
}

uint64_t Rig::add_lut(const std::vector<uint8_t>& bytes) { return append_aligned(luts_, bytes); }

uint32_t Rig::emit_lut_dma(uint64_t lut_offset, int slot, uint64_t length) {
    const uint64_t lut_area = static_cast<uint64_t>(config_.shram_kb) * 1024 / config_.cores - 2048;  // last 2 KB of a core's SHRAM
    stream_.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kLutRegion}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, lut_offset}})
        // Internal mode: the region field is the core mask; Vela writes 3 on every configuration.
        .emit(Cmd::SET_DMA0_DST_REGION,
              {{Field::SET_DMA0_DST_REGION__region, 3}, {Field::SET_DMA0_DST_REGION__region_mode, 1}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, lut_area + static_cast<uint64_t>(slot) * 256}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, length}});
    const uint32_t at = next_offset();
    stream_.emit(Cmd::OP_DMA_START).emit(Cmd::OP_DMA_WAIT);
    return at;
}

void Rig::emit_kernel(int height, int width, int stride_x, int stride_y, int dilation_x, int dilation_y,
                      bool part_kernel_first) {
    const auto sx = static_cast<uint64_t>(stride_x - 1), sy = static_cast<uint64_t>(stride_y - 1);
    stream_.emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, (height - 1) * dilation_y}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, (width - 1) * dilation_x}})
        .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, sx & 1},
                                       {Field::SET_KERNEL_STRIDE__stride_y_lsb, sy & 1},
                                       {Field::SET_KERNEL_STRIDE__stride_x_msb, sx >> 1},
                                       {Field::SET_KERNEL_STRIDE__stride_y_msb, sy >> 1},
                                       {Field::SET_KERNEL_STRIDE__dilation_x, static_cast<uint64_t>(dilation_x - 1)},
                                       {Field::SET_KERNEL_STRIDE__dilation_y, static_cast<uint64_t>(dilation_y - 1)},
                                       {Field::SET_KERNEL_STRIDE__weight_order, part_kernel_first ? 1u : 0u}});
}

void Rig::emit_padding(int top, int left, int bottom, int right, UpscaleMode upscale) {
    stream_.emit(Cmd::SET_IFM_PAD_TOP, {{Field::SET_IFM_PAD_TOP__pad, static_cast<uint64_t>(top)}})
        .emit(Cmd::SET_IFM_PAD_LEFT, {{Field::SET_IFM_PAD_LEFT__pad, static_cast<uint64_t>(left)}})
        .emit(Cmd::SET_IFM_PAD_BOTTOM, {{Field::SET_IFM_PAD_BOTTOM__pad, static_cast<uint64_t>(bottom)}})
        .emit(Cmd::SET_IFM_PAD_RIGHT, {{Field::SET_IFM_PAD_RIGHT__pad, static_cast<uint64_t>(right)}})
        .emit(Cmd::SET_IFM_UPSCALE, {{Field::SET_IFM_UPSCALE__mode, static_cast<uint64_t>(upscale)}});
}

void Rig::emit_activation(int function, int64_t clip_min, int64_t clip_max) {
    stream_.emit(Cmd::SET_ACTIVATION, {{Field::SET_ACTIVATION__activation_function, static_cast<uint64_t>(function)}})
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(clip_min)}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, u16(clip_max)}});
}

void Rig::emit_block(const BlockConfig& block) {
    stream_.emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, block.height - 1}})
        .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, block.width - 1}})
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, block.depth - 1}})
        .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, block.ifm_ib_end}})
        .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, block.ab_start}})
        .emit(Cmd::SET_IFM2_IB_START, {{Field::SET_IFM2_IB_START__ib_start, block.ifm2_ib_start}})
        .emit(Cmd::SET_ACC_FORMAT)
        .emit(Cmd::SET_BLOCKDEP);
    if (config_.generation == Generation::U65) {
        stream_.emit(Cmd::SET_PARALLEL_MODE, {{Field::SET_PARALLEL_MODE__parallel_mode, config_.cores == 2 ? 1u : 0u}});
    }
}

void Rig::run(const WorkLimits& limits) {
    run_on_test_memory(config_, stream_, sram_, weights_, luts_, "kernel-test", limits);
}

LutOp emit_lut_pool(Rig& rig, int table) {
    constexpr Precision kInt8{true, 8};
    LutOp op;
    op.in = random_tensor(3, 4, 5, kInt8, 45);
    const Placement ifm = rig.place(op.in, {});
    op.ofm = rig.reserve(3, 4, 5, kInt8, {});
    rig.emit_ifm(ifm);
    rig.emit_ofm(op.ofm, RoundMode::DoubleSymmetric, true);
    rig.emit_kernel(1, 1, 1, 1, 1, 1, false);
    rig.emit_padding(0, 0, 0, 0);
    rig.stream().emit(isa::Cmd::SET_OFM_SCALE, {{isa::Field::SET_OFM_SCALE__scale, 1}});
    rig.emit_activation(16 + table, -128, 127);
    rig.emit_block(8);
    op.offset = rig.next_offset();
    rig.stream().emit(isa::Cmd::OP_POOL, {{isa::Field::OP_POOL__pooling_mode, 0}});
    return op;
}

Tensor LutOp::expected(const std::vector<uint8_t>& lut) const {
    Tensor want(in.height, in.width, in.depth, in.precision);
    for (size_t i = 0; i < want.values.size(); ++i)
        want.values[i] = static_cast<int8_t>(lut[static_cast<size_t>(in.values[i] + 128)]);
    return want;
}

}  // namespace ethosu::kernel_test
