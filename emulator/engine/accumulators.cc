// U85 accumulator control: NPU_SET_ACC_FORMAT acc_input (RESET / KEEP / IFM2) and acc_output
// (ENABLE / DISABLE), as Vela 5.1 programs them (ethos_u85_register_cs_generator.cpp
// GenerateAccFormat; the op splits in compiler/scheduler_decompose.cpp).

#include <fmt/format.h>

#include <utility>

#include "emulator/engine/kernel_context.h"
#include "emulator/isa/error.h"

namespace ethosu {

// A 48-bit accumulator takes 64 bits of the configuration's accumulator RAM. Vela cuts kept
// accumulators to a block that fits (scheduler_decompose.cpp NewOfmBlockShape).
int64_t accumulator_capacity(const NpuConfig& config, AccFormat format) {
    return int64_t{config.accumulator_ram_bytes} * 8 / (format == AccFormat::I48 ? 64 : 32);
}

std::string accumulator_shape_text(int h, int w, int c, AccFormat format) {
    return fmt::format("{}x{}x{} ({}-bit)", h, w, c, format == AccFormat::I48 ? 48 : 32);
}

AccumulatorIo::AccumulatorIo(const DecodedOp& op, ExecutionContext& ctx)
    : op_(op), height_(op.kernel().ofm.height), width_(op.kernel().ofm.width), depth_(op.kernel().ofm.depth),
      outputs_(op.kernel().output.acc_output == AccOutput::Enable) {
    const LazyLocation input_field{&ctx.source, op.offset, "NPU_SET_ACC_FORMAT.acc_input"};
    const size_t elements = static_cast<size_t>(height_) * width_ * depth_;
    const Accumulators& kept = ctx.accumulators;
    switch (op.kernel().output.acc_input) {
        case AccInput::Reset: break;
        case AccInput::Keep:
            if (!kept.kept) {
                throw Error(input_field, fmt::format("{} continues the accumulators (KEEP), but the op before it left "
                                                     "none (only an op with acc_output DISABLE does)",
                                                     op_kind_name(op.kind)));
            }
            if (kept.height != height_ || kept.width != width_ || kept.depth != depth_ || kept.format != op.kernel().output.acc_format) {
                throw Error(input_field,
                            fmt::format("{} continues accumulators (KEEP) of OFM {}, but the op at 0x{:x} left {}",
                                        op_kind_name(op.kind), accumulator_shape_text(height_, width_, depth_, op.kernel().output.acc_format),
                                        kept.left_by, accumulator_shape_text(kept.height, kept.width, kept.depth, kept.format)));
            }
            start_ = kept.values;
            break;
        case AccInput::Ifm2: {
            // An int32 or int64 map of the accumulators' width (validate() has checked IFM2's).
            const FeatureMapView ifm2 = ctx.view(op, op.kernel().ifm2, height_, width_, depth_, "IFM2");
            start_.resize(elements);
            for (int y = 0; y < height_; ++y)
                for (int x = 0; x < width_; ++x)
                    for (int c = 0; c < depth_; ++c)
                        start_[(static_cast<size_t>(y) * width_ + x) * depth_ + static_cast<size_t>(c)] = ifm2.load(y, x, c);
            break;
        }
    }
    if (!outputs_) kept_.assign(elements, 0);  // within the accumulator RAM (validate())
}

void AccumulatorIo::finish(Accumulators& store) {
    store.kept = !outputs_;
    store.values.clear();
    if (outputs_) return;
    store.height = height_, store.width = width_, store.depth = depth_;
    store.format = op_.kernel().output.acc_format;
    store.left_by = op_.offset;
    store.values = std::move(kept_);
}

}  // namespace ethosu
