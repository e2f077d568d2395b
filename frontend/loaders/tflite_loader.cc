// Vela's .tflite output: a TFLite flatbuffer where each NPU subgraph became one "ethos-u"
// custom operator. Its inputs are [command stream, weights (region 0), scratch (region 1),
// fast scratch (region 2), feature maps...]; feature maps live in the scratch area at the
// offsets of TFLM's offline memory plan (metadata "OfflineMemoryAllocation").

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <algorithm>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/loader_common.h"
#include "frontend/loaders/vela_tflite_generated.h"

namespace ethosu {
namespace {

constexpr int32_t kBuiltinCustom = 32;
constexpr std::string_view kEthosUCustomCode = "ethos-u";
constexpr std::string_view kOfflinePlanName = "OfflineMemoryAllocation";
// What Vela leaves in every .tflite it writes, even one it placed wholly on the CPU: its
// description (Python's tflite_writer.py and Regor's writer, in later releases), or the metadata
// "vela_version" and the offline memory plan (Vela 3.x, which keeps the source's description).
constexpr std::string_view kVelaDescription = "Vela Optimised";
constexpr std::string_view kVelaVersionMetadata = "vela_version";

// ethos-u operator inputs before the feature maps.
constexpr size_t kCommandStreamInput = 0, kWeightsInput = 1, kScratchInput = 2, kScratchFastInput = 3;
constexpr size_t kFirstFeatureMapInput = 4;

template <class T>
size_t count(const flatbuffers::Vector<T>* v) {
    return v ? v->size() : 0;
}

ElementType element_type_from_tflite(int8_t type) {
    switch (type) {
        case 0: return ElementType::Float32;
        case 2: return ElementType::Int32;
        case 3: return ElementType::UInt8;
        case 4: return ElementType::Int64;
        case 6: return ElementType::Bool;
        case 7: return ElementType::Int16;
        case 9: return ElementType::Int8;
        case 16: return ElementType::UInt16;
        case 17: return ElementType::Int4;
        default: return ElementType::Other;
    }
}

// Planned offsets by tensor index of subgraph 0; -1 where the runtime plans the tensor.
// TFLM's offline plan: a planned offset per tensor of subgraph 0 (-1: not planned), and where
// they lie in the file, for errors about one of them.
struct OfflinePlan {
    std::vector<int64_t> offsets;
    uint64_t file_offset = 0;  // of offsets[0]; 4 bytes each

    bool empty() const { return offsets.empty(); }
    uint64_t file_offset_of(int32_t tensor) const { return file_offset + 4 * static_cast<uint64_t>(tensor); }
};

class VelaTfliteLoader {
public:
    VelaTfliteLoader(const std::string& path, const FileBytes& file)
        : path_(path), file_(file), data_(file.bytes), model_(verified_model()) {}

    std::unique_ptr<LoadedModel> load(const LoadOptions& options);

private:
    const tflite::Model& verified_model() const;
    uint64_t offset_of(const void* p) const {
        return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - data_.data());
    }
    [[noreturn]] void fail(const void* where, const std::string& field, const std::string& reason) const {
        throw Error({path_, offset_of(where), field}, reason);
    }

    std::span<const uint8_t> buffer_bytes(uint32_t index, const void* where, const std::string& field) const;
    const tflite::Tensor& tensor_at(const tflite::SubGraph& sg, int32_t index, const void* where,
                                    const std::string& field) const;
    TensorInfo tensor_info(const tflite::Tensor& t, const std::string& field) const;
    std::span<const uint8_t> tensor_data(const tflite::Tensor& t, const std::string& field) const;
    OfflinePlan offline_plan() const;
    bool written_by_vela() const;
    const tflite::OperatorCode& operator_code(const tflite::Operator& op, const std::string& field) const;
    bool is_ethos_u(const tflite::Operator& op, const std::string& field) const;
    ModelGraph graph(const tflite::SubGraph& sg) const;
    void place_in_scratch(TensorInfo& info, int32_t tensor, int32_t scratch_tensor, const OfflinePlan& plan,
                          const std::string& field) const;
    NpuInvocation invocation(const tflite::SubGraph& sg, const tflite::Operator& op, const OfflinePlan* plan,
                             const std::string& field, uint64_t max_stream_words) const;
    std::vector<TensorInfo> model_io(const flatbuffers::Vector<int32_t>* indices, const char* what,
                                     std::optional<int32_t> scratch_tensor, const OfflinePlan& plan) const;

    const std::string& path_;
    const FileBytes& file_;
    std::span<const uint8_t> data_;
    const tflite::Model& model_;
};

const tflite::Model& VelaTfliteLoader::verified_model() const {
    if (data_.size() < 8 || !tflite::ModelBufferHasIdentifier(data_.data()))
        throw Error({path_, 4, "file_identifier"}, "not a TFLite flatbuffer (no \"TFL3\" at bytes 4..7)");
    // Models over 2 GB keep buffer data past the flatbuffer; the verifier sees only what it may.
    const size_t verified_size = std::min<size_t>(data_.size(), FLATBUFFERS_MAX_BUFFER_SIZE - 1);
    flatbuffers::Verifier::Options limits;
    limits.max_depth = 16;  // the schema nests 4 deep
    limits.max_tables = 1u << 22;
    flatbuffers::Verifier verifier(data_.data(), verified_size, limits);
    if (!tflite::VerifyModelBuffer(verifier))
        throw Error({path_, std::nullopt, {}},  // the verifier does not say where
                    fmt::format("not a complete TFLite model: its {} bytes end before, or do not hold, the parts "
                                "its header points to (a truncated or damaged file: copy or export it again)",
                                data_.size()));
    return *tflite::GetModel(data_.data());
}

std::span<const uint8_t> VelaTfliteLoader::buffer_bytes(uint32_t index, const void* where,
                                                        const std::string& field) const {
    if (index >= count(model_.buffers()))
        fail(where, field, fmt::format("buffer {} does not exist ({} buffers)", index, count(model_.buffers())));
    const tflite::Buffer& buffer = *model_.buffers()->Get(index);
    // TFLite's rule: offset 0 and 1 are placeholders; above that, data lives at that file offset.
    if (buffer.offset() > 1) {
        if (buffer.offset() > data_.size() || buffer.size() > data_.size() - buffer.offset())
            throw Error({path_, buffer.offset(), fmt::format("buffers[{}]", index)},
                        fmt::format("data of {} bytes at offset 0x{:x} runs past the end of the {}-byte file",
                                    buffer.size(), buffer.offset(), data_.size()));
        return {data_.data() + buffer.offset(), static_cast<size_t>(buffer.size())};
    }
    if (!buffer.data()) return {};
    return {buffer.data()->data(), buffer.data()->size()};
}

const tflite::Tensor& VelaTfliteLoader::tensor_at(const tflite::SubGraph& sg, int32_t index, const void* where,
                                                  const std::string& field) const {
    if (index < 0 || static_cast<size_t>(index) >= count(sg.tensors()))
        fail(where, field, fmt::format("tensor index {} outside 0..{}", index, count(sg.tensors())));
    return *sg.tensors()->Get(static_cast<flatbuffers::uoffset_t>(index));
}

TensorInfo VelaTfliteLoader::tensor_info(const tflite::Tensor& t, const std::string& field) const {
    TensorInfo info;
    info.where = {path_, offset_of(&t), field};
    if (t.name()) info.name = t.name()->str();
    if (t.shape()) info.shape.assign(t.shape()->begin(), t.shape()->end());
    info.type = element_type_from_tflite(t.type());
    info.is_variable = t.is_variable();
    // INT4 packs two elements to a byte, the last byte half-filled for an odd count (TFLite's
    // dense int4 layout, which TFLM's UnpackDenseInt4IntoInt8 reads).
    info.size_bytes = info.type == ElementType::Int4 ? (tensor_byte_size(info.shape, 1, info.where) + 1) / 2
                                                     : tensor_byte_size(info.shape, element_size(info.type), info.where);
    if (const auto* q = t.quantization()) {
        if (q->scale()) info.scale.assign(q->scale()->begin(), q->scale()->end());
        if (const auto* zp = q->zero_point()) {
            // The verifier checks only the 4-byte alignment of the length, so int64 elements
            // may sit misaligned: read them bytewise.
            ByteReader r(path_, {zp->Data(), zp->size() * sizeof(int64_t)}, offset_of(zp->Data()));
            for (size_t i = 0; i < zp->size(); ++i)
                info.zero_point.push_back(r.i64(field + ".quantization.zero_point"));
        }
    }
    return info;
}

std::span<const uint8_t> VelaTfliteLoader::tensor_data(const tflite::Tensor& t, const std::string& field) const {
    const auto bytes = buffer_bytes(t.buffer(), &t, field + ".buffer");
    const uint64_t expected = tensor_info(t, field).size_bytes;
    if (!bytes.empty() && bytes.size() != expected)
        fail(&t, field, fmt::format("buffer holds {} bytes but the tensor's shape needs {}", bytes.size(), expected));
    return bytes;
}

bool VelaTfliteLoader::written_by_vela() const {
    if (model_.description() && model_.description()->string_view() == kVelaDescription) return true;
    const auto* metadata = model_.metadata();
    for (size_t m = 0; m < count(metadata); ++m) {
        const auto* name = metadata->Get(static_cast<flatbuffers::uoffset_t>(m))->name();
        if (name && (name->string_view() == kVelaVersionMetadata || name->string_view() == kOfflinePlanName)) return true;
    }
    return false;
}

OfflinePlan VelaTfliteLoader::offline_plan() const {
    const auto* metadata = model_.metadata();
    for (size_t m = 0; m < count(metadata); ++m) {
        const tflite::Metadata& entry = *metadata->Get(static_cast<flatbuffers::uoffset_t>(m));
        if (!entry.name() || entry.name()->string_view() != kOfflinePlanName) continue;
        const std::string field = fmt::format("metadata[{}] ({})", m, kOfflinePlanName);
        const auto bytes = buffer_bytes(entry.buffer(), &entry, field);
        ByteReader r(path_, bytes, bytes.empty() ? 0 : offset_of(bytes.data()));
        const int32_t version = r.i32(field + ".version");
        r.expect(version == 0, field + ".version", fmt::format("version {} is not 0", version));
        r.i32(field + ".subgraph");  // TFLM ignores it (Vela writes 1 for a single subgraph)
        const int32_t planned = r.i32(field + ".count");
        const size_t tensors = count(model_.subgraphs()->Get(0)->tensors());
        r.expect(planned >= 0 && static_cast<size_t>(planned) == tensors, field + ".count",
                 fmt::format("plans {} tensors but subgraph 0 has {}", planned, tensors));
        OfflinePlan plan{.offsets = {}, .file_offset = r.file_offset()};
        for (const uint32_t word : r.words(static_cast<uint64_t>(planned), field + ".offsets"))
            plan.offsets.push_back(static_cast<int32_t>(word));
        return plan;
    }
    return {};
}

const tflite::OperatorCode& VelaTfliteLoader::operator_code(const tflite::Operator& op, const std::string& field) const {
    const auto* codes = model_.operator_codes();
    if (op.opcode_index() >= count(codes))
        fail(&op, field + ".opcode_index",
             fmt::format("operator code {} does not exist ({} codes)", op.opcode_index(), count(codes)));
    return *codes->Get(op.opcode_index());
}

// Newer files keep the code in builtin_code; older ones only in the deprecated byte.
int32_t builtin_code(const tflite::OperatorCode& code) {
    return std::max<int32_t>(code.deprecated_builtin_code(), code.builtin_code());
}

bool VelaTfliteLoader::is_ethos_u(const tflite::Operator& op, const std::string& field) const {
    const tflite::OperatorCode& code = operator_code(op, field);
    return builtin_code(code) == kBuiltinCustom && code.custom_code() &&
           code.custom_code()->string_view() == kEthosUCustomCode;
}

ModelGraph VelaTfliteLoader::graph(const tflite::SubGraph& sg) const {
    ModelGraph g;
    g.tensors.resize(count(sg.tensors()));
    std::vector<bool> described(g.tensors.size(), false);
    // Only the tensors something refers to are described: the others may hold shapes no
    // runtime needs to size. A constant's bytes are copied where a CPU operator reads them.
    const auto describe = [&](int32_t index, const void* where, const std::string& field, bool copy_data) {
        if (index == -1) return;  // an omitted optional input
        const tflite::Tensor& t = tensor_at(sg, index, where, field);
        GraphTensor& gt = g.tensors[static_cast<size_t>(index)];
        if (!described[static_cast<size_t>(index)]) {
            gt.info = tensor_info(t, field);
            gt.constant = !buffer_bytes(t.buffer(), &t, field + ".buffer").empty();
            described[static_cast<size_t>(index)] = true;
        }
        if (copy_data && gt.constant && gt.data.empty()) {
            const auto bytes = tensor_data(t, field);
            gt.data.assign(bytes.begin(), bytes.end());
        }
    };
    const auto indices = [](const flatbuffers::Vector<int32_t>* v) {
        return v ? std::vector<int32_t>(v->begin(), v->end()) : std::vector<int32_t>{};
    };
    int invocation = 0;
    for (size_t i = 0; i < count(sg.operators()); ++i) {
        const tflite::Operator& op = *sg.operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
        const std::string field = fmt::format("subgraphs[0].operators[{}]", i);
        const tflite::OperatorCode& code = operator_code(op, field);
        GraphOperator gop{.builtin_code = builtin_code(code),
                          .custom_code = code.custom_code() ? code.custom_code()->str() : std::string{},
                          .invocation = is_ethos_u(op, field) ? invocation++ : -1,
                          .inputs = indices(op.inputs()),
                          .outputs = indices(op.outputs())};
        if (op.builtin_options()) {
            auto options = std::make_shared<tflite::BuiltinOptionsUnion>();
            options->type = op.builtin_options_type();
            // Null for a table type the schema subset lacks: no CPU kernel reads one.
            options->value = tflite::BuiltinOptionsUnion::UnPack(op.builtin_options(), options->type, nullptr);
            gop.builtin_options = std::move(options);
        }
        for (size_t k = 0; k < gop.inputs.size(); ++k)
            describe(gop.inputs[k], &op, fmt::format("{}.inputs[{}]", field, k), gop.invocation < 0);
        for (size_t k = 0; k < gop.outputs.size(); ++k)
            describe(gop.outputs[k], &op, fmt::format("{}.outputs[{}]", field, k), false);
        g.operators.push_back(std::move(gop));
    }
    g.inputs = indices(sg.inputs());
    g.outputs = indices(sg.outputs());
    for (size_t k = 0; k < g.inputs.size(); ++k)
        describe(g.inputs[k], sg.inputs(), fmt::format("subgraphs[0].inputs[{}]", k), false);
    for (size_t k = 0; k < g.outputs.size(); ++k)
        describe(g.outputs[k], sg.outputs(), fmt::format("subgraphs[0].outputs[{}]", k), false);
    return g;
}

void VelaTfliteLoader::place_in_scratch(TensorInfo& info, int32_t tensor, int32_t scratch_tensor,
                                        const OfflinePlan& plan, const std::string& field) const {
    if (plan.empty()) return;
    const int64_t at = plan.offsets[static_cast<size_t>(tensor)];
    const int64_t scratch_at = plan.offsets[static_cast<size_t>(scratch_tensor)];
    if (at < 0 || scratch_at < 0) return;
    if (at < scratch_at)
        throw Error({path_, plan.file_offset_of(tensor), field},
                    fmt::format("planned at {}, below the scratch area planned at {}", at, scratch_at));
    info.region = 1;
    info.offset = static_cast<uint64_t>(at - scratch_at);
}

NpuInvocation VelaTfliteLoader::invocation(const tflite::SubGraph& sg, const tflite::Operator& op,
                                           const OfflinePlan* plan, const std::string& field,
                                           uint64_t max_stream_words) const {
    const auto* inputs = op.inputs();
    if (count(inputs) < kFirstFeatureMapInput)
        fail(&op, field + ".inputs",
             fmt::format("an ethos-u operator needs command stream, weights, scratch and fast scratch inputs; has {}",
                         count(inputs)));
    const auto input_field = [&](size_t k) { return fmt::format("{}.inputs[{}]", field, k); };
    const auto input = [&](size_t k) -> const tflite::Tensor& {
        return tensor_at(sg, inputs->Get(static_cast<flatbuffers::uoffset_t>(k)), &op, input_field(k));
    };

    NpuInvocation inv;
    const auto payload = tensor_data(input(kCommandStreamInput), input_field(kCommandStreamInput));
    inv.stream =
        parse_driver_payload(path_, payload.data(), payload.size(), payload.empty() ? 0 : offset_of(payload.data()),
                             max_stream_words);

    const auto weights = tensor_data(input(kWeightsInput), input_field(kWeightsInput));
    inv.regions.push_back(initialised_region(0, RegionRole::Weights, weights, file_,
                                             {path_, offset_of(&input(kWeightsInput)), input_field(kWeightsInput)}));
    const int32_t scratch_index = inputs->Get(kScratchInput);
    const TensorInfo scratch = tensor_info(input(kScratchInput), input_field(kScratchInput));
    inv.regions.push_back(scratch_region(1, RegionRole::Scratch, scratch.size_bytes, scratch.where));
    // Where fast scratch is the arena itself Vela passes the scratch tensor twice; like the
    // .npz (size 0) that means no separate region 2.
    const TensorInfo fast = tensor_info(input(kScratchFastInput), input_field(kScratchFastInput));
    if (inputs->Get(kScratchFastInput) != scratch_index && fast.size_bytes > 0)
        inv.regions.push_back(scratch_region(2, RegionRole::ScratchFast, fast.size_bytes, fast.where));

    const auto feature_map = [&](int32_t index, const std::string& fm_field) {
        TensorInfo info = tensor_info(tensor_at(sg, index, &op, fm_field), fm_field);
        if (plan) place_in_scratch(info, index, scratch_index, *plan, fm_field);
        return info;
    };
    for (size_t k = kFirstFeatureMapInput; k < inputs->size(); ++k)
        inv.inputs.push_back(feature_map(inputs->Get(static_cast<flatbuffers::uoffset_t>(k)), input_field(k)));
    for (size_t k = 0; k < count(op.outputs()); ++k)
        inv.outputs.push_back(feature_map(op.outputs()->Get(static_cast<flatbuffers::uoffset_t>(k)),
                                          fmt::format("{}.outputs[{}]", field, k)));
    return inv;
}

std::vector<TensorInfo> VelaTfliteLoader::model_io(const flatbuffers::Vector<int32_t>* indices, const char* what,
                                                   std::optional<int32_t> scratch_tensor,
                                                   const OfflinePlan& plan) const {
    const tflite::SubGraph& sg = *model_.subgraphs()->Get(0);
    std::vector<TensorInfo> io;
    for (size_t k = 0; k < count(indices); ++k) {
        const std::string field = fmt::format("subgraphs[0].{}[{}]", what, k);
        const int32_t index = indices->Get(static_cast<flatbuffers::uoffset_t>(k));
        TensorInfo info = tensor_info(tensor_at(sg, index, indices, field), field);
        if (scratch_tensor) place_in_scratch(info, index, *scratch_tensor, plan, field);
        io.push_back(std::move(info));
    }
    return io;
}

std::unique_ptr<LoadedModel> VelaTfliteLoader::load(const LoadOptions& options) {
    if (count(model_.subgraphs()) == 0) fail(&model_, "subgraphs", "model has no subgraph");
    const OfflinePlan plan = offline_plan();

    auto model = std::make_unique<LoadedModel>();
    model->path = path_;
    model->format = ModelFormat::VelaTflite;
    std::optional<int32_t> first_scratch_tensor;  // of subgraph 0: the base of its planned arena
    // The limit holds for the streams together: many operators may name the same stream buffer.
    uint64_t stream_words = 0;
    for (size_t s = 0; s < model_.subgraphs()->size(); ++s) {
        const tflite::SubGraph& sg = *model_.subgraphs()->Get(static_cast<flatbuffers::uoffset_t>(s));
        for (size_t i = 0; i < count(sg.operators()); ++i) {
            const tflite::Operator& op = *sg.operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
            const std::string field = fmt::format("subgraphs[{}].operators[{}]", s, i);
            if (!is_ethos_u(op, field)) {
                ++model->cpu_operators;
                continue;
            }
            // The offline plan covers subgraph 0 only.
            model->invocations.push_back(
                invocation(sg, op, s == 0 ? &plan : nullptr, field, options.max_stream_words - stream_words));
            stream_words += model->invocations.back().stream.words.size();
            if (s == 0 && !first_scratch_tensor) first_scratch_tensor = op.inputs()->Get(kScratchInput);
        }
    }

    model->config = common_npu_config(path_, model->invocations, "ethos-u operator", options);

    const tflite::SubGraph& main = *model_.subgraphs()->Get(0);
    model->inputs = model_io(main.inputs(), "inputs", first_scratch_tensor, plan);
    model->outputs = model_io(main.outputs(), "outputs", first_scratch_tensor, plan);
    model->graph = graph(main);
    model->compiled_for_npu = !model->invocations.empty() || written_by_vela();
    return model;
}

}  // namespace

std::unique_ptr<LoadedModel> load_vela_tflite(const std::string& path, const FileBytes& data,
                                              const LoadOptions& options) {
    return VelaTfliteLoader(path, data).load(options);
}

}  // namespace ethosu
