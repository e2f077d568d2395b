#pragma once
// The immutable record the decoder freezes at every NPU_OP_* command: everything the
// engine and the timing model need, in generation-neutral terms. Neither of them reads
// raw command words. A common header (kind, offset, ...) and one body per op family.

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "emulator/isa/isa_enums.h"  // the engine enums the descriptions define (RoundMode, ...)
#include "emulator/isa/npu_config.h"
#include "emulator/isa/op_kind.h"

namespace ethosu {


// U85 OFM activation_transpose (OfmTranspose) names the order of the stored axes, outermost
// first, in terms of the axes the op computes (its OFM_HEIGHT/WIDTH/DEPTH): WHC stores computed W
// as rows, H as columns. activation_reverse (OfmReverse) writes one computed axis back to front.
// U55/U65 feature maps are always Storage::Tile2x2.
// For each stored axis (height, width, depth), the computed axis it holds (0 H, 1 W, 2 C).
constexpr std::array<int, 3> stored_axes(OfmTranspose t) {
    switch (t) {
        case OfmTranspose::HWC: return {0, 1, 2};
        case OfmTranspose::WHC: return {1, 0, 2};
        case OfmTranspose::HCW: return {0, 2, 1};
        case OfmTranspose::WCH: return {1, 2, 0};
        case OfmTranspose::CHW: return {2, 0, 1};
        case OfmTranspose::CWH: return {2, 1, 0};
    }
    return {0, 1, 2};
}

struct Precision {
    bool is_signed = false;
    int bits = 8;  // 8, 16, 32 or 64
    int bytes() const { return bits / 8; }
};

// One feature map (IFM, IFM2 or OFM) as the hardware addresses it: up to four tiles.
struct FeatureMap {
    int region = 0;
    std::array<uint64_t, 4> tile_base{};  // byte offsets inside the region
    int width0 = 0;                        // width of tiles 0 and 2
    int height0 = 0;                       // height of tile 0
    int height1 = 0;                       // height of tile 1
    int width = 0, height = 0, depth = 0;  // the whole map (OFM registers, or inferred for IFMs)
    int64_t stride_x = 0, stride_y = 0, stride_c = 0;
    DataFormat format = DataFormat::NHWC;
    Precision precision;
    int32_t zero_point = 0;
    Storage storage = Storage::Tile2x2;
    BroadcastMode broadcast = BroadcastMode::None;  // U85; U55/U65: Elementwise's IFM2 flags
    OfmReverse reverse = OfmReverse::None;      // U85 OFM only
    OfmTranspose transpose = OfmTranspose::HWC;  // U85 OFM only
};

struct Padding {
    int top = 0, left = 0, bottom = 0, right = 0;
};


struct Kernel {
    int width = 1, height = 1;  // dilated size, as programmed
    int stride_x = 1, stride_y = 1;
    int dilation_x = 1, dilation_y = 1;
    bool part_kernel_first = false;  // weight order
    Padding padding;
    UpscaleMode upscale = UpscaleMode::None;

    // The taps the weights hold: the programmed (dilated) extent with the dilation undone.
    int taps_height() const { return (height - 1) / std::max(1, dilation_y) + 1; }
    int taps_width() const { return (width - 1) / std::max(1, dilation_x) + 1; }
};

struct Stream {
    int region = 0;
    uint64_t base = 0;
    uint64_t length = 0;
};

struct Scale {
    uint32_t scale = 0;
    int shift = 0;
    int double_round = 0;  // U85 dbl_rnd
    RoundMode round = RoundMode::DoubleSymmetric;
};


struct OutputStage {
    bool per_channel_scale = true;  // scale/bias stream, else global_scale
    Scale global_scale;
    RoundMode round = RoundMode::DoubleSymmetric;
    Activation activation = Activation::None;
    int lut_index = 0;      // U55/U65 TABLE_n slot; U85 table number
    LutType lut = LutType::None;  // U85 activation_function: the LUT's element types
    ClipRange clip_range = ClipRange::OfmPrecision;
    int32_t clip_min = 0, clip_max = 0;
    AccFormat acc_format = AccFormat::I32;
    AccInput acc_input = AccInput::Reset;      // U85
    AccOutput acc_output = AccOutput::Enable;  // U85
    MicroBlock microblock = MicroBlock::U1x1;  // U85
};

struct Elementwise {
    ElementwiseMode mode = ElementwiseMode::Add;
    // U55/U65 IFM2 broadcast flags and scalar
    bool broadcast_h = false, broadcast_w = false, broadcast_c = false;
    bool ifm2_scalar = false;   // operand is the scalar, not a tensor
    bool reversed_operands = false;  // operand_order ORDER_A: IFM2 is the first operand
    int32_t scalar = 0;
    OperandScaling operand_scaling = OperandScaling::Both16;  // U55/U65 IFM_PRECISION.scale_mode
    Scale opa;                  // U55/U65 OPA_SCALE, U85 IFM_SCALE
    Scale opb;                  // U55/U65 OPB_SCALE, U85 IFM2_SCALE
};

struct BlockConfig {
    int ofm_width = 0, ofm_height = 0, ofm_depth = 0;  // the OFM block
    int blockdep = 0;
};


// U85 NPU_OP_RESIZE. Along each axis OFM element o samples the IFM at (o * step + offset) / n
// IFM elements, step = one_step_int * n + one_step_mod; blk_step is the same walk over one OFM
// block less one element. The IFM area it reads is ifm.height x ifm.width (kernel registers).
struct Resize {
    ResizeMode mode = ResizeMode::Bilinear;
    int x_scale_n = 1, y_scale_n = 1;
    int x_offset = 0, y_offset = 0;
    std::array<int, 4> x_step{};  // one_step_int, blk_step_int, one_step_mod, blk_step_mod
    std::array<int, 4> y_step{};
};

struct DmaEndpoint {
    int region = 0;      // region, or a core mask / SHRAM target when internal
    bool internal = false;  // SHRAM (U55/U65 LUT loads) / internal memory
    uint64_t address = 0;
};

struct Dma {
    DmaEndpoint src, dst;
    uint64_t length = 0;  // bytes per row (the whole transfer when 1D)
    int dimensions = 1;   // 1, 2 or 3
    int size0 = 1, size1 = 1;  // rows per plane, planes
    // Bytes from one row start to the next (stride0) and one plane start to the next (stride1);
    // on U65 derived from LEN, SIZE0 and the skips.
    int64_t src_stride0 = 0, src_stride1 = 0;
    int64_t dst_stride0 = 0, dst_stride1 = 0;
    // U85 index mode: gather reads row r of plane p from src + p * src_stride1 + index * src_stride0,
    // scatter writes it to dst + p * dst_stride1 + index * dst_stride0. The indices are int32,
    // SIZE0 per plane, with index_skip1 bytes skipped after each plane's indices; an index above
    // index_max is out of range.
    bool gather = false, scatter = false;
    Stream index;  // where the indices are; length: the bytes the transfer's indices span
    uint32_t index_max = 0;
    uint64_t index_skip1 = 0;
};
constexpr uint64_t kDmaIndexBytes = 4;


// What one kernel op kind adds to the family: a pool its mode, an elementwise its operands, a
// resize its sampling. Conv and Depthwise add nothing.
using KernelKindParts = std::variant<std::monostate, PoolMode, Elementwise, Resize>;

// The body of a kernel op (Conv, Depthwise, Pool, Elementwise, Resize).
struct KernelOp {
    FeatureMap ifm, ifm2, ofm;
    bool has_ifm2 = false;
    Kernel kernel;
    std::vector<Stream> weights;  // one per core / weight decoder
    std::vector<Stream> scales;   // one per core
    bool weights_from_ifm2 = false;  // U85 dynamic weights
    WeightFormat weight_format = WeightFormat::Standard;  // U85 SWD / FWD
    bool sparse_2_4 = false;         // U85
    OutputStage output;
    BlockConfig block;
    KernelKindParts parts;

    // The kind's own parts; asking a kind for parts it does not have is a logic error.
    PoolMode& pool() { return part<PoolMode>("a pool mode"); }
    PoolMode pool() const { return part<PoolMode>("a pool mode"); }
    Elementwise& elementwise() { return part<Elementwise>("elementwise operands"); }
    const Elementwise& elementwise() const { return part<Elementwise>("elementwise operands"); }
    Resize& resize() { return part<Resize>("resize sampling"); }
    const Resize& resize() const { return part<Resize>("resize sampling"); }
    // IFM2 is a scalar operand (elementwise ops only), not a map in memory.
    bool ifm2_is_scalar() const {
        const Elementwise* e = std::get_if<Elementwise>(&parts);
        return e && e->ifm2_scalar;
    }

private:
    template <class T> T& part(const char* what) { return part_of<T>(*this, what); }
    template <class T> const T& part(const char* what) const { return part_of<T>(*this, what); }
    template <class T, class Self> static auto& part_of(Self& self, const char* what) {
        if (auto* p = std::get_if<T>(&self.parts)) return *p;
        throw std::logic_error(std::string("kernel op has no ") + what);
    }
};

// DMA_WAIT k, KERNEL_WAIT n: the number of operations that may stay outstanding.
struct WaitOp {
    int count = 0;
};

// STOP, IRQ: the mask the command carries.
struct SignalOp {
    uint32_t mask = 0;
};

// PMU_MASK: whether the PMU counts.
struct PmuOp {
    bool enable = false;
};

struct BranchOp {
    BranchCondition condition = BranchCondition::Always;
    uint32_t target = 0;  // byte offset in the command stream
};

// One body per op family: kernel, DMA (DmaStart: its Dma), wait, and the three control shapes.
using OpBody = std::variant<KernelOp, Dma, WaitOp, SignalOp, PmuOp, BranchOp>;

// The body a kind of op holds, with its defaults.
OpBody default_body(OpKind kind);

// The common header plus the body of the op's family. The accessors are checked: asking an op for
// another family's body is a logic error (std::logic_error), never a read of unused fields.
struct DecodedOp {
    OpKind kind = OpKind::Stop;
    uint32_t offset = 0;  // byte offset of the NPU_OP_* command in the stream
    int index = 0;        // position among the stream's ops (in an executed trace: among the executed ops)
    // Where the command processor began reading the commands that lead to this op: the end of
    // the previous op, or the offset a branch entered the straight-line block at.
    uint32_t fetch_start = 0;
    // Registers the op read that the stream never wrote (a lenient decode reads them as 0).
    std::vector<isa::Cmd> unset_registers;
    OpBody body = SignalOp{};

    DecodedOp() = default;
    explicit DecodedOp(OpKind k) : kind(k), body(default_body(k)) {}

    KernelOp& kernel() { return get<KernelOp>("kernel"); }
    const KernelOp& kernel() const { return get<KernelOp>("kernel"); }
    Dma& dma() { return get<Dma>("DMA"); }
    const Dma& dma() const { return get<Dma>("DMA"); }
    WaitOp& wait() { return get<WaitOp>("wait"); }
    const WaitOp& wait() const { return get<WaitOp>("wait"); }
    SignalOp& signal() { return get<SignalOp>("STOP/IRQ"); }
    const SignalOp& signal() const { return get<SignalOp>("STOP/IRQ"); }
    PmuOp& pmu() { return get<PmuOp>("PMU_MASK"); }
    const PmuOp& pmu() const { return get<PmuOp>("PMU_MASK"); }
    BranchOp& branch() { return get<BranchOp>("branch"); }
    const BranchOp& branch() const { return get<BranchOp>("branch"); }

private:
    template <class T> T& get(const char* family) { return body_of<T>(*this, family); }
    template <class T> const T& get(const char* family) const { return body_of<T>(*this, family); }
    template <class T, class Self> static auto& body_of(Self& self, const char* family) {
        if (auto* p = std::get_if<T>(&self.body)) return *p;
        throw std::logic_error(std::string(op_kind_name(self.kind)) + " op has no " + family + " body");
    }
};

}  // namespace ethosu
