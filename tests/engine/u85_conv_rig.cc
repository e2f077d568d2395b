#include "tests/engine/u85_conv_rig.h"

#include <algorithm>
#include <cstring>

#include "emulator/engine/executor.h"
#include "emulator/isa/decoder.h"
#include "emulator/memory/address_space.h"
#include "tests/engine/stream_helpers.h"
#include "tests/engine/tflite_math.h"
#include "tests/engine/weight_encoder_u85.h"

namespace ethosu::u85_conv_test {

using isa::Cmd;
using isa::Field;

namespace {

constexpr size_t kSramBytes = 1 << 20;
constexpr uint8_t kUnwritten = 0xCD;
using namespace test_streams;

}  // namespace

Geometry same_padding(int height, int width, int kernel_h, int kernel_w, int stride) {
    Geometry g;
    g.ofm_height = (height + stride - 1) / stride;
    g.ofm_width = (width + stride - 1) / stride;
    const int pad_h = std::max(0, (g.ofm_height - 1) * stride + kernel_h - height);
    const int pad_w = std::max(0, (g.ofm_width - 1) * stride + kernel_w - width);
    g.pad.top = pad_h / 2, g.pad.bottom = pad_h - pad_h / 2;
    g.pad.left = pad_w / 2, g.pad.right = pad_w - pad_w / 2;
    return g;
}

std::vector<ChannelScale> random_scales(int channels, std::mt19937& rng) {
    std::uniform_int_distribution<int64_t> bias(-20000, 20000);
    std::uniform_real_distribution<double> real(0.00005, 0.004);
    std::vector<ChannelScale> scales;
    for (int c = 0; c < channels; ++c) {
        const auto m = tflite_math::quantize_multiplier(real(rng));
        scales.push_back({bias(rng), m.multiplier, m.shift});
    }
    return scales;
}

Rig::Rig(const char* config_name)
    : config_(*find_npu_config(config_name)), stream_(config_.generation), sram_(kSramBytes, kUnwritten) {}

FeatureMap8 Rig::random_ifm(int height, int width, int depth, int32_t zero_point, std::mt19937& rng) const {
    FeatureMap8 fm{height, width, depth, zero_point, {}};
    std::uniform_int_distribution<int> any(-128, 127);
    fm.values.resize(static_cast<size_t>(height) * width * depth);
    for (auto& v : fm.values) v = static_cast<int8_t>(any(rng));
    return fm;
}

Place Rig::reserve(int height, int width, int depth, Precision p, int32_t zero_point) {
    Place place{align16(sram_used_), height, width, depth, p, zero_point};
    sram_used_ = place.offset + static_cast<uint64_t>(height) * width * depth * p.bytes();
    return place;
}

Place Rig::place(const FeatureMap8& fm) {
    const Place p = reserve(fm.height, fm.width, fm.depth, kInt8, fm.zero_point);
    std::memcpy(sram_.data() + p.offset, fm.values.data(), fm.values.size());
    return p;
}

Place Rig::place_wide(int height, int width, int depth, Precision precision, const std::vector<int64_t>& values) {
    const Place p = reserve(height, width, depth, precision, 0);
    for (size_t i = 0; i < values.size(); ++i)
        for (int b = 0; b < precision.bytes(); ++b)
            sram_[p.offset + i * precision.bytes() + b] = static_cast<uint8_t>(values[i] >> (8 * b));
    return p;
}

std::vector<StreamRef> Rig::add_weights(const std::vector<std::vector<uint8_t>>& streams) {
    std::vector<StreamRef> refs;
    for (const auto& s : streams) refs.push_back({append_aligned(weights_, s), s.size()});
    return refs;
}

StreamRef Rig::add_scales(const std::vector<ChannelScale>& scales, int ofm_ublock_depth, bool acc48) {
    const size_t granule = static_cast<size_t>((ofm_ublock_depth + 15) / 16 * 16);
    const size_t records = (scales.size() + granule - 1) / granule * granule;
    std::vector<uint8_t> bytes;
    for (size_t c = 0; c < records; ++c) {
        const ChannelScale s = c < scales.size() ? scales[c] : ChannelScale{0, 0, 31};
        const auto r = test_support::u85_scale_record(s.bias, static_cast<uint32_t>(s.multiplier), 31 - s.shift, acc48);
        bytes.insert(bytes.end(), r.begin(), r.end());
    }
    return {append_aligned(weights_, bytes), bytes.size()};
}

void Rig::emit_feature_map(bool ofm, const Place& p) {
    const auto stride_x = static_cast<uint64_t>(p.depth * p.precision.bytes());
    const uint64_t stride_y = stride_x * static_cast<uint64_t>(p.width);
    if (ofm) {
        stream_.emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, kSramRegion}})
            .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, p.offset}})
            .emit(Cmd::SET_OFM_BASE1).emit(Cmd::SET_OFM_BASE2).emit(Cmd::SET_OFM_BASE3)
            .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, p.width - 1}})
            .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, p.depth - 1}})
            .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, p.width - 1}})
            .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, stride_x}})
            .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, stride_y}})
            .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, 1}})
            .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, u16(p.zero_point)}});
    } else {
        stream_.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, kSramRegion}})
            .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, p.offset}})
            .emit(Cmd::SET_IFM_BASE1).emit(Cmd::SET_IFM_BASE2).emit(Cmd::SET_IFM_BASE3)
            .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, p.width - 1}})
            .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, p.depth - 1}})
            .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, stride_x}})
            .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, stride_y}})
            .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, 1}})
            .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, u16(p.zero_point)}})
            .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, p.precision.is_signed},
                                           {Field::SET_IFM_PRECISION__activation_precision, precision_code(p.precision)}});
    }
}

uint32_t Rig::emit_conv(const ConvRegs& r) {
    const auto s = static_cast<uint64_t>(r.stride - 1);
    stream_.emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, r.ofm_scale},
                                      {Field::SET_OFM_SCALE__shift, static_cast<uint64_t>(r.ofm_shift)}});
    emit_feature_map(false, r.ifm);
    stream_.emit(Cmd::SET_IFM_UPSCALE)
        .emit(Cmd::SET_IFM_PAD_TOP, {{Field::SET_IFM_PAD_TOP__pad, static_cast<uint64_t>(r.pad.top)}})
        .emit(Cmd::SET_IFM_PAD_LEFT, {{Field::SET_IFM_PAD_LEFT__pad, static_cast<uint64_t>(r.pad.left)}})
        .emit(Cmd::SET_IFM_PAD_BOTTOM, {{Field::SET_IFM_PAD_BOTTOM__pad, static_cast<uint64_t>(r.pad.bottom)}})
        .emit(Cmd::SET_IFM_PAD_RIGHT, {{Field::SET_IFM_PAD_RIGHT__pad, static_cast<uint64_t>(r.pad.right)}})
        .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, r.ofm.precision.is_signed},
                                       {Field::SET_OFM_PRECISION__activation_precision, precision_code(r.ofm.precision)},
                                       {Field::SET_OFM_PRECISION__scale_mode, r.global_scale ? 1u : 0u}});
    emit_feature_map(true, r.ofm);
    stream_.emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, r.kernel_h - 1}})
        .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, r.kernel_w - 1}})
        .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, s & 1},
                                       {Field::SET_KERNEL_STRIDE__stride_y_lsb, s & 1},
                                       {Field::SET_KERNEL_STRIDE__stride_x_msb, s >> 1},
                                       {Field::SET_KERNEL_STRIDE__stride_y_msb, s >> 1},
                                       {Field::SET_KERNEL_STRIDE__weight_order, r.part_kernel_first ? 1u : 0u}});
    if (r.has_ifm2) {
        const Place& p = r.ifm2;
        const auto stride_x = static_cast<uint64_t>(p.depth * p.precision.bytes());
        stream_.emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, p.precision.is_signed},
                                               {Field::SET_IFM2_PRECISION__activation_precision, precision_code(p.precision)}})
            .emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, kSramRegion}})
            .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, p.offset}})
            .emit(Cmd::SET_IFM2_BASE1).emit(Cmd::SET_IFM2_BASE2).emit(Cmd::SET_IFM2_BASE3)
            .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, p.height - 1}})
            .emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, p.width - 1}})
            .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, stride_x}})
            .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, stride_x * static_cast<uint64_t>(p.width)}})
            .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, 1}})
            .emit(Cmd::SET_IFM2_ZERO_POINT, {{Field::SET_IFM2_ZERO_POINT__zero_point, u16(p.zero_point)}})
            .emit(Cmd::SET_IFM2_BROADCAST);
    }
    if (!r.weights_from_ifm2 && r.pool < 0) {
        static constexpr Cmd kBase[] = {Cmd::SET_WEIGHT_BASE, Cmd::SET_WEIGHT1_BASE, Cmd::SET_WEIGHT2_BASE,
                                        Cmd::SET_WEIGHT3_BASE};
        static constexpr Cmd kLength[] = {Cmd::SET_WEIGHT_LENGTH, Cmd::SET_WEIGHT1_LENGTH, Cmd::SET_WEIGHT2_LENGTH,
                                          Cmd::SET_WEIGHT3_LENGTH};
        static constexpr Field kBaseField[] = {Field::SET_WEIGHT_BASE__addr, Field::SET_WEIGHT1_BASE__addr,
                                               Field::SET_WEIGHT2_BASE__addr, Field::SET_WEIGHT3_BASE__addr};
        static constexpr Field kLengthField[] = {Field::SET_WEIGHT_LENGTH__length, Field::SET_WEIGHT1_LENGTH__length,
                                                 Field::SET_WEIGHT2_LENGTH__length, Field::SET_WEIGHT3_LENGTH__length};
        stream_.emit(Cmd::SET_WEIGHT_FORMAT, {{Field::SET_WEIGHT_FORMAT__weight_format, r.fast ? 1u : 0u},
                                              {Field::SET_WEIGHT_FORMAT__weight_sparsity, r.sparse ? 1u : 0u}})
            .emit(Cmd::SET_WEIGHT_REGION, {{Field::SET_WEIGHT_REGION__region, kWeightRegion}});
        // Every decoder's length; a fast stream leaves the others empty, and, as Vela does
        // (regor GenerateWeights), an empty stream gets no base.
        for (int d = 0; d < config_.cores; ++d) {
            const StreamRef ref = d < static_cast<int>(r.weights.size()) ? r.weights[static_cast<size_t>(d)] : StreamRef{};
            if (ref.length) stream_.emit(kBase[d], {{kBaseField[d], ref.offset}});
            stream_.emit(kLength[d], {{kLengthField[d], ref.length}});
        }
        stream_.emit(Cmd::SET_SCALE_REGION, {{Field::SET_SCALE_REGION__region, kWeightRegion}})
            .emit(Cmd::SET_SCALE_BASE, {{Field::SET_SCALE_BASE__addr, r.scales.offset}})
            .emit(Cmd::SET_SCALE_LENGTH, {{Field::SET_SCALE_LENGTH__length, r.scales.length}});
    }
    const int64_t lo = r.clip ? r.clip->first : r.ofm.precision.bits == 8 ? -128 : -32768;
    const int64_t hi = r.clip ? r.clip->second : r.ofm.precision.bits == 8 ? 127 : 32767;
    stream_.emit(Cmd::SET_ACTIVATION, {{Field::SET_ACTIVATION__activation_function, static_cast<uint64_t>(r.activation)}})
        .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, u16(lo)}})
        .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, u16(hi)}})
        .emit(Cmd::SET_OFM_BLK_HEIGHT_M1).emit(Cmd::SET_OFM_BLK_WIDTH_M1)
        .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, r.ofm_block_depth - 1}})
        .emit(Cmd::SET_ACC_FORMAT, {{Field::SET_ACC_FORMAT__acc_format, static_cast<uint64_t>(r.acc_format)},
                                    {Field::SET_ACC_FORMAT__acc_input, static_cast<uint64_t>(r.acc_input)},
                                    {Field::SET_ACC_FORMAT__acc_output, static_cast<uint64_t>(r.acc_output)},
                                    {Field::SET_ACC_FORMAT__microblock, static_cast<uint64_t>(r.microblock)}})
        .emit(Cmd::SET_BLOCKDEP);
    const auto at = static_cast<uint32_t>(stream_.words().size() * 4);
    if (r.pool >= 0) stream_.emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, static_cast<uint64_t>(r.pool)}});
    else if (r.depthwise) stream_.emit(Cmd::OP_DEPTHWISE);
    else stream_.emit(Cmd::OP_CONV, {{Field::OP_CONV__weights_ifm2, r.weights_from_ifm2 ? 1u : 0u}});
    return at;
}

void Rig::load_lut(const std::vector<uint8_t>& table) {
    const uint64_t at = append_aligned(weights_, table);
    stream_.emit(Cmd::SET_DMA0_SRC_REGION, {{Field::SET_DMA0_SRC_REGION__region, kWeightRegion}})
        .emit(Cmd::SET_DMA0_SRC, {{Field::SET_DMA0_SRC__addr, at}})
        .emit(Cmd::SET_DMA0_DST_REGION, {{Field::SET_DMA0_DST_REGION__region_mode, 1}})
        .emit(Cmd::SET_DMA0_DST, {{Field::SET_DMA0_DST__addr, 0}})
        .emit(Cmd::SET_DMA0_LEN, {{Field::SET_DMA0_LEN__addr, table.size()}})
        .emit(Cmd::OP_DMA_START)
        .emit(Cmd::OP_DMA_WAIT);
}

void Rig::run() {
    std::vector<uint8_t> no_luts;
    run_on_test_memory(config_, stream_, sram_, weights_, no_luts, "u85-conv-test");
}

std::vector<int8_t> Rig::read8(const Place& p) const {
    const size_t n = static_cast<size_t>(p.height) * p.width * p.depth;
    std::vector<int8_t> out(n);
    std::memcpy(out.data(), sram_.data() + p.offset, n);
    return out;
}

std::vector<int64_t> Rig::read_wide(const Place& p) const {
    const size_t n = static_cast<size_t>(p.height) * p.width * p.depth;
    const int bytes = p.precision.bytes();
    std::vector<int64_t> out(n);
    for (size_t i = 0; i < n; ++i) {
        uint64_t v = 0;
        for (int b = 0; b < bytes; ++b) v |= uint64_t{sram_[p.offset + i * bytes + b]} << (8 * b);
        out[i] = bytes == 8 ? static_cast<int64_t>(v) : static_cast<int64_t>(v << (64 - 8 * bytes)) >> (64 - 8 * bytes);
    }
    return out;
}

std::vector<int64_t> plain_sums(const FeatureMap8& ifm, const std::vector<int16_t>& ohwi, int ofm_depth, int kernel_h,
                                int kernel_w, int stride, const Geometry& g) {
    std::vector<int64_t> sums;
    for (int oy = 0; oy < g.ofm_height; ++oy)
        for (int ox = 0; ox < g.ofm_width; ++ox)
            for (int o = 0; o < ofm_depth; ++o) {
                int64_t sum = 0;
                for (int ky = 0; ky < kernel_h; ++ky)
                    for (int kx = 0; kx < kernel_w; ++kx) {
                        const int y = oy * stride - g.pad.top + ky, x = ox * stride - g.pad.left + kx;
                        if (y < 0 || y >= ifm.height || x < 0 || x >= ifm.width) continue;
                        for (int i = 0; i < ifm.depth; ++i) {
                            const size_t w = ((static_cast<size_t>(o) * kernel_h + ky) * kernel_w + kx) * ifm.depth + i;
                            sum += (ifm.at(y, x, i) - ifm.zero_point) * int64_t{ohwi[w]};
                        }
                    }
                sums.push_back(sum);
            }
    return sums;
}

std::vector<int8_t> requantize(const std::vector<int64_t>& sums, const std::vector<ChannelScale>& scales,
                               int32_t zero_point) {
    std::vector<int8_t> out;
    for (size_t n = 0; n < sums.size(); ++n) {
        const ChannelScale& s = scales[n % scales.size()];
        const auto acc = static_cast<int32_t>(sums[n] + s.bias);
        const int32_t v = tflite_math::multiply(acc, s.multiplier, s.shift) + zero_point;
        out.push_back(static_cast<int8_t>(std::clamp(v, -128, 127)));
    }
    return out;
}

std::vector<int8_t> plain_conv(const FeatureMap8& ifm, const std::vector<int16_t>& ohwi,
                               const std::vector<ChannelScale>& scales, int ofm_depth, int kernel_h, int kernel_w,
                               int stride, const Geometry& g, int32_t ofm_zero_point) {
    return requantize(plain_sums(ifm, ohwi, ofm_depth, kernel_h, kernel_w, stride, g), scales, ofm_zero_point);
}

}  // namespace ethosu::u85_conv_test
