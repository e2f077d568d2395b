#include "emulator/engine/validate.h"

#include <fmt/format.h>

#include "emulator/isa/error.h"

namespace ethosu {

bool uses_accumulator_control(const DecodedOp& op) {
    return op.kind == OpKind::Conv || op.kind == OpKind::Depthwise || (op.kind == OpKind::Pool && op.pool == PoolMode::None);
}

namespace {

// Fields of the op's own, each refusal naming the register field it comes from.
class OpChecks {
public:
    OpChecks(const DecodedOp& op, const std::string& source) : op_(op), source_(source) {}

    [[noreturn]] void refuse(const char* field, const std::string& why,
                             ErrorKind kind = ErrorKind::Unsupported) const {
        throw Error({source_, op_.offset, field, OffsetKind::Command}, why, kind);
    }

private:
    const DecodedOp& op_;
    const std::string& source_;
};

// U85 features no corpus stream uses: refused rather than guessed.
void refuse_unmodelled_u85(const DecodedOp& op, const OpChecks& check) {
    auto unsupported = [&](const char* field, const char* what) {
        check.refuse(field, fmt::format("{} is not supported yet", what));
    };
    if (!uses_accumulator_control(op)) {
        if (op.output.acc_input != AccInput::Reset) {
            unsupported("NPU_SET_ACC_FORMAT.acc_input", "accumulator input KEEP/IFM2 outside CONV, DEPTHWISE and POOL NONE");
        }
        if (op.output.acc_output != AccOutput::Enable) {
            unsupported("NPU_SET_ACC_FORMAT.acc_output", "accumulator output DISABLE outside CONV, DEPTHWISE and POOL NONE");
        }
    }
    // Neither the register description nor Vela (which never emits it) says how TILE3X1 maps a
    // feature map onto its tile registers.
    for (const FeatureMap* fm : {&op.ifm, &op.ifm2, &op.ofm})
        if (fm->storage == Storage::Tile3x1) unsupported("activation_storage", "TILE3X1 feature map storage");
}

// An OFM transpose or reverse the hardware does not define: combined with each other or with a
// chained OFM (Vela never combines them), a channel reverse into NHCWB16 (Vela keeps its output
// linear: bricks have extra requirements it does not state), or an OFM block that does not fit
// the block limits, or a whole number of bricks, once transposed (Vela's block constraints).
void check_ofm_order(const DecodedOp& op, const OpChecks& check) {
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

void validate_elementwise(const DecodedOp& op, const NpuConfig& config, const OpChecks& check) {
    if (!config.traits().elementwise_scales_each_operand && !is_u55_mode(op.elementwise.mode))
        check.refuse("NPU_OP_ELEMENTWISE", "this elementwise mode does not exist on U55/U65", ErrorKind::Malformed);
}

}  // namespace

void validate(const DecodedOp& op, const NpuConfig& config, const std::string& source) {
    const OpChecks check(op, source);
    if (is_kernel_op(op.kind)) {
        // U55/U65 ops hold the defaults these check: the fields exist on U85 only.
        refuse_unmodelled_u85(op, check);
        check_ofm_order(op, check);
    }
    switch (op.kind) {
        case OpKind::Elementwise: validate_elementwise(op, config, check); break;
        default: break;
    }
}

}  // namespace ethosu
