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

namespace {

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

const OpWeights& WeightCache::get(const DecodedOp& op, const NpuConfig& config, const AddressSpace& memory,
                                  const std::string& source) {
    lookup_.first = op.offset;
    lookup_.second.clear();
    spans_.clear();
    const AccessContext who{&source, op.offset, op_kind_name(op.kind), "weight/scale stream"};
    for_each_stream(op, [&](const Stream& s, int tag) {
        lookup_.second.emplace_back(s.region + tag, s.base, s.length);
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
        Job job{&op, {op.offset, {}}, {}, {}};
        const AccessContext who{&source, op.offset, op_kind_name(op.kind), "weight/scale stream"};
        try {
            for_each_stream(op, [&](const Stream& s, int tag) {
                job.key.second.emplace_back(s.region + tag, s.base, s.length);
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

Executor::Executor(const NpuConfig& config, const AddressSpace& memory, std::string source, WeightCache* weights)
    : config_(config), memory_(memory), source_(std::move(source)), shram_(config),
      shared_weights_(weights) {}

void Executor::run(const DecodedStream& stream) {
    (shared_weights_ ? *shared_weights_ : own_weights_).prefetch(stream, config_, memory_, source_);
    for (const auto& op : stream.ops) {
        run_op(op);
        if (op.kind == OpKind::Stop) break;
    }
}

void Executor::run_op(const DecodedOp& op) {
    ExecutionContext ctx{config_, memory_, shram_, shared_weights_ ? *shared_weights_ : own_weights_, source_,
                         scratch_};
    switch (op.kind) {
        case OpKind::DmaStart: run_dma(op, ctx); return;
        case OpKind::Conv:
        case OpKind::Depthwise: run_conv(op, ctx); return;
        case OpKind::Pool: run_pool(op, ctx); return;
        case OpKind::Elementwise: run_elementwise(op, ctx); return;
        // Ordering only: execution is already in stream order.
        case OpKind::DmaWait:
        case OpKind::KernelWait:
        case OpKind::PmuMask:
        case OpKind::Stop:
        case OpKind::Irq:
            return;
        case OpKind::Resize:
        case OpKind::Branch:
            break;
    }
    throw Error({source_, op.offset, std::string(op_kind_name(op.kind))},
                fmt::format("{} is not supported on {} yet", op_kind_name(op.kind), config_.name));
}

}  // namespace ethosu
