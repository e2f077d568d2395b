// U85 CONV on hand-built streams against a plain convolution loop: random OHWI weights, dense and
// 2:4 sparse, encoded in Vela 5.1's U85 layout (tests/engine/weight_encoder_u85.h) as standard
// (SWD, one stream per weight decoder) and fast (FWD, one interleaved stream) weights; streams
// that break the 2:4 pattern are refused. CONV, fully connected, DEPTHWISE and MAX/AVERAGE pooling
// on every configuration from ethos-u85-128 to -2048.

#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <random>

#include "emulator/engine/executor.h"
#include "emulator/engine/weights.h"
#include "emulator/isa/builder.h"
#include "emulator/isa/error.h"
#include "tests/engine/tflite_math.h"
#include "tests/engine/u85_conv_rig.h"
#include "tests/engine/weight_encoder.h"
#include "tests/engine/weight_encoder_u85.h"

namespace ethosu {
namespace {

using namespace u85_conv_test;
using test_support::U85OrderSpec;
using Traversal = U85OrderSpec::Traversal;

struct WeightCase {
    const char* name;
    const char* config;
    int microblock;       // ACC_FORMAT.microblock
    int ofm_ublock_depth;  // that micro-block's depth on the configuration
    int ofm_block_depth;
    int ifm_block_depth;  // Vela's choice for the traversal, IFM precision and sparsity
    Traversal traversal;
    bool sparse, fast;
    int ifm_depth, ofm_depth, kernel_h, kernel_w, stride;
    int distinct_weights;  // 0: any value of the weight range
    int ifm_height = 7, ifm_width = 6;
};

void PrintTo(const WeightCase& c, std::ostream* os) { *os << c.name; }

// Random OHWI weights; sparse ones keep at most 2 non-zero values in each aligned group of 4
// IFM channels (sometimes fewer).
std::vector<int16_t> random_weights(const WeightCase& c, std::mt19937& rng) {
    const size_t count = static_cast<size_t>(c.ofm_depth) * c.kernel_h * c.kernel_w * c.ifm_depth;
    std::vector<int16_t> w(count);
    const int limit = c.sparse ? 127 : 255;
    std::uniform_int_distribution<int> any(-limit, limit);
    std::vector<int16_t> palette;
    for (int n = 0; n < c.distinct_weights; ++n) palette.push_back(static_cast<int16_t>(any(rng)));
    for (auto& v : w) v = static_cast<int16_t>(palette.empty() ? any(rng) : palette[rng() % palette.size()]);
    // Dense raw FWD holds 8-bit values (with a zero adjust): keep the range within 256.
    if (c.fast && !c.sparse && palette.empty()) {
        for (auto& v : w) v = static_cast<int16_t>(std::clamp<int>(v, -60, 195));
    }
    if (c.sparse) {
        for (size_t at = 0; at < count; at += static_cast<size_t>(c.ifm_depth)) {
            for (int g = 0; g < c.ifm_depth; g += 4) {
                const int n = std::min(4, c.ifm_depth - g);
                const int keep = static_cast<int>(rng() % 3);  // 0..2 non-zero
                std::vector<int> lanes(static_cast<size_t>(n));
                for (int i = 0; i < n; ++i) lanes[static_cast<size_t>(i)] = i;
                std::shuffle(lanes.begin(), lanes.end(), rng);
                for (int i = keep; i < n; ++i) w[at + static_cast<size_t>(g + lanes[static_cast<size_t>(i)])] = 0;
            }
        }
    }
    return w;
}

U85OrderSpec order_spec(const WeightCase& c, const NpuConfig& config) {
    U85OrderSpec s;
    s.traversal = c.traversal;
    s.decoders = config.cores;
    s.macs = config.macs;
    s.ofm_depth = c.ofm_depth;
    s.kernel_h = c.kernel_h;
    s.kernel_w = c.kernel_w;
    s.ifm_depth = c.ifm_depth;
    s.ofm_block_depth = c.ofm_block_depth;
    s.ifm_block_depth = c.ifm_block_depth;
    s.ofm_ublock_depth = c.ofm_ublock_depth;
    s.sparse = c.sparse;
    s.stride_x = s.stride_y = c.stride;
    return s;
}

// The streams as Vela lays them out: one per decoder (SWD), or one interleaving them all (FWD).
std::vector<std::vector<uint8_t>> encode_weights(const WeightCase& c, const NpuConfig& config,
                                                 const std::vector<int16_t>& ohwi) {
    const U85OrderSpec spec = order_spec(c, config);
    std::vector<std::vector<int16_t>> per_decoder;
    for (int d = 0; d < spec.decoders; ++d) {
        std::vector<int16_t> values;
        for (const auto& [o, y, x, i] : test_support::u85_vela_order(spec, d)) {
            values.push_back(o < 0 ? int16_t{0}
                                   : ohwi[((static_cast<size_t>(o) * c.kernel_h + y) * c.kernel_w + x) * c.ifm_depth + i]);
        }
        per_decoder.push_back(std::move(values));
    }
    if (c.fast) {
        return {test_support::encode_fast(test_support::interleave_fast(per_decoder, test_support::u85_fast_block(spec)),
                                          c.sparse)};
    }
    std::vector<std::vector<uint8_t>> streams;
    for (const auto& values : per_decoder) streams.push_back(test_support::encode_values(values));
    return streams;
}

class U85ConvWeights : public ::testing::TestWithParam<WeightCase> {};

// Depthwise OHWI weights (I = 1) as the convolution's: each OFM channel reads only its own IFM
// channel, so the plain convolution loop is the depthwise reference.
std::vector<int16_t> depthwise_as_convolution(const WeightCase& c, const std::vector<int16_t>& depthwise) {
    std::vector<int16_t> dense(static_cast<size_t>(c.ofm_depth) * c.kernel_h * c.kernel_w * c.ofm_depth);
    for (int o = 0; o < c.ofm_depth; ++o)
        for (int tap = 0; tap < c.kernel_h * c.kernel_w; ++tap)
            dense[(static_cast<size_t>(o) * c.kernel_h * c.kernel_w + tap) * c.ofm_depth + o] =
                depthwise[static_cast<size_t>(o) * c.kernel_h * c.kernel_w + tap];
    return dense;
}

TEST_P(U85ConvWeights, ConvEqualsPlainLoop) {
    const WeightCase& c = GetParam();
    const bool depthwise = c.traversal == Traversal::Depthwise;
    std::mt19937 rng(1234);
    Rig rig(c.config);
    const Geometry g = same_padding(c.ifm_height, c.ifm_width, c.kernel_h, c.kernel_w, c.stride);
    const FeatureMap8 ifm =
        rig.random_ifm(c.ifm_height, c.ifm_width, depthwise ? c.ofm_depth : c.ifm_depth, -11, rng);
    const auto weights = random_weights(c, rng);
    const auto scales = random_scales(c.ofm_depth, rng);

    ConvRegs r;
    r.ifm = rig.place(ifm);
    r.ofm = rig.reserve(g.ofm_height, g.ofm_width, c.ofm_depth, Rig::kInt8, 5);
    r.kernel_h = c.kernel_h, r.kernel_w = c.kernel_w, r.stride = c.stride, r.pad = g.pad;
    r.part_kernel_first = c.traversal == Traversal::PartKernelFirst;
    r.fast = c.fast, r.sparse = c.sparse;
    r.weights = rig.add_weights(encode_weights(c, rig.config(), weights));
    r.scales = rig.add_scales(scales, c.ofm_ublock_depth);
    r.microblock = c.microblock;
    r.ofm_block_depth = c.ofm_block_depth;
    r.depthwise = depthwise;
    rig.emit_conv(r);
    rig.run();

    const auto expected = plain_conv(ifm, depthwise ? depthwise_as_convolution(c, weights) : weights, scales,
                                     c.ofm_depth, c.kernel_h, c.kernel_w, c.stride, g, 5);
    EXPECT_EQ(rig.read8(r.ofm), expected);
}

// Block depths: Vela's IFM block is 64 deep for 8-bit depth-first convolutions (32 on the
// 128/256-MAC arrays with a 16-deep micro-block), 128 when sparse, 16 for part-kernel-first.
const WeightCase kWeightCases[] = {
    {"dense_swd_u85_256", "ethos-u85-256", 1, 16, 32, 32, Traversal::DepthFirst, false, false, 72, 40, 3, 3, 1, 0},
    {"dense_fwd_raw_u85_256", "ethos-u85-256", 1, 16, 32, 32, Traversal::DepthFirst, false, true, 72, 40, 3, 3, 1, 0},
    {"dense_fwd_lut4_u85_256", "ethos-u85-256", 1, 16, 16, 32, Traversal::DepthFirst, false, true, 40, 20, 3, 2, 1, 11},
    {"dense_fwd_lut2_u85_256", "ethos-u85-256", 1, 16, 16, 32, Traversal::DepthFirst, false, true, 40, 20, 2, 3, 1, 3},
    {"sparse_swd_u85_256", "ethos-u85-256", 1, 16, 32, 128, Traversal::DepthFirst, true, false, 136, 40, 3, 3, 1, 0},
    {"sparse_fwd_u85_256", "ethos-u85-256", 1, 16, 32, 128, Traversal::DepthFirst, true, true, 136, 40, 3, 3, 1, 0},
    {"sparse_part_kernel_swd_u85_256", "ethos-u85-256", 1, 16, 16, 16, Traversal::PartKernelFirst, true, false, 20,
     24, 3, 3, 2, 0},
    {"sparse_part_kernel_fwd_u85_256", "ethos-u85-256", 1, 16, 16, 16, Traversal::PartKernelFirst, true, true, 20, 24,
     3, 3, 2, 0},
    {"dense_part_kernel_fwd_u85_512", "ethos-u85-512", 3, 16, 32, 16, Traversal::PartKernelFirst, false, true, 20, 36,
     3, 3, 2, 0},
    {"dense_swd_u85_1024", "ethos-u85-1024", 3, 32, 64, 64, Traversal::DepthFirst, false, false, 72, 72, 3, 3, 1, 0},
    {"dense_fwd_u85_1024", "ethos-u85-1024", 3, 32, 64, 64, Traversal::DepthFirst, false, true, 72, 72, 3, 3, 1, 0},
    {"sparse_swd_u85_1024", "ethos-u85-1024", 3, 32, 32, 128, Traversal::DepthFirst, true, false, 136, 72, 2, 2, 1, 0},
    {"sparse_fwd_u85_1024", "ethos-u85-1024", 3, 32, 32, 128, Traversal::DepthFirst, true, true, 136, 72, 2, 2, 1, 0},
    {"sparse_part_kernel_fwd_u85_2048", "ethos-u85-2048", 3, 64, 64, 16, Traversal::PartKernelFirst, true, true, 24,
     70, 3, 3, 1, 0},
    // Every configuration: CONV, fully connected (a 1x1 kernel over a 1x1 IFM) and DEPTHWISE with
    // standard weights, one stream per weight decoder (1 / 2 / 4), on the first micro-block of
    // Vela 5.1's table for the configuration (ethos_u85.cpp: U1X2 8 deep on ethos-u85-128, U2X2 16
    // deep on -512 and 64 deep on -2048).
    {"conv_u85_128", "ethos-u85-128", 1, 8, 16, 64, Traversal::DepthFirst, false, false, 24, 20, 3, 3, 1, 0},
    {"fully_connected_u85_128", "ethos-u85-128", 1, 8, 16, 64, Traversal::DepthFirst, false, false, 64, 10, 1, 1, 1, 0,
     1, 1},
    {"depthwise_u85_128", "ethos-u85-128", 1, 8, 16, 64, Traversal::Depthwise, false, false, 1, 20, 3, 3, 1, 0},
    {"conv_u85_512", "ethos-u85-512", 3, 16, 32, 64, Traversal::DepthFirst, false, false, 24, 40, 3, 3, 2, 0},
    {"fully_connected_u85_512", "ethos-u85-512", 3, 16, 32, 64, Traversal::DepthFirst, false, false, 64, 10, 1, 1, 1,
     0, 1, 1},
    {"depthwise_u85_512", "ethos-u85-512", 3, 16, 16, 64, Traversal::Depthwise, false, false, 1, 40, 3, 3, 1, 0},
    {"conv_u85_2048", "ethos-u85-2048", 3, 64, 64, 64, Traversal::DepthFirst, false, false, 72, 70, 3, 3, 1, 0},
    {"fully_connected_u85_2048", "ethos-u85-2048", 3, 64, 64, 64, Traversal::DepthFirst, false, false, 64, 100, 1, 1,
     1, 0, 1, 1},
    {"depthwise_u85_2048", "ethos-u85-2048", 3, 64, 64, 64, Traversal::Depthwise, false, false, 1, 70, 3, 3, 2, 0},
};

INSTANTIATE_TEST_SUITE_P(Cases, U85ConvWeights, ::testing::ValuesIn(kWeightCases),
                         [](const auto& info) { return std::string(info.param.name); });

// The weight decoder alone: the streams decode to exactly the OHWI weights encoded, for every case
// above and depthwise orders (IFM depth 1, stride phases, padding per 10 taps on the larger arrays).
TEST(U85WeightDecoding, StreamsDecodeToTheEncodedWeights) {
    std::vector<WeightCase> cases(std::begin(kWeightCases), std::end(kWeightCases));
    cases.push_back({"depthwise_u85_256", "ethos-u85-256", 1, 16, 16, 64, Traversal::Depthwise, false, false, 1, 40, 3,
                     3, 2, 0});
    cases.push_back({"depthwise_u85_1024", "ethos-u85-1024", 3, 32, 32, 64, Traversal::Depthwise, false, false, 1, 70,
                     5, 4, 1, 0});
    for (const WeightCase& c : cases) {
        SCOPED_TRACE(c.name);
        std::mt19937 rng(42);
        const NpuConfig config = *find_npu_config(c.config);
        const auto weights = random_weights(c, rng);
        std::vector<uint8_t> bytes;
        DecodedOp op(c.traversal == Traversal::Depthwise ? OpKind::Depthwise : OpKind::Conv);
        op.kernel().ifm.depth = c.traversal == Traversal::Depthwise ? c.ofm_depth : c.ifm_depth;
        op.kernel().ofm.depth = c.ofm_depth;
        op.kernel().kernel.height = c.kernel_h, op.kernel().kernel.width = c.kernel_w;
        op.kernel().kernel.stride_x = op.kernel().kernel.stride_y = c.stride;
        op.kernel().kernel.part_kernel_first = c.traversal == Traversal::PartKernelFirst;
        op.kernel().block.ofm_depth = c.ofm_block_depth;
        op.kernel().output.microblock = static_cast<MicroBlock>(c.microblock);
        op.kernel().weight_format = c.fast ? WeightFormat::Fast : WeightFormat::Standard;
        op.kernel().sparse_2_4 = c.sparse;
        for (const auto& stream : encode_weights(c, config, weights)) {
            op.kernel().weights.push_back({0, bytes.size(), stream.size()});
            bytes.insert(bytes.end(), stream.begin(), stream.end());
        }
        while (static_cast<int>(op.kernel().weights.size()) < config.cores) op.kernel().weights.push_back({0, bytes.size(), 0});
        const StreamFetch fetch = [&](const Stream& s) { return std::span<const uint8_t>(bytes).subspan(s.base, s.length); };
        const OpWeights decoded = decode_op_weights(op, config, fetch, "u85-weights");
        EXPECT_EQ(decoded.values, weights);
    }
}

// A dense stream (3 non-zero weights in a group of 4) programmed as 2:4 sparse is refused.
// Each DEPTHWISE OFM channel reads its own IFM channel: an OFM deeper than the IFM is refused
// before any weight is decoded (it would read past the IFM).
TEST(U85Depthwise, OfmDeeperThanIfmIsRefused) {
    std::mt19937 rng(7);
    Rig rig("ethos-u85-256");
    ConvRegs r;
    r.depthwise = true;
    r.ifm = rig.place(rig.random_ifm(4, 4, 8, 0, rng));
    r.ofm = rig.reserve(4, 4, 16, Rig::kInt8, 0);
    const uint32_t at = rig.emit_conv(r);
    try {
        rig.run();
        FAIL() << "a DEPTHWISE of 16 channels from 8 ran";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, at);
        EXPECT_EQ(e.where().field, "NPU_SET_OFM_DEPTH_M1");
    }
}

TEST(U85SparseWeights, StreamBreakingThePatternIsRefused) {
    WeightCase c = kWeightCases[4];
    for (const bool fast : {false, true}) {
        c.fast = fast;
        std::mt19937 rng(99);
        auto weights = random_weights(c, rng);
        weights[static_cast<size_t>(c.ifm_depth) * 5 + 4] = 7;  // OFM 0, tap (1, 2), IFM 4..7
        weights[static_cast<size_t>(c.ifm_depth) * 5 + 5] = -3;
        weights[static_cast<size_t>(c.ifm_depth) * 5 + 6] = 9;
        Rig rig(c.config);
        const Geometry g = same_padding(7, 6, c.kernel_h, c.kernel_w, c.stride);
        ConvRegs r;
        r.ifm = rig.place(rig.random_ifm(7, 6, c.ifm_depth, 0, rng));
        r.ofm = rig.reserve(g.ofm_height, g.ofm_width, c.ofm_depth, Rig::kInt8, 0);
        r.kernel_h = c.kernel_h, r.kernel_w = c.kernel_w, r.pad = g.pad;
        r.fast = c.fast, r.sparse = true;
        r.weights = rig.add_weights(encode_weights(c, rig.config(), weights));
        r.scales = rig.add_scales(random_scales(c.ofm_depth, rng), c.ofm_ublock_depth);
        r.microblock = c.microblock;
        r.ofm_block_depth = c.ofm_block_depth;
        const uint32_t at = rig.emit_conv(r);
        try {
            rig.run();
            FAIL() << "a 3:4 group was accepted as 2:4 sparse";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, at);
            EXPECT_EQ(e.where().field, "NPU_SET_WEIGHT_FORMAT.weight_sparsity");
            EXPECT_NE(std::string(e.what()).find("IFM channels 4..7 of OFM 0, kernel (1, 2)"), std::string::npos)
                << e.what();
        }
    }
}

// MatMul as Vela lowers it for U85: IFM [1, 1, M, K] times IFM2 [1, 1, N, K] (the right-hand
// matrix transposed, its zero point kept) into OFM [1, 1, M, N], global OFM_SCALE; the
// contraction split in two parts that keep the accumulators, as DecomposeMatmul splits long ones.
struct MatMul {
    static constexpr int kRows = 9, kColumns = 21, kContraction = 40;
    std::mt19937 rng{5};
    FeatureMap8 lhs, rhs;
    ChannelScale scale;

    explicit MatMul(const Rig& rig)
        : lhs(rig.random_ifm(1, kRows, kContraction, 7, rng)), rhs(rig.random_ifm(1, kColumns, kContraction, -20, rng)),
          scale(random_scales(1, rng)[0]) {
        scale.bias = 0;
    }

    std::vector<int8_t> expected(int32_t zero_point) const {
        std::vector<int64_t> sums;
        for (int m = 0; m < kRows; ++m)
            for (int n = 0; n < kColumns; ++n) {
                int64_t sum = 0;
                for (int k = 0; k < kContraction; ++k)
                    sum += int64_t{lhs.at(0, m, k) - lhs.zero_point} * (rhs.at(0, n, k) - rhs.zero_point);
                sums.push_back(sum);
            }
        return requantize(sums, {scale}, zero_point);
    }

    ConvRegs regs(Rig& rig, const FeatureMap8& a, const FeatureMap8& b, const Place& ofm) const {
        ConvRegs r;
        r.ifm = rig.place(a);
        r.has_ifm2 = true;
        r.weights_from_ifm2 = true;
        r.ifm2 = rig.place(b);
        r.ofm = ofm;
        r.global_scale = true;
        r.ofm_scale = static_cast<uint32_t>(scale.multiplier);
        r.ofm_shift = 31 - scale.shift;
        return r;
    }
};

// The channels [first, first + count) of a map.
FeatureMap8 channels(const FeatureMap8& fm, int first, int count) {
    FeatureMap8 part{fm.height, fm.width, count, fm.zero_point, {}};
    for (int y = 0; y < fm.height; ++y)
        for (int x = 0; x < fm.width; ++x)
            for (int c = first; c < first + count; ++c) part.values.push_back(fm.at(y, x, c));
    return part;
}

TEST(U85Ifm2Weights, MatMulEqualsPlainLoop) {
    Rig rig("ethos-u85-256");
    const MatMul mm(rig);
    const Place ofm = rig.reserve(1, MatMul::kRows, MatMul::kColumns, Rig::kInt8, 3);
    rig.emit_conv(mm.regs(rig, mm.lhs, mm.rhs, ofm));
    rig.run();
    EXPECT_EQ(rig.read8(ofm), mm.expected(3));
}

TEST(U85Ifm2Weights, MatMulSplitOverTheContractionKeepsTheAccumulators) {
    Rig rig("ethos-u85-1024");
    const MatMul mm(rig);
    const Place ofm = rig.reserve(1, MatMul::kRows, MatMul::kColumns, Rig::kInt8, -1);
    constexpr int kFirst = 24;
    ConvRegs first = mm.regs(rig, channels(mm.lhs, 0, kFirst), channels(mm.rhs, 0, kFirst), ofm);
    first.acc_output = 1;  // DISABLE
    rig.emit_conv(first);
    ConvRegs second = mm.regs(rig, channels(mm.lhs, kFirst, MatMul::kContraction - kFirst),
                              channels(mm.rhs, kFirst, MatMul::kContraction - kFirst), ofm);
    second.acc_input = 1;  // KEEP
    rig.emit_conv(second);
    rig.run();
    EXPECT_EQ(rig.read8(ofm), mm.expected(-1));
}

TEST(U85Ifm2Weights, UndeterminedLayoutsAreRefused) {
    struct Case {
        const char* field;
        void (*change)(ConvRegs&);
    };
    const Case cases[] = {
        {"NPU_SET_OFM_PRECISION.scale_mode", [](ConvRegs& r) { r.global_scale = false; }},
        {"NPU_SET_KERNEL_WIDTH_M1", [](ConvRegs& r) { r.kernel_w = 2; }},
        {"NPU_SET_OFM_HEIGHT_M1", [](ConvRegs& r) { r.ofm.height = 2, r.ofm.width = 4; }},
        {"NPU_SET_IFM2_PRECISION", [](ConvRegs& r) { r.ifm2.precision = Rig::kInt32; }},
    };
    for (const Case& c : cases) {
        Rig rig("ethos-u85-256");
        const MatMul mm(rig);
        ConvRegs r = mm.regs(rig, mm.lhs, mm.rhs, rig.reserve(1, MatMul::kRows, MatMul::kColumns, Rig::kInt8, 0));
        c.change(r);
        const uint32_t at = rig.emit_conv(r);
        try {
            rig.run();
            ADD_FAILURE() << c.field << ": the stream ran";
        } catch (const Error& e) {
            EXPECT_EQ(e.where().offset, at) << c.field;
            EXPECT_EQ(e.where().field, c.field) << e.what();
        }
    }
}

// MAX and AVERAGE pooling as Vela 5.1 programs maxpool_k3s2_same_15x15x24 and
// avgpool_k3s1_same_12x12x20 (../shared/vectors, ethos-u85-256 listings): 3x3 SAME windows,
// global OFM_SCALE 1 / shift 0 for MAX and 2^30 / shift 30 for the padded AVERAGE (the hardware
// divides by the valid count), on each configuration's first micro-block, against plain loops:
// the window's largest value, or its sum rounded half away from zero over the valid count.
struct PoolConfig {
    const char* config;
    int microblock;
    int ofm_block_depth;
};

TEST(U85Pooling, MaxAndAverageEqualPlainLoopsOnEveryConfiguration) {
    constexpr int kMax = 0, kAverage = 1;
    const PoolConfig configs[] = {{"ethos-u85-128", 1, 16}, {"ethos-u85-256", 1, 16}, {"ethos-u85-512", 3, 16},
                                  {"ethos-u85-2048", 3, 64}};
    for (const PoolConfig& pc : configs) {
        for (const int mode : {kMax, kAverage}) {
            SCOPED_TRACE(std::string(pc.config) + (mode == kMax ? " MAX" : " AVERAGE"));
            const int size = mode == kMax ? 15 : 12, depth = mode == kMax ? 24 : 20, stride = mode == kMax ? 2 : 1;
            const int32_t zero_point = -3;
            std::mt19937 rng(77);
            Rig rig(pc.config);
            const Geometry g = same_padding(size, size, 3, 3, stride);
            const FeatureMap8 ifm = rig.random_ifm(size, size, depth, zero_point, rng);
            ConvRegs r;
            r.ifm = rig.place(ifm);
            r.ofm = rig.reserve(g.ofm_height, g.ofm_width, depth, Rig::kInt8, zero_point);
            r.pool = mode;
            r.kernel_h = r.kernel_w = 3, r.stride = stride, r.pad = g.pad;
            r.global_scale = true;
            r.ofm_scale = mode == kMax ? 1 : 1u << 30;
            r.ofm_shift = mode == kMax ? 0 : 30;
            r.microblock = pc.microblock;
            r.ofm_block_depth = pc.ofm_block_depth;
            rig.emit_conv(r);
            rig.run();

            std::vector<int8_t> expected;
            for (int oy = 0; oy < g.ofm_height; ++oy)
                for (int ox = 0; ox < g.ofm_width; ++ox)
                    for (int c = 0; c < depth; ++c) {
                        int sum = 0, count = 0, largest = INT32_MIN;
                        for (int ky = 0; ky < 3; ++ky)
                            for (int kx = 0; kx < 3; ++kx) {
                                const int y = oy * stride - g.pad.top + ky, x = ox * stride - g.pad.left + kx;
                                if (y < 0 || y >= size || x < 0 || x >= size) continue;
                                const int v = ifm.at(y, x, c) - zero_point;
                                sum += v, ++count, largest = std::max(largest, v);
                            }
                        const int average = sum >= 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
                        const int value = (mode == kMax ? largest : average) + zero_point;
                        expected.push_back(static_cast<int8_t>(std::clamp(value, -128, 127)));
                    }
            EXPECT_EQ(rig.read8(r.ofm), expected);
        }
    }
}

}  // namespace
}  // namespace ethosu
