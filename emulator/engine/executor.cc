#include "emulator/engine/executor.h"

#include <fmt/format.h>

#include <tbb/parallel_for.h>

#include <algorithm>

#include "emulator/engine/kernel_context.h"
#include "emulator/engine/validate.h"
#include "emulator/isa/description.h"
#include "emulator/isa/error.h"

namespace ethosu {

// U85 has no SHRAM; its 2 KB LUT RAM is modelled by one core's LUT area. On U55/U65 the cores
// share CONFIG.shram_size equally.
int Shram::cores_of(const NpuConfig& config) { return config.shram_kb > 0 ? config.cores : 1; }

uint64_t Shram::core_bytes_of(const NpuConfig& config) {
    return config.shram_kb > 0 ? uint64_t{static_cast<uint64_t>(config.shram_kb)} * 1024 / cores_of(config) : kLutBytes;
}

Shram::Shram(const NpuConfig& config) : per_core_shram_(config.shram_kb > 0) {
    cores_.assign(static_cast<size_t>(cores_of(config)), Core{std::vector<uint8_t>(core_bytes_of(config))});
}

void Shram::clear() {
    for (Core& core : cores_) {
        std::fill(core.bytes.begin(), core.bytes.end(), uint8_t{0});
        std::fill(core.lut_written.begin(), core.lut_written.end(), false);
    }
}

uint32_t Shram::cores_in(int region, int cores) { return static_cast<uint32_t>(region) & ((1u << cores) - 1); }

uint32_t Shram::internal_core_mask(const NpuConfig& config, const Dma& dma) {
    return config.shram_kb > 0 ? cores_in(dma.dst.region, cores_of(config)) : 1;
}

uint32_t Shram::load(const Dma& d) {
    const uint64_t dst = d.dst.address;
    const uint32_t core_mask = per_core_shram_ ? cores_in(d.dst.region, cores()) : 1;
    const uint64_t lut_begin = std::max(dst, lut_base()), lut_end = dst + d.length;
    for (size_t n = 0; n < cores_.size(); ++n) {
        if (!(core_mask >> n & 1)) continue;
        for (uint64_t at = lut_begin; at < lut_end; ++at) cores_[n].lut_written[at - lut_base()] = true;
    }
    return core_mask;
}

void Shram::write(uint32_t core_mask, uint64_t offset, std::span<const uint8_t> data) {
    for (size_t n = 0; n < cores_.size(); ++n)
        if (core_mask >> n & 1) std::copy(data.begin(), data.end(), cores_[n].bytes.begin() + static_cast<ptrdiff_t>(offset));
}

std::span<const uint8_t> Shram::lut(int slot) const {
    return std::span<const uint8_t>(cores_.front().bytes).subspan(lut_base() + static_cast<size_t>(slot) * kLutSlotBytes);
}

// A TABLE activation reads its slot and, for entries wider than a byte, the slots after it; reading
// SHRAM no DMA has written would silently use zeros. The decoder refuses TABLE_n past the last slot.
void Shram::check_table(const DecodedOp& op, const std::string& source) const {
    if (!per_core_shram_ || !is_kernel_op(op.kind) || op.kernel().output.activation != Activation::Table) return;
    constexpr int kSlots = kLutBytes / kLutSlotBytes;
    const int slot = op.kernel().output.lut_index;
    const int slots = std::clamp(op.kernel().ofm.precision.bits / 8, 1, kSlots - slot);
    const bool loaded = std::all_of(cores_.begin(), cores_.end(), [&](const Core& core) {
        const auto begin = core.lut_written.begin() + static_cast<ptrdiff_t>(slot) * kLutSlotBytes;
        return std::all_of(begin, begin + static_cast<ptrdiff_t>(slots) * kLutSlotBytes, [](bool b) { return b; });
    });
    if (loaded) return;
    throw Error({source, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                fmt::format("TABLE_{} activation reads LUT slot{} {}{}, which no DMA has loaded{}", slot,
                            slots > 1 ? "s" : "", slot, slots > 1 ? fmt::format("..{}", slot + slots - 1) : "",
                            cores() > 1 ? " into every core's SHRAM" : ""));
}

void check_op(const DecodedOp& op, const NpuConfig& config, WorkBudget& budget, const Shram& shram,
              const std::string& source) {
    budget.charge(op);
    shram.check_table(op, source);
    validate(op, config, source);
}

namespace {

// Whether two sequences of spans hold the same bytes, without concatenating either.
bool same_bytes(std::span<const std::span<const uint8_t>> a, std::span<const std::span<const uint8_t>> b) {
    size_t ai = 0, bi = 0, ao = 0, bo = 0;
    for (;;) {
        while (ai < a.size() && ao == a[ai].size()) ++ai, ao = 0;
        while (bi < b.size() && bo == b[bi].size()) ++bi, bo = 0;
        if (ai == a.size() || bi == b.size()) return ai == a.size() && bi == b.size();
        const size_t n = std::min(a[ai].size() - ao, b[bi].size() - bo);
        // The very same bytes need no reading (nor faulting back in, if released).
        const bool same_place = a[ai].data() + ao == b[bi].data() + bo;
        if (!same_place && !std::equal(a[ai].begin() + static_cast<ptrdiff_t>(ao),
                                       a[ai].begin() + static_cast<ptrdiff_t>(ao + n), b[bi].begin() + static_cast<ptrdiff_t>(bo)))
            return false;
        ao += n, bo += n;
    }
}

// The op's weight streams, then its scale streams, in the order the key lists them.
template <typename Read>
void for_each_stream(const DecodedOp& op, Read&& read) {
    for (const auto& s : op.kernel().weights) read(s, 0);
    for (const auto& s : op.kernel().scales) read(s, AddressSpace::kRegions);
}

// Within one run the stream bytes a cache entry was decoded from are read again only to compare
// them (a hit): hands their file-backed pages back (AddressSpace::release) once decoded or compared.
void release_all(const AddressSpace& memory, const std::vector<std::span<const uint8_t>>& spans) {
    for (const auto& b : spans) memory.release(b);
}

// decode_op_weights on spans that hold op.kernel().weights then op.kernel().scales.
OpWeights decode_from_spans(const DecodedOp& op, const NpuConfig& config,
                            const std::vector<std::span<const uint8_t>>& spans, const std::string& source) {
    const StreamFetch fetch = [&](const Stream& s) {
        const bool is_weight = &s >= op.kernel().weights.data() && &s < op.kernel().weights.data() + op.kernel().weights.size();
        const size_t index = is_weight ? static_cast<size_t>(&s - op.kernel().weights.data())
                                       : op.kernel().weights.size() + static_cast<size_t>(&s - op.kernel().scales.data());
        return spans.at(index);
    };
    return decode_op_weights(op, config, fetch, source);
}

// The bytes a stream of the op at position `at` will read, as far as the DMAs before it tell.
std::span<const uint8_t> predicted_bytes(std::span<const DecodedOp> ops, size_t at, const Stream& s,
                                         const AddressSpace& memory, const AccessContext& who) {
    for (size_t k = at; k-- > 0;) {
        const DecodedOp& op = ops[k];
        if (op.kind != OpKind::DmaStart) continue;
        const Dma& d = op.dma();
        if (d.dst.internal || d.src.internal || d.dimensions != 1 || d.dst.region != s.region) continue;
        if (d.dst.address <= s.base && s.base - d.dst.address <= d.length && s.length <= d.length - (s.base - d.dst.address))
            return memory.read(d.src.region, d.src.address + (s.base - d.dst.address), s.length, who);
    }
    return memory.read(s.region, s.base, s.length, who);
}

}  // namespace

bool WeightCache::Entry::decoded_from(const Spans& spans) const {
    if (!weights) return false;
    if (!borrowed.empty()) return same_bytes(borrowed, spans);
    const std::span<const uint8_t> whole(copied);
    return same_bytes({&whole, 1}, spans);
}

void WeightCache::Entry::remember(const Spans& spans, bool borrow) {
    copied.clear();
    borrowed.clear();
    if (borrow) {
        borrowed = spans;
        return;
    }
    size_t size = 0;
    for (const auto& b : spans) size += b.size();
    copied.reserve(size);
    for (const auto& b : spans) copied.insert(copied.end(), b.begin(), b.end());
}

WeightCache::Key WeightCache::key_of(const DecodedOp& op) {
    const Kernel& k = op.kernel().kernel;
    return {op.offset,
            {static_cast<int>(op.kind), op.kernel().ofm.depth, op.kernel().ifm.depth, k.height, k.width, k.dilation_x, k.dilation_y,
             k.part_kernel_first ? 1 : 0, op.kernel().block.ofm_depth, op.kernel().ifm.precision.bits},
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
    if (found != cache_.end() && found->second.decoded_from(spans_)) {
        // What the entry was prefetched from (flash that a DMA then staged into SRAM, say) has
        // just been compared: within one run it is not read again.
        if (one_run()) release_all(memory, found->second.borrowed);
        return *found->second.weights;
    }
    Entry& entry = found != cache_.end() ? found->second : cache_[lookup_];
    entry.weights = std::make_unique<OpWeights>(decode_from_spans(op, config, spans_, source));
    entry.remember(spans_,
                   borrows_read_only() && std::ranges::all_of(spans_, [&](auto b) { return memory.is_read_only(b); }));
    if (one_run()) release_all(memory, spans_);
    return *entry.weights;
}

size_t WeightCache::prefetch(std::span<const DecodedOp> ops, const NpuConfig& config, const AddressSpace& memory,
                             const std::string& source, size_t first, uint64_t stream_bytes) {
    struct Job {
        const DecodedOp* op;
        Key key;
        std::vector<std::span<const uint8_t>> spans;
        Entry entry;
    };
    std::vector<Job> jobs;
    uint64_t planned = 0;
    size_t at = first;
    for (; at < ops.size() && planned < stream_bytes; ++at) {
        const DecodedOp& op = ops[at];
        if (op.kind != OpKind::Conv && op.kind != OpKind::Depthwise) continue;
        if (one_run() && ConvWeightGroups::applies(op, config)) continue;  // decoded by the kernel, group by group
        for (const auto& s : op.kernel().weights) planned += s.length;
        Job job{&op, key_of(op), {}, {}};
        const AccessContext who{&source, op.offset, op_kind_name(op.kind), "weight/scale stream"};
        try {
            for_each_stream(op, [&](const Stream& s, int tag) {
                std::get<2>(job.key).emplace_back(s.region + tag, s.base, s.length);
                job.spans.push_back(predicted_bytes(ops, at, s, memory, who));
            });
        } catch (const Error&) {
            continue;  // get() reports it at the op
        }
        const auto known = cache_.find(job.key);
        if (known != cache_.end() && known->second.decoded_from(job.spans)) continue;
        jobs.push_back(std::move(job));
    }
    tbb::parallel_for(size_t{0}, jobs.size(), [&](size_t i) {
        Job& job = jobs[i];
        try {
            job.entry.weights = std::make_unique<OpWeights>(decode_from_spans(*job.op, config, job.spans, source));
            job.entry.remember(job.spans, borrows_read_only() && std::ranges::all_of(job.spans, [&](auto b) {
                                              return memory.is_read_only(b);
                                          }));
            if (one_run()) release_all(memory, job.spans);
        } catch (const Error&) {
            job.entry.weights.reset();
        }
    });
    for (Job& job : jobs)
        if (job.entry.weights) cache_[job.key] = std::move(job.entry);
    return at;
}

AccessContext ExecutionContext::access(const DecodedOp& op, std::string_view what) const {
    return AccessContext{&source, op.offset, op_kind_name(op.kind), what};
}

FeatureMapView ExecutionContext::view(const DecodedOp& op, const FeatureMap& fm, int height, int width, int depth,
                                      std::string_view what, bool is_output) {
    if (fm.storage != Storage::Chained)
        return FeatureMapView(fm, height, width, depth, memory, access(op, what), is_output);
    const size_t bytes = static_cast<size_t>(height) * width * depth * fm.precision.bytes();
    if (is_output) {
        chain.pending.assign(bytes, 0);
        chain.pending_slot = fm.region;
        return FeatureMapView(fm, height, width, depth, chain.pending);
    }
    std::vector<uint8_t>& buffer = chain.slots[fm.region];
    if (buffer.size() != bytes) {
        throw Error({source, op.offset, std::string(op_kind_name(op.kind)), OffsetKind::Command},
                    fmt::format("{} reads chain buffer {} holding {} bytes, not {}x{}x{} elements of {} bytes", what,
                                fm.region, buffer.size(), height, width, depth, fm.precision.bytes()));
    }
    return FeatureMapView(fm, height, width, depth, buffer);
}

FeatureMapView ExecutionContext::kernel_ifm(const DecodedOp& op, const IfmGeometry& geo, int depth) {
    const FeatureMapView stored = view(op, op.kernel().ifm, geo.stored_height, geo.stored_width, depth, "IFM");
    if (op.kernel().kernel.upscale == UpscaleMode::None) return stored;
    const size_t bytes = static_cast<size_t>(geo.height) * geo.width * depth * op.kernel().ifm.precision.bytes();
    scratch.upscaled_ifm.assign(bytes, 0);
    const FeatureMapView upscaled(op.kernel().ifm, geo.height, geo.width, depth, scratch.upscaled_ifm);
    const bool zeros = op.kernel().kernel.upscale == UpscaleMode::Zeros;
    std::vector<int64_t> pixel(static_cast<size_t>(depth));
    const std::vector<int64_t> zero_point(static_cast<size_t>(depth), op.kernel().ifm.zero_point);
    for (int y = 0; y < geo.height; ++y)
        for (int x = 0; x < geo.width; ++x) {
            if (zeros && (y % 2 || x % 2)) {
                upscaled.store_channels(y, x, depth, zero_point.data());
            } else {
                stored.load_channels(y / 2, x / 2, depth, 0, pixel.data());
                upscaled.store_channels(y, x, depth, pixel.data());
            }
        }
    return upscaled;
}

struct Executor::KernelState {
    ChainBuffers chain;
    KernelScratch scratch;
    Accumulators accumulators;
};

Executor::Executor(const NpuConfig& config, const AddressSpace& memory, std::string source, WeightCache* weights,
                   const WorkLimits& limits)
    : config_(config), memory_(memory), source_(std::move(source)), budget_(limits, source_), shram_(config),
      shared_weights_(weights), kernels_(std::make_unique<KernelState>()) {}

Executor::~Executor() = default;
Executor::Executor(Executor&&) noexcept = default;

void Executor::prefetch_weights(std::span<const DecodedOp> ahead, const DecodedOp& op) {
    if (op.kind != OpKind::Conv && op.kind != OpKind::Depthwise) return;
    const auto index = static_cast<size_t>(&op - ahead.data());
    if (ahead.data() == window_.ops && index >= window_.first && index < window_.end) return;
    // A cache kept across runs decodes everything once; a run of its own decodes a window of ops
    // ahead and forgets the one before, so it never holds more than a window's weights.
    const bool keep = shared_weights_ != nullptr;
    if (!keep) own_weights_.clear();
    window_.ops = ahead.data();
    window_.first = index;
    window_.end = (keep ? *shared_weights_ : own_weights_)
                     .prefetch(ahead, config_, memory_, source_, index, keep ? UINT64_MAX : kDecodeWindowBytes);
}

void Executor::reset() {
    shram_.clear();
    for (auto& [slot, buffer] : kernels_->chain.slots) buffer.clear();  // an IFM must find its chain buffer filled anew
    kernels_->chain.pending.clear();
    kernels_->chain.pending_slot = -1;
    kernels_->accumulators = {};
    condition_ = {};
}

void Executor::run(const DecodedStream& stream) {
    budget_.start_run();
    for (const auto& op : stream.ops) {
        if (op.kind == OpKind::Branch) {
            throw Error({source_, op.offset, "NPU_OP_BRANCH", OffsetKind::Command},
                        "a straight-line run cannot follow a branch: run the stream from its command words");
        }
        prefetch_weights(stream.ops, op);
        run_op(op);
        if (op.kind == OpKind::Stop) break;
    }
}

DecodedStream Executor::run(std::span<const uint32_t> words, const FollowOptions& options) {
    auto result_flag = [&](const DecodedOp& branch) {
        if (!condition_.flag) {
            throw Error({source_, branch.offset, "NPU_OP_BRANCH.branch_cond", OffsetKind::Command},
                        fmt::format("RF_TRUE reads COND_STATUS.result_flag, which is unpredictable: the kernel op at "
                                    "0x{:x} that last set it wrote an OFM of {} elements, not one",
                                    condition_.set_by, condition_.ofm_elements));
        }
        return *condition_.flag;
    };
    // Weights decode ahead within the straight-line block that is running.
    const auto visit = [&](const DecodedOp& op, std::span<const DecodedOp> block) {
        prefetch_weights(block, op);
        run_op(op);
    };
    budget_.start_run();
    return follow_stream(config_, words, source_, visit, result_flag, budget_.follow_options(options));
}

void Executor::update_condition(const DecodedOp& op) {
    const FeatureMap& ofm = op.kernel().ofm;
    condition_.set_by = op.offset;
    condition_.ofm_elements = int64_t{ofm.width} * ofm.height * ofm.depth;
    if (condition_.ofm_elements != 1) {
        condition_.flag.reset();
        return;
    }
    // The single element sits at the first tile's base in any format; bit 0 is in its first byte.
    const uint8_t first = ofm.storage == Storage::Chained
                              ? kernels_->chain.slots.at(ofm.region).at(0)
                              : memory_.read(ofm.region, ofm.tile_base[0], 1,
                                             {&source_, op.offset, op_kind_name(op.kind), "OFM"})[0];
    condition_.flag = (first & 1) != 0;
}

void Executor::run_op(const DecodedOp& op) {
    check_op(op, config_, budget_, shram_, source_);
    ExecutionContext ctx{config_, memory_, shram_, shared_weights_ ? *shared_weights_ : own_weights_, source_,
                         kernels_->chain, kernels_->scratch, kernels_->accumulators, budget_};
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
        case OpKind::Resize: run_resize(op, ctx); break;  // U85 only: no other generation has the command
    }
    // Only the ops with accumulator control hand accumulators on; any other kernel op overwrites them.
    if (!uses_accumulator_control(op)) kernels_->accumulators = {};
    // A chained OFM is there for the ops that follow. Copied, not moved: each buffer keeps its
    // capacity, so the same stream run again allocates nothing.
    ChainBuffers& chain = kernels_->chain;
    if (chain.pending_slot >= 0) {
        chain.slots[chain.pending_slot].assign(chain.pending.begin(), chain.pending.end());
        chain.pending_slot = -1;
    }
    // COND_STATUS exists where NPU_OP_BRANCH reads it.
    if (isa::describe(config_.generation).command(isa::Cmd::OP_BRANCH)) update_condition(op);
}

}  // namespace ethosu
