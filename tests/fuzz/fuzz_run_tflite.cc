// A .tflite through the loader and the run the CLI makes of it (run_whole_model: one ethos-u
// operator on the engine and the timing model, or a graph with the host's reference kernels), with a mutator of our own
// that keeps the flatbuffer valid: it rewrites in place the numbers of the tables that the loader
// and the engine trust (a tensor's shape, type and buffer index, the tensor indices of operators
// and subgraphs, the offline plan's offsets) and the command stream inside the model
// (command_mutator.h, its length kept). Its seeds are the corpus model found at build time, Vela's
// and the original (FUZZ_SEEDS); one input in four still goes to libFuzzer's own mutators.

#include <flatbuffers/flatbuffers.h>

#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "emulator/isa/error.h"
#include "frontend/graph/graph_runner.h"
#include "frontend/loaders/model.h"
#include "frontend/loaders/vela_tflite_generated.h"
#include "tests/fuzz/command_mutator.h"
#include "tests/fuzz/run_harness.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

namespace tfl = ethosu::tflite;

struct Slot {
    size_t offset;  // of a little-endian number inside the file
    int bytes;
};

// The command stream payload of an ethos-u operator: where it lies in the file.
struct StreamPayload {
    size_t offset;
    size_t size;
};

struct Layout {
    std::vector<Slot> slots;
    std::vector<StreamPayload> streams;
};

Layout layout_of(const uint8_t* data, size_t size) {
    Layout out;
    flatbuffers::Verifier verifier(data, size);
    if (!tfl::VerifyModelBuffer(verifier)) return out;
    const tfl::Model& model = *tfl::GetModel(data);
    const auto at = [&](const void* p) { return static_cast<size_t>(static_cast<const uint8_t*>(p) - data); };
    const auto add_vector = [&](const flatbuffers::Vector<int32_t>* v) {
        if (v)
            for (uint32_t i = 0; i < v->size(); ++i) out.slots.push_back({at(v->Data() + 4 * i), 4});
    };
    const auto add_field = [&](const flatbuffers::Table* t, flatbuffers::voffset_t field, int bytes) {
        if (const uint8_t* p = t->GetAddressOf(field)) out.slots.push_back({at(p), bytes});
    };
    const auto buffer_data = [&](uint32_t index) -> const flatbuffers::Vector<uint8_t>* {
        return model.buffers() && index < model.buffers()->size() ? model.buffers()->Get(index)->data() : nullptr;
    };
    if (model.metadata())
        for (const tfl::Metadata* m : *model.metadata())
            if (m->name() && m->name()->string_view() == "OfflineMemoryAllocation")
                if (const auto* bytes = buffer_data(m->buffer()))
                    for (size_t i = 0; i + 4 <= bytes->size(); i += 4) out.slots.push_back({at(bytes->Data()) + i, 4});
    if (!model.subgraphs()) return out;
    for (const tfl::SubGraph* sg : *model.subgraphs()) {
        add_vector(sg->inputs());
        add_vector(sg->outputs());
        if (sg->tensors())
            for (const tfl::Tensor* t : *sg->tensors()) {
                add_vector(t->shape());
                add_field(reinterpret_cast<const flatbuffers::Table*>(t), tfl::Tensor::VT_TYPE, 1);
                add_field(reinterpret_cast<const flatbuffers::Table*>(t), tfl::Tensor::VT_BUFFER, 4);
            }
        if (!sg->operators()) continue;
        for (const tfl::Operator* op : *sg->operators()) {
            add_vector(op->inputs());
            add_vector(op->outputs());
            const auto* codes = model.operator_codes();
            if (!codes || op->opcode_index() >= codes->size() || !op->inputs() || op->inputs()->size() == 0) continue;
            const auto* custom = codes->Get(op->opcode_index())->custom_code();
            if (!custom || custom->string_view() != "ethos-u" || !sg->tensors()) continue;
            const int32_t tensor = op->inputs()->Get(0);
            if (tensor < 0 || static_cast<uint32_t>(tensor) >= sg->tensors()->size()) continue;
            if (const auto* bytes = buffer_data(sg->tensors()->Get(static_cast<uint32_t>(tensor))->buffer()))
                out.streams.push_back({at(bytes->Data()), bytes->size()});
        }
    }
    return out;
}

void mutate_slot(uint8_t* data, const Slot& slot, std::minstd_rand& rng) {
    // Indices and dimensions go wrong near their range (-1, 0, a few past the end) or at the limits.
    const uint64_t value = rng() % 2 ? ethosu::fuzz::boundary_value(slot.bytes * 8, rng) : (rng() % 64) - 1;
    for (int i = 0; i < slot.bytes; ++i) data[slot.offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

// The stream inside a COP payload, mutated command by command with its length kept.
bool mutate_stream(uint8_t* data, const StreamPayload& payload, std::minstd_rand& rng) {
    ethosu::CommandStream stream;
    try {
        stream = ethosu::parse_driver_payload("fuzz.tflite", data + payload.offset, payload.size, payload.offset);
    } catch (const ethosu::Error&) {
        return false;
    }
    const auto config = stream.config_word ? ethosu::npu_config_from_config_word(*stream.config_word) : std::nullopt;
    if (!config) return false;
    const auto& gen = ethosu::isa::describe(config->generation);
    auto commands = ethosu::fuzz::split_commands(gen, stream.words);
    if (!commands) return false;
    ethosu::fuzz::mutate_commands(gen, *commands, rng, /*keep_size=*/true);
    const auto words = ethosu::fuzz::join_commands(*commands);
    if (words.size() != stream.words.size()) return false;
    std::memcpy(data + stream.file_offset, words.data(), words.size() * 4);
    return true;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned seed) {
    std::minstd_rand rng(seed);
    if (rng() % 4 == 0) return LLVMFuzzerMutate(data, size, max_size);
    const Layout layout = layout_of(data, size);
    if (!layout.streams.empty() && rng() % 2 == 0 &&
        mutate_stream(data, layout.streams[rng() % layout.streams.size()], rng))
        return size;
    if (layout.slots.empty()) return LLVMFuzzerMutate(data, size, max_size);
    mutate_slot(data, layout.slots[rng() % layout.slots.size()], rng);
    return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        const auto model = ethosu::load_vela_tflite("fuzz.tflite", bytes, {});
        ethosu::run_whole_model(*model, {}, ethosu::fuzz::fuzz_run_options(true));
        ethosu::run_whole_model(*model, {}, ethosu::fuzz::fuzz_run_options(false));
    } catch (const ethosu::Error&) {
    }
    return 0;
}
