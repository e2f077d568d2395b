#include "emulator/engine/validate.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/kernel_geometry.h"
#include "emulator/engine/output_stage.h"
#include "emulator/engine/weights.h"
#include "emulator/isa/error.h"

namespace ethosu {

bool uses_accumulator_control(const DecodedOp& op) {
    return op.kind == OpKind::Conv || op.kind == OpKind::Depthwise || (op.kind == OpKind::Pool && op.kernel().pool() == PoolMode::None);
}

namespace {

// One op's refusals, each naming the op's command offset and a register field (or the op).
class OpChecks {
public:
    OpChecks(const DecodedOp& op, const std::string& source) : op_(op), source_(source) {}

    [[noreturn]] void refuse(std::string_view field, const std::string& why,
                             ErrorKind kind = ErrorKind::Unsupported) const {
        throw Error({source_, op_.offset, std::string(field), OffsetKind::Command}, why, kind);
    }
    // Where the op itself is named (its kind, as the kernels' errors name it).
    LazyLocation op_place() const { return {&source_, op_.offset, op_kind_name(op_.kind)}; }
    LazyLocation place(std::string_view field) const { return {&source_, op_.offset, field}; }
    const std::string& source() const { return source_; }

private:
    const DecodedOp& op_;
    const std::string& source_;
};

// ---- Every kernel op ----

// U85 features no corpus stream uses: refused rather than guessed.
void refuse_unmodelled_u85(const DecodedOp& op, const OpChecks& check) {
    auto unsupported = [&](const char* field, const char* what) {
        check.refuse(field, fmt::format("{} is not supported yet", what));
    };
    if (!uses_accumulator_control(op)) {
        if (op.kernel().output.acc_input != AccInput::Reset) {
            unsupported("NPU_SET_ACC_FORMAT.acc_input", "accumulator input KEEP/IFM2 outside CONV, DEPTHWISE and POOL NONE");
        }
        if (op.kernel().output.acc_output != AccOutput::Enable) {
            unsupported("NPU_SET_ACC_FORMAT.acc_output", "accumulator output DISABLE outside CONV, DEPTHWISE and POOL NONE");
        }
    }
    // Neither the register description nor Vela (which never emits it) says how TILE3X1 maps a
    // feature map onto its tile registers.
    for (const FeatureMap* fm : {&op.kernel().ifm, &op.kernel().ifm2, &op.kernel().ofm})
        if (fm->storage == Storage::Tile3x1) unsupported("activation_storage", "TILE3X1 feature map storage");
}

// An OFM transpose or reverse the hardware does not define: combined with each other or with a
// chained OFM (Vela never combines them), a channel reverse into NHCWB16 (Vela keeps its output
// linear: bricks have extra requirements it does not state), or an OFM block that does not fit
// the block limits, or a whole number of bricks, once transposed (Vela's block constraints).
void check_ofm_order(const KernelOp& op, const OpChecks& check) {
    const FeatureMap& ofm = op.ofm;
    const bool transposed = ofm.transpose != OfmTranspose::HWC;
    const bool reversed = ofm.reverse != OfmReverse::None;
    if (!transposed && !reversed) return;
    constexpr const char* kTransposeField = "NPU_SET_OFM_PRECISION.activation_transpose";
    constexpr const char* kReverseField = "NPU_SET_OFM_PRECISION.activation_reverse";
    if (transposed && reversed) check.refuse(kReverseField, "an OFM reverse cannot be combined with an OFM transpose");
    if (ofm.storage == Storage::Chained) {
        check.refuse(transposed ? kTransposeField : kReverseField, "a chained OFM cannot be transposed or reversed");
    }
    if (ofm.reverse == OfmReverse::C && ofm.format == DataFormat::NHCWB16)
        check.refuse(kReverseField, "a channel reverse into an NHCWB16 OFM is not supported");
    if (!transposed) return;

    // Each stored axis takes the computed (pre-transpose) axis the mode names.
    constexpr int kBlockMax[3] = {128, 128, 1024};  // height, width, depth
    constexpr const char* kBlockFields[3] = {"NPU_SET_OFM_BLK_HEIGHT_M1.height_m1", "NPU_SET_OFM_BLK_WIDTH_M1.width_m1",
                                             "NPU_SET_OFM_BLK_DEPTH_M1.depth_m1"};
    constexpr const char* kAxisNames[3] = {"height", "width", "depth"};
    const int block[3] = {op.block.ofm_height, op.block.ofm_width, op.block.ofm_depth};
    const std::array<int, 3> from = stored_axes(ofm.transpose);
    for (int stored = 0; stored < 3; ++stored) {
        const int computed = from[static_cast<size_t>(stored)];
        if (block[computed] > kBlockMax[stored]) {
            check.refuse(kBlockFields[computed],
                         fmt::format("OFM block {} {} becomes the stored {}, which allows at most {}",
                                     kAxisNames[computed], block[computed], kAxisNames[stored], kBlockMax[stored]));
        }
    }
    const int into_depth = from[2];
    if (ofm.format == DataFormat::NHCWB16 && into_depth != 2 && block[into_depth] % 16 != 0) {
        check.refuse(kBlockFields[into_depth],
                     fmt::format("OFM block {} {} becomes the depth of an NHCWB16 OFM and must be a multiple of 16",
                                 kAxisNames[into_depth], block[into_depth]));
    }
}

// The output stage's activation on U55/U65: built-in TANH/SIGMOID as Vela uses them, and TABLE
// LUTs of 8-bit results (or clipped to 8 bits) inside the LUT memory.
void check_activation_u55(const DecodedOp& op, const OpChecks& check) {
    const int ofm_bits = op.kernel().ofm.precision.bits;
    switch (op.kernel().output.activation) {
        case Activation::None: return;
        case Activation::Table: break;
        case Activation::Sigmoid:
        case Activation::Tanh:
            // Vela uses the built-in functions for 16-bit OFMs only (zero point 0); U85 has LUTs instead.
            if (ofm_bits != 16 || op.kernel().ofm.zero_point != 0) {
                check.refuse(op_kind_name(op.kind), "built-in TANH/SIGMOID activations are supported on U55/U65 "
                                                    "16-bit OFMs with zero point 0 only");
            }
            return;
    }
    const ClipRange clip = op.kernel().output.clip_range;
    if (clip != ClipRange::ForceInt8 && clip != ClipRange::ForceUint8 && ofm_bits != 8)
        check.refuse(op_kind_name(op.kind), "interpolating 16-bit LUTs are not supported yet");
    const int entry_bytes = ofm_bits / 8;
    const int slots = Shram::kLutBytes / Shram::kLutSlotBytes;
    if ((slots - op.kernel().output.lut_index) * Shram::kLutSlotBytes < 256 * entry_bytes) {
        check.refuse(op_kind_name(op.kind),
                     fmt::format("TABLE_{} with {}-byte entries runs past the LUT memory", op.kernel().output.lut_index, entry_bytes),
                     ErrorKind::Malformed);
    }
}

// The output stage's LUT on U85: a determined type whose table fits the LUT RAM and whose 8-bit
// input range the clip leaves an entry of.
void check_activation_u85(const DecodedOp& op, const OpChecks& check) {
    if (op.kernel().output.activation == Activation::None) return;
    const std::string_view field = op_kind_name(op.kind);
    Range input{-128, 127};
    switch (op.kernel().output.lut) {
        case LutType::U8U8: input = {0, 255}; break;
        case LutType::S8S8:
        case LutType::S8S16:
        case LutType::S8S32: break;
        case LutType::Tanh:
        case LutType::Sigmoid: return;
        case LutType::S16S32:
            if (op.kernel().output.lut_index != 0) {
                check.refuse(field,
                             fmt::format("LUT_S16_S32 table {}: its 2 KB table fills the LUT RAM (table 0 only)",
                                         op.kernel().output.lut_index),
                             ErrorKind::Malformed);
            }
            return;
        // LUT_S16_S16 interpolates to 16 bits; how the hardware rounds slope * fraction / 128 is not
        // in the sources (Vela only uses it with slopes 0 and 128, where no rounding occurs).
        case LutType::S16S16:
            check.refuse(field, "16-bit input LUT_S16_S16 is not supported: its rounding is not determined");
        case LutType::None: check.refuse(field, "a LUT activation without a LUT type", ErrorKind::Malformed);
    }
    // ACTIVATION_MIN/MAX that miss the LUT's 8-bit input range leave no entry to look up (a clip
    // of 1000 and up would index past the table); no source says what the hardware does.
    if (op.kernel().output.clip_range != ClipRange::OfmType &&  // ACTIVATION_MIN/MAX apply
        std::max<int64_t>(op.kernel().output.clip_min, input.min) > std::min<int64_t>(op.kernel().output.clip_max, input.max)) {
        check.refuse("NPU_SET_ACTIVATION_MIN",
                     fmt::format("clip range {}..{} misses the LUT's input range {}..{}", op.kernel().output.clip_min,
                                 op.kernel().output.clip_max, input.min, input.max),
                     ErrorKind::Malformed);
    }
    // Table n of a LUT of s bytes starts at n * s in the LUT RAM.
    const int bytes = entry_bytes(op.kernel().output.lut);
    if ((op.kernel().output.lut_index * bytes + bytes) * Shram::kLutSlotBytes > Shram::kLutBytes) {
        check.refuse(field,
                     fmt::format("LUT table {} with {}-byte entries runs past the LUT RAM", op.kernel().output.lut_index, bytes),
                     ErrorKind::Malformed);
    }
}

void check_activation(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    if (config.traits().activation_names_lut_type) check_activation_u85(op, check);
    else check_activation_u55(op, check);
}

// Where the op's accumulators start and whether they fit the accumulator RAM when kept; what an
// earlier op left (KEEP) is the kernel's to check, as it depends on the path the stream took.
void check_accumulators(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    const AccFormat format = op.kernel().output.acc_format;
    if (op.kernel().output.acc_input == AccInput::Ifm2) {
        if (op.kernel().weights_from_ifm2) {
            check.refuse("NPU_SET_ACC_FORMAT.acc_input", "accumulator input IFM2 on a CONV that reads its weights from IFM2");
        }
        // Vela loads 32-bit accumulators from an int32 map, 48-bit ones from an int64 map, both
        // without zero point; the IFM2 zero point is not applied to raw sums.
        const int bits = format == AccFormat::I48 ? 64 : 32;
        if (op.kernel().ifm2.precision.bits != bits) {
            check.refuse("NPU_SET_IFM2_PRECISION",
                         fmt::format("accumulator input IFM2 for {}-bit accumulators needs a {}-bit IFM2, not {}-bit",
                                     format == AccFormat::I48 ? 48 : 32, bits, op.kernel().ifm2.precision.bits),
                         ErrorKind::Malformed);
        }
    }
    if (op.kernel().output.acc_output == AccOutput::Enable) return;
    const int64_t elements = int64_t{op.kernel().ofm.height} * op.kernel().ofm.width * op.kernel().ofm.depth;
    const int64_t capacity = accumulator_capacity(config, format);
    if (elements > capacity) {
        check.refuse("NPU_SET_ACC_FORMAT.acc_output",
                     fmt::format("{} keeps the accumulators of OFM {}, but the accumulator RAM of {} holds {}",
                                 op_kind_name(op.kind), accumulator_shape_text(op.kernel().ofm.height, op.kernel().ofm.width, op.kernel().ofm.depth, format),
                                 config.name, capacity),
                     ErrorKind::Malformed);
    }
}

// ---- By op kind ----

// U85 CONV with its weights in IFM2, as Vela 5.1 lowers MatMul and FullyConnected to it (conv.cc).
void check_conv_ifm2_weights(const KernelOp& op, const OpChecks& check) {
    if (op.kernel.width != 1 || op.kernel.height != 1) {
        check.refuse("NPU_SET_KERNEL_WIDTH_M1",
                     fmt::format("weights from IFM2 with a {}x{} kernel (Vela uses 1x1)", op.kernel.height, op.kernel.width));
    }
    if (op.ofm.height != 1) {
        check.refuse("NPU_SET_OFM_HEIGHT_M1",
                     fmt::format("weights from IFM2 for an OFM of {} rows: Vela writes one row, and which IFM2 row "
                                 "another row would read is not determined",
                                 op.ofm.height));
    }
    if (op.output.per_channel_scale) {
        check.refuse("NPU_SET_OFM_PRECISION.scale_mode", "weights from IFM2 with per-channel scaling (Vela writes a global OFM_SCALE)");
    }
    if (op.ifm2.precision.bits != op.ifm.precision.bits) {
        check.refuse("NPU_SET_IFM2_PRECISION",
                     fmt::format("{}-bit weights in IFM2 for a {}-bit IFM", op.ifm2.precision.bits, op.ifm.precision.bits),
                     ErrorKind::Malformed);
    }
}

void validate_conv(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    if (op.kernel().weights_from_ifm2) {
        check_conv_ifm2_weights(op.kernel(), check);
        ifm_geometry(op, check.op_place());
    } else {
        // Each DEPTHWISE OFM channel reads the IFM channel of its index, so the IFM holds at least as many.
        if (op.kind == OpKind::Depthwise && op.kernel().ofm.depth > op.kernel().ifm.depth) {
            check.refuse("NPU_SET_OFM_DEPTH_M1",
                         fmt::format("DEPTHWISE of {} OFM channels from an IFM of {}: each OFM channel reads its own "
                                     "IFM channel",
                                     op.kernel().ofm.depth, op.kernel().ifm.depth),
                         ErrorKind::Malformed);
        }
        ifm_geometry(op, check.op_place());
        check_weight_layout(op, config, check.source());
    }
    check_accumulators(op, config, check);
    check_activation(op, config, check);
}

// Vela 5.1 programs ARGMAX with OFM_SCALE scale 1, shift 16 and splits longer axes into windows
// of 32768 (pool.cc); what it never programs leaves the accumulator's contents undetermined.
void check_argmax(const KernelOp& op, const OpChecks& check) {
    const bool along_x = op.pool() == PoolMode::ArgMaxX;
    const Kernel& k = op.kernel;
    auto refuse = [&](const char* field, const std::string& why) {
        check.refuse(field, fmt::format("NPU_OP_POOL ARGMAX_{}: {}", along_x ? 'X' : 'Y', why));
    };
    const Scale& s = op.output.global_scale;
    if (op.output.per_channel_scale || s.scale != 1 || s.shift != kArgMaxIndexShift) {
        refuse("NPU_SET_OFM_SCALE", "only OFM_SCALE scale 1, shift 16 (global) is defined");
    }
    if (k.padding.top || k.padding.bottom) refuse("NPU_SET_IFM_PAD_TOP", "padding is undefined");
    if (k.padding.left || k.padding.right) refuse("NPU_SET_IFM_PAD_LEFT", "padding is undefined");
    if (k.upscale != UpscaleMode::None) refuse("NPU_SET_IFM_UPSCALE.mode", "an upscaled IFM is undefined");
    if (k.dilation_x != 1 || k.dilation_y != 1) refuse("NPU_SET_KERNEL_STRIDE", "a dilated window is undefined");
    if (along_x ? k.height != 1 : k.width != 1) {
        refuse(along_x ? "NPU_SET_KERNEL_HEIGHT_M1" : "NPU_SET_KERNEL_WIDTH_M1", "the window must be one-dimensional");
    }
    const int length = along_x ? k.width : k.height;
    if (length > kArgMaxLongestWindow) {
        refuse(along_x ? "NPU_SET_KERNEL_WIDTH_M1" : "NPU_SET_KERNEL_HEIGHT_M1",
               fmt::format("a window of {} elements; indices from 32768 on do not fit", length));
    }
    if (op.ifm.precision.bits > 16) {
        refuse("NPU_SET_IFM_PRECISION.activation_precision", "only 8- and 16-bit values are defined");
    }
}

void validate_pool(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    check_activation(op, config, check);
    switch (op.kernel().pool()) {
        case PoolMode::ReduceSum:
            if (op.kernel().kernel.upscale != UpscaleMode::None) {
                check.refuse("NPU_SET_IFM_UPSCALE.mode",
                             "NPU_OP_POOL: REDUCE_SUM with an upscaled IFM is undefined (Vela never programs it)");
            }
            return;
        case PoolMode::None:
            if (op.kernel().output.per_channel_scale) {
                check.refuse("NPU_SET_OFM_PRECISION.scale_mode",
                             "POOL NONE with per-channel scaling is not supported (Vela writes a global OFM_SCALE)");
            }
            check_accumulators(op, config, check);
            return;
        case PoolMode::ArgMaxX:
        case PoolMode::ArgMaxY: check_argmax(op.kernel(), check); break;
        default: break;
    }
    ifm_geometry(op, check.place("NPU_OP_POOL"));
}

bool is_u55_mode(ElementwiseMode m) {
    switch (m) {
        case ElementwiseMode::Add:
        case ElementwiseMode::Sub:
        case ElementwiseMode::Mul:
        case ElementwiseMode::Min:
        case ElementwiseMode::Max:
        case ElementwiseMode::LRelu:
        case ElementwiseMode::Abs:
        case ElementwiseMode::Clz:
        case ElementwiseMode::Shl:
        case ElementwiseMode::Shr: return true;
        default: return false;
    }
}

bool is_unit(const Scale& s) { return s.scale == 1 && s.shift == 0 && s.double_round == 0; }

// The modes the description marks same_type, unscaled and truncating (comparisons, bitwise
// modes, LSR, DIV) as Vela 5.1 programs them (graph optimisers and
// ethos_u85_register_cs_generator.cpp): same_type, IFM and IFM2 of one type (8, 16 or 32 bits)
// and OFM_SCALE unit; unscaled, also unit input scales and zero points 0; truncating, also the
// OFM rounding mode Vela writes (DOUBLE_SYMMETRIC, from AUTO) or TRUNCATE_TO_ZERO. Anything else
// has no reference to be checked against and is refused.
void check_integer_mode(const KernelOp& op, const OpChecks& check) {
    const ElementwiseMode m = op.elementwise().mode;
    auto refuse = [&](const char* field, const std::string& why) {
        check.refuse(field, fmt::format("elementwise mode {}: {}", EngineEnum<ElementwiseMode>::names[static_cast<size_t>(m)], why));
    };
    const Precision& p = op.ifm.precision;
    if (p.bits > 32) refuse("NPU_SET_IFM_PRECISION.activation_precision", "64-bit operands are undefined");
    if (op.has_ifm2 && !op.elementwise().ifm2_scalar &&
        (op.ifm2.precision.bits != p.bits || op.ifm2.precision.is_signed != p.is_signed)) {
        refuse("NPU_SET_IFM2_PRECISION.activation_precision", "IFM2 must have the IFM's type");
    }
    if (!is_unit(op.output.global_scale) || op.output.per_channel_scale) {
        refuse("NPU_SET_OFM_SCALE", "only a unit global OFM scale is defined (Vela writes no other)");
    }
    if (!unscaled(m)) return;
    if (!is_unit(op.elementwise().opa)) refuse("NPU_SET_IFM_SCALE", "only a unit IFM scale is defined");
    if (op.has_ifm2 && !is_unit(op.elementwise().opb)) refuse("NPU_SET_IFM2_SCALE", "only a unit IFM2 scale is defined");
    if (op.ifm.zero_point) refuse("NPU_SET_IFM_ZERO_POINT", "only zero point 0 is defined");
    if (op.has_ifm2 && op.ifm2.zero_point) refuse("NPU_SET_IFM2_ZERO_POINT", "only zero point 0 is defined");
    if (op.ofm.zero_point) refuse("NPU_SET_OFM_ZERO_POINT", "only zero point 0 is defined");
    const RoundMode round = op.output.round;
    if (truncating(m) && round != RoundMode::DoubleSymmetric && round != RoundMode::Truncate) {
        refuse("NPU_SET_OFM_SCALE.round_mode", "only DOUBLE_SYMMETRIC and TRUNCATE_TO_ZERO are defined");
    }
}

// The largest magnitude an operand reaches in its input scaling: its type's range (or its scalar)
// less its zero point, shifted left by dbl_rnd, then times scale / 2^(shift + dbl_rnd), plus one
// for the rounding. A pre-shifted magnitude past 64 bits is returned as it is: already too wide.
int128 scaled_bound(const FeatureMap& fm, int32_t scalar, const Scale& s) {
    const Precision& p = fm.precision;
    const int128 one = 1;
    const int128 lo = is_scalar(fm.broadcast) ? scalar : p.is_signed ? -(one << (p.bits - 1)) : 0;
    const int128 hi = is_scalar(fm.broadcast) ? scalar
                      : p.is_signed                   ? (one << (p.bits - 1)) - 1
                                                      : (one << p.bits) - 1;
    const int128 a = lo - fm.zero_point, b = hi - fm.zero_point;
    const int128 shifted = std::max(a < 0 ? -a : a, b < 0 ? -b : b) << s.double_round;  // below 2^65+31
    if (shifted > INT64_MAX) return shifted;
    return ((shifted * s.scale) >> (s.shift + s.double_round)) + 1;  // below 2^95
}

bool scales_operands(ElementwiseMode m) {
    switch (m) {
        case ElementwiseMode::Add: case ElementwiseMode::Sub: case ElementwiseMode::Mul: case ElementwiseMode::Min:
        case ElementwiseMode::Max: case ElementwiseMode::LRelu: case ElementwiseMode::Abs: case ElementwiseMode::CmpEq:
        case ElementwiseMode::CmpNe: case ElementwiseMode::CmpGe: case ElementwiseMode::CmpGt: return true;
        default: return false;
    }
}

// The scaling modes work in 64 bits: each operand shifted left by its dbl_rnd and scaled, then
// added (ADD, SUB), multiplied (MUL) or compared. Vela 5.1 programs 8- to 32-bit operands whose
// values stay far inside, and unit input scales for MUL (ethos_u85_register_cs_generator.cpp; no
// corpus stream has a 64-bit operand). Widths, scales and zero points that could carry a value past
// 64 bits have no defined result and are refused before the op runs, whatever the data: an int8
// MUL with zero point 32767 and IFM scale 2^19, or an ADD of two int64 operands, one scaled by
// 1557527444.
void check_scaled_range(const KernelOp& op, const OpChecks& check) {
    const Elementwise& e = op.elementwise();
    const ElementwiseMode m = e.mode;
    const int128 a = scaled_bound(op.ifm, e.scalar, e.opa);
    // LRELU scales the IFM's negative values by IFM2_SCALE; ABS negates the IFM before scaling it.
    const int128 b = m == ElementwiseMode::LRelu ? scaled_bound(op.ifm, e.scalar, e.opb)
                     : op.has_ifm2              ? scaled_bound(op.ifm2, e.scalar, e.opb)
                                                : 1;
    const auto refuse = [&](const char* what) {
        check.refuse("NPU_SET_IFM_SCALE",
                     fmt::format("elementwise mode {}: the scaled operands reach {} and {} in magnitude{}, which can "
                                 "leave 64 bits (input widths, scales and zero points no stream of Vela's reaches)",
                                 EngineEnum<ElementwiseMode>::names[static_cast<size_t>(m)], static_cast<double>(a),
                                 static_cast<double>(b), what));
    };
    // Each bound first: two of them past 64 bits can multiply past 128.
    if (a > INT64_MAX || b > INT64_MAX) refuse("");
    if (m == ElementwiseMode::Mul && a * b > INT64_MAX) refuse(", whose product");
    if ((m == ElementwiseMode::Add || m == ElementwiseMode::Sub) && a + b > INT64_MAX) refuse(", whose sum");
}

void validate_elementwise(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    check_activation(op, config, check);
    const ElementwiseMode m = op.kernel().elementwise().mode;
    if (!config.traits().elementwise_scales_each_operand) {
        if (!is_u55_mode(m))
            check.refuse("NPU_OP_ELEMENTWISE", "this elementwise mode does not exist on U55/U65", ErrorKind::Malformed);
        return;
    }
    if (same_type(m)) check_integer_mode(op.kernel(), check);
    if (scales_operands(m)) check_scaled_range(op.kernel(), check);
}

// One axis of a RESIZE (X: the ..._X registers, OFM width and block width; Y likewise): its
// step, block step and offset as the hardware defines them, and OFM positions inside the IFM.
struct ResizeAxis {
    char name;  // 'X' or 'Y'
    int scale_n, offset;
    const std::array<int, 4>& step;  // one_step_int, blk_step_int, one_step_mod, blk_step_mod
    int ofm_size, ofm_block, ifm_size;
    const char* ofm_size_register;
    const char* kernel_register;
};

void check_resize_axis(const ResizeAxis& a, const OpChecks& check) {
    const std::string resize_reg = fmt::format("NPU_SET_RESIZE_{}", a.name);
    auto fail = [&](const std::string& field, const std::string& what) {
        check.refuse(field, "NPU_OP_RESIZE: " + what, ErrorKind::Malformed);
    };
    const auto [one_int, blk_int, one_mod, blk_mod] = a.step;
    if (one_mod >= a.scale_n) {
        fail(resize_reg + ".one_step_mod",
             fmt::format("step remainder {} is not below the scale numerator n = {}", one_mod, a.scale_n));
    }
    if (blk_mod >= a.scale_n) {
        fail(resize_reg + ".blk_step_mod",
             fmt::format("block step remainder {} is not below the scale numerator n = {}", blk_mod, a.scale_n));
    }
    const int64_t step = resize_step(a.scale_n, a.step);
    if (step == 0) fail(resize_reg + ".one_step_int", "a zero step samples one IFM position for every OFM element");
    // Vela writes the walk over one OFM block (block - 1 steps); the hardware's stepping from block
    // to block for any other value is undocumented.
    const int64_t block_walk = int64_t{blk_int} * a.scale_n + blk_mod;
    if (block_walk != int64_t{a.ofm_block - 1} * step) {
        fail(resize_reg + ".blk_step_int",
             fmt::format("block step {}/{} is not (OFM block {} - 1) x step {}/{}", block_walk, a.scale_n,
                         a.ofm_block, step, a.scale_n));
    }
    // TOSA's bounds, -n <= offset < 16n (Vela asserts offset < n, yet its TFLite lowering of a
    // nearest-neighbour downscale such as 8 -> 2 gives more).
    if (a.offset < -a.scale_n || a.offset >= 16 * a.scale_n) {
        fail(fmt::format("NPU_SET_RESIZE_{}_OFFSET.resize_{}_offset", a.name, a.name == 'X' ? 'x' : 'y'),
             fmt::format("offset {} is outside -n .. 16n-1 for n = {}", a.offset, a.scale_n));
    }
    const int64_t last = floor_div(int64_t{a.ofm_size - 1} * step + a.offset, a.scale_n);
    if (last >= a.ifm_size) {
        fail(a.ofm_size_register,
             fmt::format("OFM size {} at step {}/{} and offset {} samples IFM index {}, past the IFM size {} ({})",
                         a.ofm_size, step, a.scale_n, a.offset, last, a.ifm_size, a.kernel_register));
    }
}

void validate_resize(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    auto fail = [&](const char* field, const std::string& what) {
        check.refuse(field, "NPU_OP_RESIZE: " + what, ErrorKind::Malformed);
    };
    const Resize& r = op.kernel().resize();
    if (op.kernel().kernel.upscale != UpscaleMode::None) fail("NPU_SET_IFM_UPSCALE.mode", "IFM upscaling with RESIZE is undefined");
    if (op.kernel().ifm.precision.bits > 16) {
        fail("NPU_SET_IFM_PRECISION.activation_precision",
             fmt::format("{}-bit IFMs cannot be resized (8 or 16 bits)", op.kernel().ifm.precision.bits));
    }
    if (op.kernel().ofm.depth != op.kernel().ifm.depth) {
        fail("NPU_SET_OFM_DEPTH_M1", fmt::format("OFM depth {} differs from IFM depth {}", op.kernel().ofm.depth, op.kernel().ifm.depth));
    }
    check_resize_axis({'X', r.x_scale_n, r.x_offset, r.x_step, op.kernel().ofm.width, op.kernel().block.ofm_width, op.kernel().ifm.width,
                       "NPU_SET_OFM_WIDTH_M1", "NPU_SET_KERNEL_WIDTH_M1"},
                      check);
    check_resize_axis({'Y', r.y_scale_n, r.y_offset, r.y_step, op.kernel().ofm.height, op.kernel().block.ofm_height, op.kernel().ifm.height,
                       "NPU_SET_OFM_HEIGHT_M1", "NPU_SET_KERNEL_HEIGHT_M1"},
                      check);
    check_activation(op, config, check);
}

// An internal-mode DMA: a 1-D transfer (Vela loads LUTs so) inside each core's SHRAM (U55/U65)
// or the LUT RAM (U85), to at least one core.
void check_internal_destination(const Dma& d, const NpuConfig& config, const OpChecks& check) {
    if (d.dimensions > 1 || d.scatter) {
        check.refuse(d.scatter ? "NPU_SET_DMA0_DST_REGION.idx_mode" : "NPU_SET_DMA0_SRC_REGION.stride_mode",
                     "a strided or scattered DMA into internal memory is not supported (Vela loads LUTs with 1-D "
                     "transfers)");
    }
    const int cores = Shram::cores_of(config);
    const uint64_t size = Shram::core_bytes_of(config), dst = d.dst.address;
    if (dst > size || d.length > size - dst) {
        check.refuse("NPU_SET_DMA0_DST",
                     fmt::format("DMA writes internal memory [0x{:x}, 0x{:x}), which holds {} bytes{}", dst,
                                 dst + d.length, size, cores > 1 ? " per core" : ""),
                     ErrorKind::Malformed);
    }
    if (!Shram::internal_core_mask(config, d)) {
        check.refuse("NPU_SET_DMA0_DST_REGION.region",
                     fmt::format("internal-mode DMA with core mask {} selects none of the {} core{} (Vela writes mask 3)",
                                 d.dst.region, cores, cores > 1 ? "s" : ""),
                     ErrorKind::Malformed);
    }
}

// A DMA the engine models: not out of internal memory, not indexed on both sides, with rows and
// planes when it has two or three dimensions, and into internal memory as Vela loads LUTs.
void validate_dma(const Dma& d, const NpuConfig& config, const OpChecks& check) {
    if (d.src.internal) check.refuse("NPU_OP_DMA_START", "DMA from internal memory is not supported");
    if (d.gather && d.scatter) {
        check.refuse("NPU_SET_DMA0_DST_REGION.idx_mode",
                     "index mode on both source and destination is not supported (Vela never emits it; its "
                     "behaviour is undocumented)");
    }
    if ((d.dimensions >= 2 && d.size0 == 0) || (d.dimensions >= 3 && d.size1 == 0)) {
        check.refuse(d.size0 == 0 ? "NPU_SET_DMA0_SIZE0" : "NPU_SET_DMA0_SIZE1",
                     fmt::format("a {}D DMA with {} rows and {} planes is not supported (undocumented behaviour)",
                                 d.dimensions, d.size0, d.size1));
    }
    if (d.dst.internal) check_internal_destination(d, config, check);
}

}  // namespace

void validate(const DecodedOp& op, const NpuConfig& config, const std::string& source) {
    const OpChecks check(op, source);
    if (is_kernel_op(op.kind)) {
        // U55/U65 ops hold the defaults these check: the fields exist on U85 only.
        refuse_unmodelled_u85(op, check);
        check_ofm_order(op.kernel(), check);
    }
    switch (op.kind) {
        case OpKind::Conv:
        case OpKind::Depthwise: validate_conv(op, config, check); return;
        case OpKind::Pool: validate_pool(op, config, check); return;
        case OpKind::Elementwise: validate_elementwise(op, config, check); return;
        case OpKind::Resize: validate_resize(op, config, check); return;
        case OpKind::DmaStart: validate_dma(op.dma(), config, check); return;
        case OpKind::DmaWait:
        case OpKind::KernelWait:
        case OpKind::PmuMask:
        case OpKind::Stop:
        case OpKind::Irq:
        case OpKind::Branch: return;
    }
}

}  // namespace ethosu
