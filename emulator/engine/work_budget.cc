#include "emulator/engine/work_budget.h"

#include <fmt/format.h>

#include <array>
#include <string>

#include "emulator/isa/error.h"

namespace ethosu {
namespace {

uint64_t positive(int v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// The factors of an op's work (none for ops that do none): computed per op, so without allocating.
struct WorkFactors {
    std::array<uint64_t, 6> values{};
    size_t count = 0;
    void add(uint64_t v) { values[count++] = v; }
};

WorkFactors work_factors(const DecodedOp& op) {
    WorkFactors f;
    const bool kernel = op.kind == OpKind::Conv || op.kind == OpKind::Depthwise || op.kind == OpKind::Pool;
    if (kernel || op.kind == OpKind::Elementwise || op.kind == OpKind::Resize) {
        for (const int d : {op.ofm.height, op.ofm.width, op.ofm.depth}) f.add(positive(d));
    }
    if (kernel) {
        f.add(positive(op.kernel.taps_height()));
        f.add(positive(op.kernel.taps_width()));
    }
    if (op.kind == OpKind::Conv) f.add(positive(op.ifm.depth));
    if (op.kind == OpKind::DmaStart) {
        const Dma& d = op.dma;
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
    const FeatureMap& ofm = op.ofm;
    const std::string elements = fmt::format("OFM {}x{}x{}", ofm.height, ofm.width, ofm.depth);
    const std::string taps = fmt::format("{}x{} taps", op.kernel.taps_height(), op.kernel.taps_width());
    std::string factors;
    switch (op.kind) {
        case OpKind::Conv: factors = fmt::format("{} x {} x IFM depth {}", elements, taps, op.ifm.depth); break;
        case OpKind::Depthwise:
        case OpKind::Pool: factors = fmt::format("{} x {}", elements, taps); break;
        case OpKind::DmaStart:
            factors = fmt::format("{} bytes x {} rows x {} planes", f.values[0], f.values[1], f.values[2]);
            break;
        default: factors = elements; break;
    }
    return fmt::format("{} = {:.3g}", factors, product);
}

}  // namespace

uint64_t op_work(const DecodedOp& op) {
    const WorkFactors f = work_factors(op);
    if (f.count == 0) return 0;
    uint64_t product = 1;
    for (size_t i = 0; i < f.count; ++i)
        if (__builtin_mul_overflow(product, f.values[i], &product)) return UINT64_MAX;
    return product;
}

void WorkBudget::charge(const DecodedOp& op) {
    // Called for every op: the error's strings are built only when it is thrown.
    const uint64_t work = op_work(op);
    if (work > limits_.max_op_work) {
        throw Error({source_, op.offset, std::string(op_kind_name(op.kind))},
                    fmt::format("the op's work, {}, is above the limit of {} per op (raise it with --max-op-work)",
                                work_text(op), limits_.max_op_work));
    }
    if (__builtin_add_overflow(run_work_, work, &run_work_)) run_work_ = UINT64_MAX;
    if (run_work_ > limits_.max_run_work) {
        throw Error({source_, op.offset, std::string(op_kind_name(op.kind))},
                    fmt::format("the run's work reaches {} with this op, above the limit of {} per run (a branch loop "
                                "that never ends? raise it with --max-run-work)",
                                run_work_, limits_.max_run_work));
    }
}

void WorkBudget::check_allocation(const DecodedOp& op, uint64_t bytes, std::string_view what) const {
    if (bytes <= limits_.max_allocation_bytes) return;
    throw Error({source_, op.offset, std::string(op_kind_name(op.kind))},
                fmt::format("the {} needs {} bytes, above the limit of {} per buffer (raise it with --max-allocation)",
                            what, bytes, limits_.max_allocation_bytes));
}

}  // namespace ethosu
