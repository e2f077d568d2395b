#include "emulator/engine/work_budget.h"

#include <fmt/format.h>

#include <array>
#include <initializer_list>
#include <string>

#include "emulator/engine/kernel_geometry.h"
#include "emulator/isa/error.h"

namespace ethosu {
namespace {

uint64_t positive(int v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

uint64_t saturating_product(std::initializer_list<uint64_t> factors) {
    uint64_t product = 1;
    for (const uint64_t f : factors)
        if (__builtin_mul_overflow(product, f, &product)) return UINT64_MAX;
    return product;
}

// The factors of an op's work (none for ops that do none): computed per op, so without allocating.
struct WorkFactors {
    std::array<uint64_t, 6> values{};
    size_t count = 0;
    void add(uint64_t v) { values[count++] = v; }
};

WorkFactors work_factors(const DecodedOp& op) {
    WorkFactors f;
    const bool kernel = op.kind == OpKind::Conv || op.kind == OpKind::Depthwise || op.kind == OpKind::Pool;
    if (is_kernel_op(op.kind)) {
        const KernelOp& k = op.kernel();
        for (const int d : {k.ofm.height, k.ofm.width, k.ofm.depth}) f.add(positive(d));
        if (kernel) {
            f.add(positive(k.kernel.taps_height()));
            f.add(positive(k.kernel.taps_width()));
        }
        if (op.kind == OpKind::Conv) f.add(positive(k.ifm.depth));
    }
    if (op.kind == OpKind::DmaStart) {
        const Dma& d = op.dma();
        f.add(d.length);
        f.add(d.dimensions >= 2 ? positive(d.size0) : 1);
        f.add(d.dimensions >= 3 ? positive(d.size1) : 1);
    }
    return f;
}

// How the work of an op reads in an error: its factors and their product (which may not fit 64
// bits), to three digits.
std::string work_text(const DecodedOp& op) {
    const WorkFactors f = work_factors(op);
    double product = 1;
    for (size_t i = 0; i < f.count; ++i) product *= double(f.values[i]);
    if (op.kind == OpKind::DmaStart)
        return fmt::format("{} bytes x {} rows x {} planes = {:.3g}", f.values[0], f.values[1], f.values[2], product);
    const KernelOp& k = op.kernel();
    const std::string elements = fmt::format("OFM {}x{}x{}", k.ofm.height, k.ofm.width, k.ofm.depth);
    const std::string taps = fmt::format("{}x{} taps", k.kernel.taps_height(), k.kernel.taps_width());
    std::string factors;
    switch (op.kind) {
        case OpKind::Conv: factors = fmt::format("{} x {} x IFM depth {}", elements, taps, k.ifm.depth); break;
        case OpKind::Depthwise:
        case OpKind::Pool: factors = fmt::format("{} x {}", elements, taps); break;
        default: factors = elements; break;
    }
    return fmt::format("{} = {:.3g}", factors, product);
}

}  // namespace

uint64_t op_work(const DecodedOp& op) {
    const WorkFactors f = work_factors(op);
    if (f.count == 0) return 0;
    uint64_t product = 1;
    for (size_t i = 0; i < f.count; ++i) product = saturating_product({product, f.values[i]});
    return product;
}

// The sizes are those the kernels allocate: executor.cc (chained OFM, upscaled IFM, whose depth
// is the OFM's for a pool), conv.cc (IFM2 weights, a CONV's IFM patch of taps x IFM depth),
// accumulators.cc (IFM2 accumulators of the OFM's shape).
void WorkBudget::check_register_sized_buffers(const DecodedOp& op) const {
    if (!is_kernel_op(op.kind)) return;
    const KernelOp& k = op.kernel();
    const bool kernel = op.kind == OpKind::Conv || op.kind == OpKind::Depthwise || op.kind == OpKind::Pool;
    const FeatureMap& ofm = k.ofm;
    const uint64_t ofm_elements = saturating_product({positive(ofm.height), positive(ofm.width), positive(ofm.depth)});
    if (ofm.storage == Storage::Chained)
        check_allocation(op, saturating_product({ofm_elements, positive(ofm.precision.bytes())}), "chained OFM");
    if (kernel && k.kernel.upscale != UpscaleMode::None) {
        const IfmGeometry geo = ifm_geometry(op, LazyLocation{&source_, op.offset, op_kind_name(op.kind)});
        const int depth = op.kind == OpKind::Pool ? ofm.depth : k.ifm.depth;
        check_allocation(op,
                         saturating_product({positive(geo.height), positive(geo.width), positive(depth),
                                             positive(k.ifm.precision.bytes())}),
                         "upscaled IFM");
    }
    if (op.kind == OpKind::Conv && k.weights_from_ifm2) {
        check_allocation(op, saturating_product({positive(ofm.depth), positive(k.ifm.depth), sizeof(int64_t)}),
                         "weights from IFM2");
    }
    if (op.kind == OpKind::Conv && !k.weights_from_ifm2) {
        check_allocation(op,
                         saturating_product({positive(k.kernel.taps_height()), positive(k.kernel.taps_width()),
                                             positive(k.ifm.depth), sizeof(int16_t)}),
                         "IFM patch of a kernel");
    }
    if (kernel && k.output.acc_input == AccInput::Ifm2)
        check_allocation(op, saturating_product({ofm_elements, sizeof(int64_t)}), "accumulators loaded from IFM2");
}

void WorkBudget::charge(const DecodedOp& op) {
    // Called for every op: the error's strings are built only when it is thrown.
    const uint64_t work = op_work(op);
    if (work > limits_.max_op_work) {
        throw Error({source_, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                    fmt::format("the op's work, {}, is above the limit of {} per op (raise it with --max-op-work)",
                                work_text(op), limits_.max_op_work),
                    ErrorKind::LimitExceeded);
    }
    if (__builtin_add_overflow(run_work_, work, &run_work_)) run_work_ = UINT64_MAX;
    if (run_work_ > limits_.max_run_work) {
        throw Error({source_, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                    fmt::format("the run's work reaches {} with this op, above the limit of {} per run (a branch loop "
                                "that never ends? raise it with --max-run-work)",
                                run_work_, limits_.max_run_work),
                    ErrorKind::LimitExceeded);
    }
    check_register_sized_buffers(op);
}

void WorkBudget::check_allocation(const DecodedOp& op, uint64_t bytes, std::string_view what) const {
    if (bytes <= limits_.max_allocation_bytes) return;
    throw Error({source_, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                fmt::format("the {} needs {} bytes, above the limit of {} per buffer (raise it with --max-allocation)",
                            what, bytes, limits_.max_allocation_bytes),
                    ErrorKind::LimitExceeded);
}

}  // namespace ethosu
