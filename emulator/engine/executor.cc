#include "emulator/engine/executor.h"

#include <fmt/format.h>

#include <tbb/parallel_for.h>

#include <algorithm>

#include "emulator/isa/error.h"

namespace ethosu {

Shram::Shram(const NpuConfig& config)
    // U85 has no SHRAM; its 2 KB LUT RAM is modelled by the same LUT area.
    : bytes_(static_cast<size_t>(config.shram_kb > 0 ? config.shram_kb * 1024 : kLutBytes)) {}

std::span<const uint8_t> Shram::lut(int slot) const {
    return std::span<const uint8_t>(bytes_).subspan(lut_base() + static_cast<size_t>(slot) * kLutSlotBytes);
}

void Shram::mark_written(uint64_t offset, uint64_t length) {
    const uint64_t begin = std::max(offset, lut_base()), end = std::min(offset + length, uint64_t{bytes_.size()});
    for (uint64_t at = begin; at < end; ++at) lut_written_[at - lut_base()] = true;
}

bool Shram::lut_loaded(int first, int slots) const {
    const auto begin = lut_written_.begin() + static_cast<ptrdiff_t>(first) * kLutSlotBytes;
    return std::all_of(begin, begin + static_cast<ptrdiff_t>(slots) * kLutSlotBytes, [](bool b) { return b; });
}

namespace {

// A U55/U65 table activation reads its slot and, for entries wider than a byte, the slots after
// it; reading SHRAM no DMA has written would silently use zeros.
void check_lut_loaded(const DecodedOp& op, const Shram& shram, const NpuConfig& config, const std::string& source) {
    if (config.generation == Generation::U85 || !is_kernel_op(op.kind) || op.output.activation != Activation::Table)
        return;
    const ErrorLocation where{source, op.offset, std::string(op_kind_name(op.kind))};
    const int slot = op.output.lut_index;
    constexpr int kSlots = Shram::kLutBytes / Shram::kLutSlotBytes;
    // SET_ACTIVATION's 5-bit function field can name tables past the last slot.
    if (slot < 0 || slot >= kSlots) {
        throw Error(where, fmt::format("TABLE_{}: the LUT has slots 0..{}", slot, kSlots - 1));
    }
    const int slots = std::clamp(op.ofm.precision.bits / 8, 1, kSlots - slot);
    if (shram.lut_loaded(slot, slots)) return;
    throw Error(where,
                fmt::format("TABLE_{} activation reads LUT slot{} {}{}, which no DMA has loaded", slot,
                            slots > 1 ? "s" : "", slot, slots > 1 ? fmt::format("..{}", slot + slots - 1) : ""));
}

// Whether the concatenation of spans equals bytes, without building the concatenation.
bool same_bytes(const std::vector<uint8_t>& bytes, const std::vector<std::span<const uint8_t>>& spans) {
    size_t at = 0;
    for (const auto& s : spans) {
        if (s.size() > bytes.size() - at || !std::equal(s.begin(), s.end(), bytes.begin() + static_cast<ptrdiff_t>(at)))
            return false;
        at += s.size();
    }
    return at == bytes.size();
}

// The op's weight streams, then its scale streams, in the order the key lists them.
template <typename Read>
void for_each_stream(const DecodedOp& op, Read&& read) {
    for (const auto& s : op.weights) read(s, 0);
    for (const auto& s : op.scales) read(s, AddressSpace::kRegions);
}

// decode_op_weights on spans that hold op.weights then op.scales.
OpWeights decode_from_spans(const DecodedOp& op, const NpuConfig& config,
                            const std::vector<std::span<const uint8_t>>& spans, const std::string& source) {
    const StreamFetch fetch = [&](const Stream& s) {
        const bool is_weight = &s >= op.weights.data() && &s < op.weights.data() + op.weights.size();
        const size_t index = is_weight ? static_cast<size_t>(&s - op.weights.data())
                                       : op.weights.size() + static_cast<size_t>(&s - op.scales.data());
        return spans.at(index);
    };
    return decode_op_weights(op, config, fetch, source);
}

std::vector<uint8_t> concatenate(const std::vector<std::span<const uint8_t>>& spans) {
    std::vector<uint8_t> bytes;
    for (const auto& b : spans) bytes.insert(bytes.end(), b.begin(), b.end());
    return bytes;
}

// The bytes a stream of the op at position `at` will read, as far as the DMAs before it tell.
std::span<const uint8_t> predicted_bytes(const DecodedStream& stream, size_t at, const Stream& s,
                                         const AddressSpace& memory, const AccessContext& who) {
    for (size_t k = at; k-- > 0;) {
        const DecodedOp& op = stream.ops[k];
        if (op.kind != OpKind::DmaStart) continue;
        const Dma& d = op.dma;
        if (d.dst.internal || d.src.internal || d.dimensions != 1 || d.dst.region != s.region) continue;
        if (d.dst.address <= s.base && s.base - d.dst.address <= d.length && s.length <= d.length - (s.base - d.dst.address))
            return memory.read(d.src.region, d.src.address + (s.base - d.dst.address), s.length, who);
    }
    return memory.read(s.region, s.base, s.length, who);
}

}  // namespace

WeightCache::Key WeightCache::key_of(const DecodedOp& op) {
    const Kernel& k = op.kernel;
    return {op.offset,
            {static_cast<int>(op.kind), op.ofm.depth, op.ifm.depth, k.height, k.width, k.dilation_x, k.dilation_y,
             k.part_kernel_first ? 1 : 0, op.block.ofm_depth, op.ifm.precision.bits},
            {}};
}

const OpWeights& WeightCache::get(const DecodedOp& op, const NpuConfig& config, const AddressSpace& memory,
                                  const std::string& source) {
    Key fresh = key_of(op);
    std::get<0>(lookup_) = std::get<0>(fresh);
    std::get<1>(lookup_) = std::get<1>(fresh);
    std::get<2>(lookup_).clear();
    spans_.clear();
    const AccessContext who{&source, op.offset, op_kind_name(op.kind), "weight/scale stream"};
    for_each_stream(op, [&](const Stream& s, int tag) {
        std::get<2>(lookup_).emplace_back(s.region + tag, s.base, s.length);
        spans_.push_back(memory.read(s.region, s.base, s.length, who));
    });
    auto found = cache_.find(lookup_);
    if (found != cache_.end() && found->second.weights && same_bytes(found->second.stream_bytes, spans_))
        return *found->second.weights;
    Entry& entry = found != cache_.end() ? found->second : cache_[lookup_];
    entry.weights = std::make_unique<OpWeights>(decode_from_spans(op, config, spans_, source));
    entry.stream_bytes = concatenate(spans_);
    return *entry.weights;
}

void WeightCache::prefetch(const DecodedStream& stream, const NpuConfig& config, const AddressSpace& memory,
                           const std::string& source) {
    struct Job {
        const DecodedOp* op;
        Key key;
        std::vector<std::span<const uint8_t>> spans;
        Entry entry;
    };
    std::vector<Job> jobs;
    for (size_t at = 0; at < stream.ops.size(); ++at) {
        const DecodedOp& op = stream.ops[at];
        if (op.kind != OpKind::Conv && op.kind != OpKind::Depthwise) continue;
        Job job{&op, key_of(op), {}, {}};
        const AccessContext who{&source, op.offset, op_kind_name(op.kind), "weight/scale stream"};
        try {
            for_each_stream(op, [&](const Stream& s, int tag) {
                std::get<2>(job.key).emplace_back(s.region + tag, s.base, s.length);
                job.spans.push_back(predicted_bytes(stream, at, s, memory, who));
            });
        } catch (const Error&) {
            continue;  // get() reports it at the op
        }
        const auto known = cache_.find(job.key);
        if (known != cache_.end() && known->second.weights && same_bytes(known->second.stream_bytes, job.spans)) continue;
        jobs.push_back(std::move(job));
    }
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t i) {
        Job& job = jobs[i];
        try {
            job.entry.weights = std::make_unique<OpWeights>(decode_from_spans(*job.op, config, job.spans, source));
            job.entry.stream_bytes = concatenate(job.spans);
        } catch (const Error&) {
            job.entry.weights.reset();
        }
    });
    for (Job& job : jobs)
        if (job.entry.weights) cache_[job.key] = std::move(job.entry);
}

AccessContext ExecutionContext::access(const DecodedOp& op, std::string_view what) const {
    return AccessContext{&source, op.offset, op_kind_name(op.kind), what};
}

FeatureMapView ExecutionContext::view(const DecodedOp& op, const FeatureMap& fm, int height, int width, int depth,
                                      std::string_view what, bool is_output) {
    if (fm.storage != Storage::Chained) return FeatureMapView(fm, height, width, depth, memory, access(op, what));
    const size_t bytes = static_cast<size_t>(height) * width * depth * fm.precision.bytes();
    if (is_output) {
        chain.pending.assign(bytes, 0);
        chain.pending_slot = fm.region;
        return FeatureMapView(fm, height, width, depth, chain.pending);
    }
    std::vector<uint8_t>& buffer = chain.slots[fm.region];
    if (buffer.size() != bytes) {
        throw Error({source, op.offset, std::string(op_kind_name(op.kind))},
                    fmt::format("{} reads chain buffer {} holding {} bytes, not {}x{}x{} elements of {} bytes", what,
                                fm.region, buffer.size(), height, width, depth, fm.precision.bytes()));
    }
    return FeatureMapView(fm, height, width, depth, buffer);
}

Executor::Executor(const NpuConfig& config, const AddressSpace& memory, std::string source, WeightCache* weights)
    : config_(config), memory_(memory), source_(std::move(source)), shram_(config),
      shared_weights_(weights) {}

void Executor::run(const DecodedStream& stream) {
    (shared_weights_ ? *shared_weights_ : own_weights_).prefetch(stream, config_, memory_, source_);
    for (const auto& op : stream.ops) {
        if (op.kind == OpKind::Branch) {
            throw Error({source_, op.offset, "NPU_OP_BRANCH"},
                        "a straight-line run cannot follow a branch: run the stream from its command words");
        }
        run_op(op);
        if (op.kind == OpKind::Stop) break;
    }
}

DecodedStream Executor::run(std::span<const uint32_t> words, const FollowOptions& options) {
    // Weights decode ahead from the stream read straight through; a wrong guess only costs time,
    // and what does not decode straight through is reported where the run reaches it.
    try {
        const DecodedStream straight = decode_stream(config_, words, source_, options.decode);
        (shared_weights_ ? *shared_weights_ : own_weights_).prefetch(straight, config_, memory_, source_);
    } catch (const Error&) {
    }
    auto result_flag = [&](const DecodedOp& branch) {
        if (!condition_.flag) {
            throw Error({source_, branch.offset, "NPU_OP_BRANCH.branch_cond"},
                        fmt::format("RF_TRUE reads COND_STATUS.result_flag, which is unpredictable: the kernel op at "
                                    "0x{:x} that last set it wrote an OFM of {} elements, not one",
                                    condition_.set_by, condition_.ofm_elements));
        }
        return *condition_.flag;
    };
    return follow_stream(config_, words, source_, [&](const DecodedOp& op) { run_op(op); }, result_flag, options);
}

void Executor::update_condition(const DecodedOp& op) {
    const FeatureMap& ofm = op.ofm;
    condition_.set_by = op.offset;
    condition_.ofm_elements = int64_t{ofm.width} * ofm.height * ofm.depth;
    if (condition_.ofm_elements != 1) {
        condition_.flag.reset();
        return;
    }
    // The single element sits at the first tile's base in any format; bit 0 is in its first byte.
    const uint8_t first = ofm.storage == Storage::Chained
                              ? chain_.slots.at(ofm.region).at(0)
                              : memory_.read(ofm.region, ofm.tile_base[0], 1,
                                             {&source_, op.offset, op_kind_name(op.kind), "OFM"})[0];
    condition_.flag = (first & 1) != 0;
}

namespace {

// U85 features no corpus stream uses: refused rather than guessed.
void refuse_unmodelled_u85(const DecodedOp& op, const std::string& source) {
    auto refuse = [&](const char* field, const char* what) {
        throw Error({source, op.offset, field}, fmt::format("{} is not supported yet", what));
    };
    constexpr int kAccInputReset = 0, kAccOutputEnable = 0;
    if (op.output.acc_input != kAccInputReset) refuse("NPU_SET_ACC_FORMAT.acc_input", "accumulator input KEEP/IFM2");
    if (op.output.acc_output != kAccOutputEnable) refuse("NPU_SET_ACC_FORMAT.acc_output", "accumulator output DISABLE");
    if (op.ofm.reverse) refuse("NPU_SET_OFM_PRECISION.activation_reverse", "OFM reversal");
    if (op.ofm.transpose) refuse("NPU_SET_OFM_PRECISION.activation_transpose", "OFM transposition");
    for (const FeatureMap* fm : {&op.ifm, &op.ifm2, &op.ofm})
        if (fm->storage == Storage::Tile3x1) refuse("activation_storage", "TILE3X1 feature map storage");
}

}  // namespace

void Executor::run_op(const DecodedOp& op) {
    ExecutionContext ctx{config_, memory_, shram_, shared_weights_ ? *shared_weights_ : own_weights_, source_, chain_,
                         scratch_};
    check_lut_loaded(op, shram_, config_, source_);
    if (config_.generation == Generation::U85 && is_kernel_op(op.kind)) refuse_unmodelled_u85(op, source_);
    switch (op.kind) {
        case OpKind::DmaStart: run_dma(op, ctx); return;
        case OpKind::Conv:
        case OpKind::Depthwise: run_conv(op, ctx); break;
        case OpKind::Pool: run_pool(op, ctx); break;
        case OpKind::Elementwise: run_elementwise(op, ctx); break;
        // Ordering only: execution is already in stream order.
        case OpKind::DmaWait:
        case OpKind::KernelWait:
        case OpKind::PmuMask:
        case OpKind::Stop:
        case OpKind::Irq:
            return;
        // Control only: follow_stream decides where the stream continues.
        case OpKind::Branch:
            return;
        case OpKind::Resize:
            throw Error({source_, op.offset, std::string(op_kind_name(op.kind))},
                        fmt::format("{} is not supported on {} yet", op_kind_name(op.kind), config_.name));
    }
    // A chained OFM is there for the ops that follow.
    if (chain_.pending_slot >= 0) {
        chain_.slots[chain_.pending_slot] = std::move(chain_.pending);
        chain_.pending_slot = -1;
    }
    if (config_.generation == Generation::U85) update_condition(op);
}

}  // namespace ethosu
