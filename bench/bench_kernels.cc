// Per-kernel throughput: single NPU ops written with CommandStreamBuilder, run on the Executor
// over and over (the weights decode on the first run and come from the WeightCache after).

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "emulator/engine/executor.h"
#include "emulator/engine/weights.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/decoder.h"
#include "emulator/isa/error.h"
#include "tests/engine/weight_encoder.h"

namespace ethosu {
namespace {

using isa::Cmd;
using isa::Field;

constexpr int kWeightRegion = 0, kFeatureMapRegion = 1;
constexpr uint64_t kWeightAddress = uint64_t{1} << 28, kFeatureMapAddress = uint64_t{2} << 28;

// 10-byte scale records: zero bias, scale 2^30, shift 38 (a typical requantisation).
std::vector<uint8_t> scale_records(int channels) {
    std::vector<uint8_t> bytes;
    for (int c = 0; c < channels; ++c) {
        bytes.insert(bytes.end(), 5, uint8_t{0});
        for (int b = 0; b < 4; ++b) bytes.push_back(static_cast<uint8_t>((1u << 30) >> (8 * b)));
        bytes.push_back(38);
    }
    bytes.resize((bytes.size() + 15) / 16 * 16);
    return bytes;
}

struct Shape {
    int height, width, depth;  // OFM
    int ifm_depth;
    int kernel = 1, stride = 1, pad = 0;
};

Shape ifm_of(const Shape& s) {
    return {(s.height - 1) * s.stride + s.kernel - 2 * s.pad, (s.width - 1) * s.stride + s.kernel - 2 * s.pad,
            s.ifm_depth, s.ifm_depth};
}

// One op on U55-128 with int8 (or int16) NHWC feature maps: IFM (and IFM2) then OFM in region 1,
// weights and scales in region 0.
class OpHarness {
public:
    // element_bytes: 1 for int8 feature maps (IFM zero point -128), 2 for int16 (zero points 0,
    // as TFLite's 16x8 kernels have them).
    explicit OpHarness(int element_bytes = 1)
        : config_(*find_npu_config("ethos-u55-128")), space_(map_), bytes_(element_bytes) {}

    CommandStreamBuilder& builder() { return builder_; }
    uint64_t place_feature_map(const Shape& s) {
        const uint64_t at = fm_bytes_;
        fm_bytes_ += (static_cast<uint64_t>(s.height) * s.width * s.depth * bytes_ + 15) / 16 * 16;
        return at;
    }
    uint64_t place_weights(const std::vector<uint8_t>& bytes) {
        const uint64_t at = weight_bytes_.size();
        weight_bytes_.insert(weight_bytes_.end(), bytes.begin(), bytes.end());
        return at;
    }

    void emit_ifm2(const Shape& s, uint64_t base) {
        builder_.emit(Cmd::SET_IFM2_REGION, {{Field::SET_IFM2_REGION__region, kFeatureMapRegion}})
            .emit(Cmd::SET_IFM2_BASE0, {{Field::SET_IFM2_BASE0__addr, base}})
            .emit(Cmd::SET_IFM2_BASE1, {{Field::SET_IFM2_BASE1__addr, base}})
            .emit(Cmd::SET_IFM2_BASE2, {{Field::SET_IFM2_BASE2__addr, base}})
            .emit(Cmd::SET_IFM2_BASE3, {{Field::SET_IFM2_BASE3__addr, base}})
            .emit(Cmd::SET_IFM2_HEIGHT0_M1, {{Field::SET_IFM2_HEIGHT0_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_IFM2_HEIGHT1_M1, {{Field::SET_IFM2_HEIGHT1_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_IFM2_WIDTH0_M1, {{Field::SET_IFM2_WIDTH0_M1__width_m1, s.width - 1}})
            .emit(Cmd::SET_IFM2_STRIDE_X, {{Field::SET_IFM2_STRIDE_X__addr, s.depth * bytes_}})
            .emit(Cmd::SET_IFM2_STRIDE_Y, {{Field::SET_IFM2_STRIDE_Y__addr, s.width * s.depth * bytes_}})
            .emit(Cmd::SET_IFM2_STRIDE_C, {{Field::SET_IFM2_STRIDE_C__addr, bytes_}})
            .emit(Cmd::SET_IFM2_BROADCAST)
            .emit(Cmd::SET_IFM2_ZERO_POINT)
            .emit(Cmd::SET_IFM2_IB_START, {{Field::SET_IFM2_IB_START__ib_start, 8}})
            .emit(Cmd::SET_IFM2_PRECISION, {{Field::SET_IFM2_PRECISION__activation_type, 1},
                                            {Field::SET_IFM2_PRECISION__activation_precision, precision()}});
    }

    // pad: the op's padding on every side (s is the IFM area without it).
    void emit_ifm(const Shape& s, uint64_t base, int pad) {
        builder_.emit(Cmd::SET_IFM_REGION, {{Field::SET_IFM_REGION__region, kFeatureMapRegion}})
            .emit(Cmd::SET_IFM_BASE0, {{Field::SET_IFM_BASE0__addr, base}})
            .emit(Cmd::SET_IFM_BASE1, {{Field::SET_IFM_BASE1__addr, base}})
            .emit(Cmd::SET_IFM_BASE2, {{Field::SET_IFM_BASE2__addr, base}})
            .emit(Cmd::SET_IFM_BASE3, {{Field::SET_IFM_BASE3__addr, base}})
            .emit(Cmd::SET_IFM_HEIGHT0_M1, {{Field::SET_IFM_HEIGHT0_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_IFM_HEIGHT1_M1, {{Field::SET_IFM_HEIGHT1_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_IFM_WIDTH0_M1, {{Field::SET_IFM_WIDTH0_M1__width_m1, s.width - 1}})
            .emit(Cmd::SET_IFM_DEPTH_M1, {{Field::SET_IFM_DEPTH_M1__depth_m1, s.depth - 1}})
            .emit(Cmd::SET_IFM_STRIDE_X, {{Field::SET_IFM_STRIDE_X__addr, s.depth * bytes_}})
            .emit(Cmd::SET_IFM_STRIDE_Y, {{Field::SET_IFM_STRIDE_Y__addr, s.width * s.depth * bytes_}})
            .emit(Cmd::SET_IFM_STRIDE_C, {{Field::SET_IFM_STRIDE_C__addr, bytes_}})
            .emit(Cmd::SET_IFM_ZERO_POINT, {{Field::SET_IFM_ZERO_POINT__zero_point, bytes_ == 1 ? 0xFF80 : 0}})  // -128
            .emit(Cmd::SET_IFM_PRECISION, {{Field::SET_IFM_PRECISION__activation_type, 1},
                                           {Field::SET_IFM_PRECISION__activation_precision, precision()}})
            .emit(Cmd::SET_IFM_UPSCALE)
            .emit(Cmd::SET_IFM_PAD_TOP, {{Field::SET_IFM_PAD_TOP__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_LEFT, {{Field::SET_IFM_PAD_LEFT__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_BOTTOM, {{Field::SET_IFM_PAD_BOTTOM__pad, pad}})
            .emit(Cmd::SET_IFM_PAD_RIGHT, {{Field::SET_IFM_PAD_RIGHT__pad, pad}});
    }

    // per_channel: the OFM scale comes from the scale stream, else from OFM_SCALE.
    void emit_ofm(const Shape& s, uint64_t base, bool per_channel) {
        builder_.emit(Cmd::SET_OFM_REGION, {{Field::SET_OFM_REGION__region, kFeatureMapRegion}})
            .emit(Cmd::SET_OFM_BASE0, {{Field::SET_OFM_BASE0__addr, base}})
            .emit(Cmd::SET_OFM_BASE1, {{Field::SET_OFM_BASE1__addr, base}})
            .emit(Cmd::SET_OFM_BASE2, {{Field::SET_OFM_BASE2__addr, base}})
            .emit(Cmd::SET_OFM_BASE3, {{Field::SET_OFM_BASE3__addr, base}})
            .emit(Cmd::SET_OFM_HEIGHT_M1, {{Field::SET_OFM_HEIGHT_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_OFM_WIDTH_M1, {{Field::SET_OFM_WIDTH_M1__width_m1, s.width - 1}})
            .emit(Cmd::SET_OFM_HEIGHT0_M1, {{Field::SET_OFM_HEIGHT0_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_OFM_HEIGHT1_M1, {{Field::SET_OFM_HEIGHT1_M1__height_m1, s.height - 1}})
            .emit(Cmd::SET_OFM_WIDTH0_M1, {{Field::SET_OFM_WIDTH0_M1__width_m1, s.width - 1}})
            .emit(Cmd::SET_OFM_DEPTH_M1, {{Field::SET_OFM_DEPTH_M1__depth_m1, s.depth - 1}})
            .emit(Cmd::SET_OFM_STRIDE_X, {{Field::SET_OFM_STRIDE_X__addr, s.depth * bytes_}})
            .emit(Cmd::SET_OFM_STRIDE_Y, {{Field::SET_OFM_STRIDE_Y__addr, s.width * s.depth * bytes_}})
            .emit(Cmd::SET_OFM_STRIDE_C, {{Field::SET_OFM_STRIDE_C__addr, bytes_}})
            .emit(Cmd::SET_OFM_ZERO_POINT, {{Field::SET_OFM_ZERO_POINT__zero_point, bytes_ == 1 ? 3 : 0}})
            .emit(Cmd::SET_OFM_PRECISION, {{Field::SET_OFM_PRECISION__activation_type, 1},
                                           {Field::SET_OFM_PRECISION__activation_precision, precision()},
                                           {Field::SET_OFM_PRECISION__scale_mode, per_channel ? 0 : 1}})
            .emit(Cmd::SET_ACTIVATION)
            .emit(Cmd::SET_ACC_FORMAT)
            .emit(Cmd::SET_ACTIVATION_MIN, {{Field::SET_ACTIVATION_MIN__clip_boundary, bytes_ == 1 ? 0xFF80 : 0x8000}})
            .emit(Cmd::SET_ACTIVATION_MAX, {{Field::SET_ACTIVATION_MAX__clip_boundary, bytes_ == 1 ? 0x7F : 0x7FFF}})
            .emit(Cmd::SET_OFM_BLK_HEIGHT_M1, {{Field::SET_OFM_BLK_HEIGHT_M1__height_m1, 7}})
            .emit(Cmd::SET_OFM_BLK_WIDTH_M1, {{Field::SET_OFM_BLK_WIDTH_M1__width_m1, 7}})
            .emit(Cmd::SET_OFM_BLK_DEPTH_M1, {{Field::SET_OFM_BLK_DEPTH_M1__depth_m1, 15}})
            // The SHRAM layout registers every kernel op reads (the functional run ignores them).
            .emit(Cmd::SET_IFM_IB_END, {{Field::SET_IFM_IB_END__ib_end, 8}})
            .emit(Cmd::SET_AB_START, {{Field::SET_AB_START__ab_start, 8}})
            .emit(Cmd::SET_BLOCKDEP);
    }

    void emit_kernel(const Shape& s) {
        builder_.emit(Cmd::SET_KERNEL_HEIGHT_M1, {{Field::SET_KERNEL_HEIGHT_M1__height_m1, s.kernel - 1}})
            .emit(Cmd::SET_KERNEL_WIDTH_M1, {{Field::SET_KERNEL_WIDTH_M1__width_m1, s.kernel - 1}})
            .emit(Cmd::SET_KERNEL_STRIDE, {{Field::SET_KERNEL_STRIDE__stride_x_lsb, s.stride - 1},
                                           {Field::SET_KERNEL_STRIDE__stride_y_lsb, s.stride - 1}});
    }

    void emit_weights(uint64_t weights, uint64_t weight_length, uint64_t scales, uint64_t scale_length) {
        builder_.emit(Cmd::SET_WEIGHT_REGION, {{Field::SET_WEIGHT_REGION__region, kWeightRegion}})
            .emit(Cmd::SET_WEIGHT_BASE, {{Field::SET_WEIGHT_BASE__addr, weights}})
            .emit(Cmd::SET_WEIGHT_LENGTH, {{Field::SET_WEIGHT_LENGTH__length, weight_length}})
            .emit(Cmd::SET_SCALE_REGION, {{Field::SET_SCALE_REGION__region, kWeightRegion}})
            .emit(Cmd::SET_SCALE_BASE, {{Field::SET_SCALE_BASE__addr, scales}})
            .emit(Cmd::SET_SCALE_LENGTH, {{Field::SET_SCALE_LENGTH__length, scale_length}});
    }

private:
    uint64_t precision() const { return bytes_ == 1 ? 0 : 1; }  // activation_precision: 8 or 16 bits

    // Maps both regions (feature maps filled with a fixed pattern), decodes the stream and makes
    // the executor.
    void finish() {
        builder_.emit(Cmd::OP_STOP, {{Field::OP_STOP__mask, 0xFFFF}});
        auto fm = map_.allocate(kFeatureMapAddress, std::max<uint64_t>(fm_bytes_, 16), "feature maps");
        for (size_t i = 0; i < fm.size(); ++i) fm[i] = static_cast<uint8_t>(i * 29 + i / 253);
        weight_bytes_.resize(std::max<size_t>(weight_bytes_.size(), 16));
        map_.map(kWeightAddress, weight_bytes_, "weights");
        space_.set_base(kWeightRegion, kWeightAddress);
        space_.set_base(kFeatureMapRegion, kFeatureMapAddress);
        stream_ = decode_stream(config_, builder_.words(), "bench");
        executor_ = std::make_unique<Executor>(config_, space_, "bench");
    }

public:
    void run() { executor_->run(stream_); }

    // One untimed run (decodes the weights); an op the engine refuses skips the benchmark.
    bool ready(benchmark::State& state) {
        try {
            finish();
            run();
            return true;
        } catch (const Error& e) {
            state.SkipWithError(e.what());
            return false;
        }
    }

private:
    NpuConfig config_;
    CommandStreamBuilder builder_{Generation::U55};
    MemoryMap map_;
    AddressSpace space_;
    std::vector<uint8_t> weight_bytes_;
    int bytes_;
    uint64_t fm_bytes_ = 0;
    DecodedStream stream_;
    std::unique_ptr<Executor> executor_;
};

int16_t weight_value(size_t k) { return static_cast<int16_t>(static_cast<int>(k * 37 % 255) - 127); }

// CONV (depth-first weights) or DEPTHWISE, int8 or int16 (element_bytes), per-channel scales. Vela's depth-first order
// for IFM depths that are multiples of 32 and OFM depths that are multiples of the 16-deep block
// holds exactly OFM x taps x IFM values; depthwise pads each 8 channels' taps to a multiple of 4.
void kernel_op(benchmark::State& state, const Shape& s, bool depthwise, int element_bytes = 1) {
    OpHarness h(element_bytes);
    const Shape ifm = ifm_of(s);
    const int taps = s.kernel * s.kernel;
    const size_t count = depthwise ? static_cast<size_t>(s.depth) * ((taps + 3) / 4 * 4)
                                   : static_cast<size_t>(s.depth) * taps * s.ifm_depth;
    std::vector<int16_t> values(count);
    for (size_t k = 0; k < count; ++k) values[k] = weight_value(k);
    const auto weights = test_support::encode_values(values);
    const auto scales = scale_records(s.depth);
    const uint64_t weight_at = h.place_weights(weights), scale_at = h.place_weights(scales);
    h.emit_ifm(ifm, h.place_feature_map(ifm), s.pad);
    h.emit_ofm(s, h.place_feature_map(s), true);
    h.emit_kernel(s);
    h.emit_weights(weight_at, weights.size(), scale_at, scales.size());
    h.builder().emit(depthwise ? Cmd::OP_DEPTHWISE : Cmd::OP_CONV);
    if (!h.ready(state)) return;
    for (auto _ : state) h.run();
    const double macs = double(s.height) * s.width * s.depth * taps * (depthwise ? 1 : s.ifm_depth);
    state.counters["GMAC/s"] = benchmark::Counter(macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Conv1x1(benchmark::State& state) { kernel_op(state, {28, 28, 192, 32}, false); }
void BM_Conv3x3(benchmark::State& state) { kernel_op(state, {56, 56, 32, 32, 3, 1, 1}, false); }
void BM_Depthwise3x3(benchmark::State& state) { kernel_op(state, {56, 56, 144, 144, 3, 1, 1}, true); }
// int16 IFMs: 3x3x32 = 288 products per sum, more than int32 holds at 16 bits.
void BM_Conv3x3Int16(benchmark::State& state) { kernel_op(state, {56, 56, 32, 32, 3, 1, 1}, false, 2); }
void BM_Depthwise3x3Int16(benchmark::State& state) { kernel_op(state, {56, 56, 144, 144, 3, 1, 1}, true, 2); }

// Bytes moved: what the op reads plus what it writes.
void set_bytes(benchmark::State& state, double bytes) {
    state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Elementwise ADD of two int8 (or int16) tensors with OPA/OPB scaling.
void elementwise_add(benchmark::State& state, int element_bytes) {
    OpHarness h(element_bytes);
    const Shape s{56, 56, 32, 32};
    h.emit_ifm(s, h.place_feature_map(s), 0);
    h.emit_ifm2(s, h.place_feature_map(s));
    h.emit_ofm(s, h.place_feature_map(s), false);
    h.builder()
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1u << 30}, {Field::SET_OFM_SCALE__shift, 40}})
        .emit(Cmd::SET_OPA_SCALE, {{Field::SET_OPA_SCALE__scale, 1u << 30}, {Field::SET_OPA_SCALE__shift, 30}})
        .emit(Cmd::SET_OPB_SCALE, {{Field::SET_OPB_SCALE__scale, 3}})
        .emit(Cmd::OP_ELEMENTWISE, {{Field::OP_ELEMENTWISE__elementwise_mode, 1}});
    if (!h.ready(state)) return;
    for (auto _ : state) h.run();
    set_bytes(state, 3.0 * s.height * s.width * s.depth * element_bytes);
}
void BM_ElementwiseAdd(benchmark::State& state) { elementwise_add(state, 1); }
void BM_ElementwiseAddInt16(benchmark::State& state) { elementwise_add(state, 2); }

// 3x3 stride-2 pooling with padding (mode 0 MAX, 1 AVERAGE), int8 or int16.
void pool_op(benchmark::State& state, int mode, int element_bytes = 1) {
    OpHarness h(element_bytes);
    const Shape s{28, 28, 64, 64, 3, 2, 1};
    const Shape ifm = ifm_of(s);
    h.emit_ifm(ifm, h.place_feature_map(ifm), s.pad);
    h.emit_ofm(s, h.place_feature_map(s), false);
    h.emit_kernel(s);
    h.builder()
        .emit(Cmd::SET_OFM_SCALE, {{Field::SET_OFM_SCALE__scale, 1}, {Field::SET_OFM_SCALE__shift, 0}})
        .emit(Cmd::OP_POOL, {{Field::OP_POOL__pooling_mode, static_cast<uint64_t>(mode)}});
    if (!h.ready(state)) return;
    for (auto _ : state) h.run();
    set_bytes(state, (double(ifm.height) * ifm.width * ifm.depth + double(s.height) * s.width * s.depth) * element_bytes);
}
void BM_MaxPool3x3(benchmark::State& state) { pool_op(state, 0); }
void BM_MaxPool3x3Int16(benchmark::State& state) { pool_op(state, 0, 2); }
void BM_AvgPool3x3(benchmark::State& state) { pool_op(state, 1); }

// The weight bitstream alone: MB/s of stream bytes decoded. The output is sized by the value count,
// as the engine's U85 path passes it, rather than grown by doubling.
void BM_WeightDecode(benchmark::State& state) {
    std::vector<int16_t> values(192 * 9 * 64);
    for (size_t k = 0; k < values.size(); ++k) values[k] = weight_value(k);
    const auto stream = test_support::encode_values(values);
    for (auto _ : state) benchmark::DoNotOptimize(decode_weight_bitstream(stream, "bench", 0, values.size()));
    state.counters["MB/s"] =
        benchmark::Counter(double(stream.size()) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Conv1x1)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_Conv3x3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_Depthwise3x3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_Conv3x3Int16)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_Depthwise3x3Int16)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_ElementwiseAdd)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_ElementwiseAddInt16)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_MaxPool3x3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_MaxPool3x3Int16)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_AvgPool3x3)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();
BENCHMARK(BM_WeightDecode)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace
}  // namespace ethosu
