// ExecuTorch program (.pte): a flatbuffer with identifier "ET12" at bytes 4..7 whose execution
// plans list backend delegates. An Ethos-U delegate's processed bytes are the vela_bin_stream
// the Arm backend's preprocess wrote (backends/arm: EthosUBackend.cpp reads them with
// VelaBinStream.cpp), kept inline in Program.backend_delegate_data or in a data segment after
// the flatbuffer. Layout: ExecuTorch's schema/program.fbs, schema/extended_header.{h,cpp} and
// docs/source/pte-file-format.md.

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/executorch_program_generated.h"
#include "frontend/loaders/loader_common.h"

namespace ethosu {
namespace {

namespace et = ethosu::executorch;

constexpr std::string_view kProgramIdentifier = "ET12";  // program.fbs: file_identifier

// The optional extended header at byte 8: "eh00", u32 length counted from the magic, u64 size
// of the flatbuffer (program_size), u64 file offset of the first segment, 0 when there is none
// (segment_base_offset). Newer writers append a u64 segment data size, which is not needed here;
// ExecuTorch's own parser likewise reads only the first fields and treats other magics as absent.
constexpr size_t kExtendedHeaderOffset = 8;
constexpr std::string_view kExtendedHeaderMagic = "eh00";
constexpr uint32_t kExtendedHeaderMinLength = 24;

// Backend ids whose processed bytes are a vela_bin_stream: "EthosUBackend" (registered by
// backends/arm/runtime/EthosUBackend.cpp) and "ArmBackend", its name in 2023-24 ExecuTorch
// (ArmBackendEthosU.cpp, which reads the same vela_bin_stream).
constexpr std::string_view kEthosUBackendIds[] = {"EthosUBackend", "ArmBackend"};

template <class T>
size_t count(const flatbuffers::Vector<T>* v) {
    return v ? v->size() : 0;
}

// Where the flatbuffer ends and the segments begin.
struct ProgramLayout {
    uint64_t program_size = 0;
    std::optional<uint64_t> segment_base;  // absent without an extended header
};

ProgramLayout program_layout(ByteReader& r) {
    r.seek(4, "file_identifier");
    const auto identifier = r.bytes(4, "file_identifier");
    if (!std::equal(identifier.begin(), identifier.end(), kProgramIdentifier.begin())) {
        std::string shown(identifier.begin(), identifier.end());
        std::replace_if(shown.begin(), shown.end(), [](char c) { return c < 0x20 || c > 0x7E; }, '.');
        r.fail_at(4, "file_identifier",
                  fmt::format("\"{}\" where an ExecuTorch program has \"{}\", the version ethosu-emu reads", shown,
                              kProgramIdentifier));
    }
    if (r.remaining() < kExtendedHeaderMagic.size() ||
        !std::equal(kExtendedHeaderMagic.begin(), kExtendedHeaderMagic.end(), r.data().begin() + kExtendedHeaderOffset))
        return {r.size(), std::nullopt};
    r.skip(kExtendedHeaderMagic.size(), "extended_header.magic");
    const uint32_t length = r.u32("extended_header.length");
    if (length < kExtendedHeaderMinLength)
        r.fail_at(kExtendedHeaderOffset + 4, "extended_header.length",
                  fmt::format("extended header of {} bytes; it needs at least {}", length, kExtendedHeaderMinLength));
    const size_t size_pos = r.position();
    const uint64_t program_size = r.u64("extended_header.program_size");
    if (program_size < kExtendedHeaderOffset + kExtendedHeaderMinLength || program_size > r.size())
        r.fail_at(size_pos, "extended_header.program_size",
                  fmt::format("program of {} bytes does not fit between its headers and the end of the {}-byte file",
                              program_size, r.size()));
    const size_t base_pos = r.position();
    const uint64_t segment_base = r.u64("extended_header.segment_base_offset");
    if (segment_base != 0 && (segment_base < program_size || segment_base > r.size()))
        r.fail_at(base_pos, "extended_header.segment_base_offset",
                  fmt::format("segments at offset 0x{:x} lie outside 0x{:x}..0x{:x} (program end .. file end)",
                              segment_base, program_size, r.size()));
    return {program_size, segment_base};
}

// Vela's options in an Arm backend delegate's "compile_flags" (space-separated, each
// "--name=value" as the backend writes them, or "--name value").
std::optional<std::string> vela_flag(std::string_view flags, std::string_view name) {
    std::optional<std::string> value;
    size_t pos = 0;
    const auto next_word = [&]() -> std::optional<std::string_view> {
        while (pos < flags.size() && flags[pos] == ' ') ++pos;
        if (pos == flags.size()) return std::nullopt;
        const size_t end = std::min(flags.find(' ', pos), flags.size());
        const std::string_view word = flags.substr(pos, end - pos);
        pos = end;
        return word;
    };
    while (const auto word = next_word()) {
        if (!word->starts_with(name)) continue;
        const std::string_view rest = word->substr(name.size());
        if (rest.starts_with('=')) value = std::string(rest.substr(1));
        else if (rest.empty()) value = next_word().value_or("");
    }
    return value;  // the last one given, as an argument parser takes it
}

class PteLoader {
public:
    PteLoader(const std::string& path, const FileBytes& file)
        : path_(path), file_(file), data_(file.bytes), layout_(read_layout()), program_(verified_program()) {}

    std::unique_ptr<LoadedModel> load(const LoadOptions& options) const;

private:
    ProgramLayout read_layout() const {
        ByteReader r(path_, data_);
        return program_layout(r);
    }
    const et::Program& verified_program() const;
    uint64_t offset_of(const void* p) const {
        return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - data_.data());
    }
    [[noreturn]] void fail(const void* where, const std::string& field, const std::string& reason) const {
        throw Error({path_, offset_of(where), field}, reason);
    }
    std::span<const uint8_t> delegate_bytes(const et::BackendDelegate& delegate, const std::string& field) const;
    CompiledFor delegate_compiled_for(const et::BackendDelegate& delegate, const std::string& field) const;
    // A delegate's first call in the plan's chains, and where it is (for errors).
    struct Call {
        const et::DelegateCall* call = nullptr;
        std::string field;
    };
    std::map<int32_t, Call> delegate_calls(const et::ExecutionPlan& plan, size_t p) const;
    void take_program_shapes(NpuInvocation& invocation, const et::ExecutionPlan& plan, const Call& call) const;
    std::span<const uint8_t> segment_bytes(uint32_t index, const void* where, const std::string& field) const;

    const std::string& path_;
    const FileBytes& file_;
    std::span<const uint8_t> data_;
    ProgramLayout layout_;
    const et::Program& program_;
};

const et::Program& PteLoader::verified_program() const {
    // The verifier sees the flatbuffer only: the segments after it are not flatbuffer data.
    const size_t verified_size =
        static_cast<size_t>(std::min<uint64_t>(layout_.program_size, FLATBUFFERS_MAX_BUFFER_SIZE - 1));
    flatbuffers::Verifier::Options limits;
    limits.max_depth = 16;  // the schema subset nests 5 deep
    limits.max_tables = 1u << 22;
    flatbuffers::Verifier verifier(data_.data(), verified_size, limits);
    if (!et::VerifyProgramBuffer(verifier))
        throw Error({path_, std::nullopt, "Program"},
                    fmt::format("flatbuffer verification failed: an offset, vtable or vector lies outside the "
                                "{}-byte program or is misaligned",
                                verified_size));
    return *et::GetProgram(data_.data());
}

std::span<const uint8_t> PteLoader::segment_bytes(uint32_t index, const void* where, const std::string& field) const {
    if (index >= count(program_.segments()))
        fail(where, field + ".index",
             fmt::format("segment {} does not exist ({} segments)", index, count(program_.segments())));
    if (!layout_.segment_base || *layout_.segment_base == 0)
        fail(where, field + ".location",
             "data in a segment, but no extended header (\"eh00\" at byte 8) gives the segments' base offset");
    const et::DataSegment& segment = *program_.segments()->Get(index);
    const uint64_t base = *layout_.segment_base, room = data_.size() - base;
    if (segment.offset() > room || segment.size() > room - segment.offset())
        fail(&segment, fmt::format("segments[{}]", index),
             fmt::format("segment of {} bytes at offset 0x{:x} (base 0x{:x} + 0x{:x}) runs past the end of the "
                         "{}-byte file",
                         segment.size(), base + segment.offset(), base, segment.offset(), data_.size()));
    return data_.subspan(static_cast<size_t>(base + segment.offset()), static_cast<size_t>(segment.size()));
}

std::span<const uint8_t> PteLoader::delegate_bytes(const et::BackendDelegate& delegate, const std::string& field) const {
    const et::BackendDelegateDataReference* ref = delegate.processed();
    if (!ref) fail(&delegate, field + ".processed", "the delegate has no processed data");
    if (ref->location() == et::DataLocation_SEGMENT) return segment_bytes(ref->index(), ref, field + ".processed");
    if (ref->location() != et::DataLocation_INLINE)
        fail(ref, field + ".processed.location",
             fmt::format("unknown data location {} (0 inline, 1 segment)", static_cast<int>(ref->location())));
    const auto* inline_data = program_.backend_delegate_data();
    if (ref->index() >= count(inline_data))
        fail(ref, field + ".processed.index",
             fmt::format("backend_delegate_data[{}] does not exist ({} entries)", ref->index(), count(inline_data)));
    const auto* bytes = inline_data->Get(ref->index())->data();
    if (!bytes) fail(ref, field + ".processed.index", fmt::format("backend_delegate_data[{}] has no data", ref->index()));
    return {bytes->data(), bytes->size()};
}

CompiledFor PteLoader::delegate_compiled_for(const et::BackendDelegate& delegate, const std::string& field) const {
    CompiledFor compiled;
    for (size_t k = 0; k < count(delegate.compile_specs()); ++k) {
        const et::CompileSpec& spec = *delegate.compile_specs()->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (!spec.key() || spec.key()->string_view() != "compile_flags" || !spec.value()) continue;
        const std::string_view flags(reinterpret_cast<const char*>(spec.value()->data()), spec.value()->size());
        compiled.system_config = vela_flag(flags, "--system-config").value_or("");
        compiled.memory_mode = vela_flag(flags, "--memory-mode").value_or("");
        if (!compiled.system_config.empty() || !compiled.memory_mode.empty())
            compiled.source = fmt::format("{}: {}.compile_specs[{}] (compile_flags)", path_, field, k);
    }
    return compiled;
}

// ExecuTorch refuses tensors of more dimensions (runtime/core/exec_aten/util/
// tensor_dimension_limit.h, kTensorDimensionLimit).
constexpr size_t kMaxProgramTensorRank = 16;

std::map<int32_t, PteLoader::Call> PteLoader::delegate_calls(const et::ExecutionPlan& plan, size_t p) const {
    std::map<int32_t, Call> calls;
    for (size_t c = 0; c < count(plan.chains()); ++c) {
        const et::Chain& chain = *plan.chains()->Get(static_cast<flatbuffers::uoffset_t>(c));
        for (size_t i = 0; i < count(chain.instructions()); ++i) {
            const et::DelegateCall* call =
                chain.instructions()->Get(static_cast<flatbuffers::uoffset_t>(i))->instr_args_as_DelegateCall();
            if (call && !calls.contains(call->delegate_index()))
                calls.emplace(call->delegate_index(),
                              Call{call, fmt::format("execution_plan[{}].chains[{}].instructions[{}].args", p, c, i)});
        }
    }
    return calls;
}

// The delegate's feature maps take the shapes of the ExecuTorch tensors its first call passes
// (args: its inputs, then its outputs), the shapes a program's user holds: the vela_bin_stream
// pads them to 6-D (1x1x1x1x28x28 for a 1x1x28x28 tensor). Where a tensor lays its elements out in
// another order than Vela's feature map (a 1x3x8x8 tensor for a 1x8x8x3 map, which 2024
// ExecuTorch permuted in its runtime), Vela's shape stays: the bytes a run takes and gives are
// the feature map's.
void PteLoader::take_program_shapes(NpuInvocation& invocation, const et::ExecutionPlan& plan, const Call& c) const {
    const size_t inputs = invocation.inputs.size(), outputs = invocation.outputs.size();
    if (count(c.call->args()) != inputs + outputs) return;  // not the Arm backend's convention
    for (size_t k = 0; k < inputs + outputs; ++k) {
        const int32_t index = c.call->args()->Get(static_cast<flatbuffers::uoffset_t>(k));
        if (index < 0 || static_cast<size_t>(index) >= count(plan.values()))
            fail(c.call->args()->Data() + sizeof(int32_t) * k, fmt::format("{}[{}]", c.field, k),
                 fmt::format("value {} does not exist (the plan has {} values)", index, count(plan.values())));
        const et::Tensor* tensor = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_as_Tensor();
        if (!tensor || !tensor->sizes() || tensor->sizes()->size() > kMaxProgramTensorRank) continue;
        TensorInfo& map = k < inputs ? invocation.inputs[k] : invocation.outputs[k - inputs];
        const std::vector<int64_t> sizes(tensor->sizes()->begin(), tensor->sizes()->end());
        if (same_element_order(sizes, map.shape)) map.shape = sizes;
    }
}

bool is_ethos_u_backend(std::string_view id) {
    return std::find(std::begin(kEthosUBackendIds), std::end(kEthosUBackendIds), id) != std::end(kEthosUBackendIds);
}

// Several delegates' feature maps are listed together; their names say whose they are.
void name_feature_maps(std::vector<TensorInfo>& maps, const std::string& delegate, const char* kind) {
    for (size_t i = 0; i < maps.size(); ++i) maps[i].name = fmt::format("{}.{}[{}]", delegate, kind, i);
}

std::unique_ptr<LoadedModel> PteLoader::load(const LoadOptions& options) const {
    auto model = std::make_unique<LoadedModel>();
    model->path = path_;
    model->format = ModelFormat::ExecuTorchProgram;
    std::vector<std::string> delegate_names, other_backends;
    std::vector<CompiledFor> compiled_for;
    for (size_t p = 0; p < count(program_.execution_plan()); ++p) {
        const et::ExecutionPlan& plan = *program_.execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(p));
        const std::map<int32_t, Call> calls = delegate_calls(plan, p);
        for (size_t d = 0; d < count(plan.delegates()); ++d) {
            const et::BackendDelegate& delegate = *plan.delegates()->Get(static_cast<flatbuffers::uoffset_t>(d));
            const std::string field = fmt::format("execution_plan[{}].delegates[{}]", p, d);
            const std::string id = delegate.id() ? delegate.id()->str() : "";
            if (!is_ethos_u_backend(id)) {
                other_backends.push_back(id.empty() ? "(no id)" : id);
                continue;
            }
            const auto bytes = delegate_bytes(delegate, field);
            compiled_for.push_back(delegate_compiled_for(delegate, field));
            model->invocations.push_back(
                vela_bin_stream_invocation(path_, file_, bytes, offset_of(bytes.data()), options.max_stream_words));
            if (const auto call = calls.find(static_cast<int32_t>(d)); call != calls.end())
                take_program_shapes(model->invocations.back(), plan, call->second);
            delegate_names.push_back(fmt::format("{}.delegates[{}]", plan.name() ? plan.name()->str() : "", d));
        }
    }
    if (model->invocations.empty())
        throw Error({path_, std::nullopt, "delegates"},
                    other_backends.empty()
                        ? std::string("the program has no backend delegate, so no Ethos-U work")
                        : fmt::format("no Ethos-U delegate (EthosUBackend); the program's delegates: {}",
                                      fmt::join(other_backends, ", ")));
    model->config = common_npu_config(path_, model->invocations, "Ethos-U delegate", options);
    // Delegates compiled alike say how; ones that disagree say nothing the run could follow.
    if (std::all_of(compiled_for.begin(), compiled_for.end(), [&](const CompiledFor& c) {
            return c.system_config == compiled_for[0].system_config && c.memory_mode == compiled_for[0].memory_mode;
        }))
        model->compiled_for = compiled_for[0];
    for (size_t i = 0; i < model->invocations.size(); ++i) {
        NpuInvocation& invocation = model->invocations[i];
        if (model->invocations.size() > 1) {
            name_feature_maps(invocation.inputs, delegate_names[i], "inputs");
            name_feature_maps(invocation.outputs, delegate_names[i], "outputs");
        }
        model->inputs.insert(model->inputs.end(), invocation.inputs.begin(), invocation.inputs.end());
        model->outputs.insert(model->outputs.end(), invocation.outputs.begin(), invocation.outputs.end());
    }
    return model;
}

}  // namespace

std::unique_ptr<LoadedModel> load_executorch_program(const std::string& path, const FileBytes& data,
                                                     const LoadOptions& options) {
    return PteLoader(path, data).load(options);
}

}  // namespace ethosu
