// ExecuTorch .pte programs, written here with our own schema subset: Ethos-U delegates inline
// and in segments, several delegates, foreign delegates, hostile headers and references; and
// every corpus model's vela_bin_stream inside a .pte run to its TFLite Micro golden.

#include <gtest/gtest.h>

#include <flatbuffers/flatbuffers.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "frontend/runner/run_model.h"
#include "frontend/loaders/executorch_program_generated.h"
#include "frontend/loaders/model.h"
#include "loader_test_util.h"
#include "tests/corpus_index.h"

namespace ethosu::test {
namespace {

namespace et = ethosu::executorch;
namespace fs = std::filesystem;
using ::testing::HasSubstr;

struct Delegate {
    Bytes processed;
    et::DataLocation location = et::DataLocation_INLINE;
    std::string id = "EthosUBackend";
    std::optional<uint32_t> index = std::nullopt;          // the reference as written (default: its own entry)
    std::optional<uint64_t> declared_size = std::nullopt;  // a segment's size as written (default: the true one)
    std::optional<std::string> compile_flags = std::nullopt;  // the Arm backend's "compile_flags" spec
    // The sizes of the tensors the program's call of the delegate passes (inputs, then outputs),
    // each a value of the plan; none: the plan has no call of it.
    std::optional<std::vector<std::vector<int32_t>>> call_sizes = std::nullopt;
    std::optional<int32_t> call_arg = std::nullopt;  // replaces the call's first argument (a hostile one)
};

// Extended header as ExecuTorch writes it after the root offset and identifier: "eh00", length
// 24, program size, segment base offset; padded to 32 bytes so the flatbuffer keeps its alignment.
constexpr size_t kHeaderAt = 8, kHeaderBytes = 32, kSegmentAlignment = 16;
constexpr size_t kHeaderLengthAt = 12, kProgramSizeAt = 16, kSegmentBaseAt = 24;

size_t aligned(size_t n) { return (n + kSegmentAlignment - 1) / kSegmentAlignment * kSegmentAlignment; }

void patch_u32(Bytes& b, size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void patch_u64(Bytes& b, size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}

// A program with one execution plan "forward" holding the delegates.
Bytes pte_file(const std::vector<Delegate>& delegates, bool extended_header = true) {
    flatbuffers::FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<et::BackendDelegateInlineData>> inline_data;
    std::vector<flatbuffers::Offset<et::DataSegment>> segments;
    std::vector<flatbuffers::Offset<et::BackendDelegate>> entries;
    Bytes segment_data;
    for (const Delegate& d : delegates) {
        uint32_t own = 0;
        if (d.location == et::DataLocation_SEGMENT) {
            own = static_cast<uint32_t>(segments.size());
            segments.push_back(
                et::CreateDataSegment(b, segment_data.size(), d.declared_size.value_or(d.processed.size())));
            put_bytes(segment_data, d.processed);
            segment_data.resize(aligned(segment_data.size()), 0);
        } else {
            own = static_cast<uint32_t>(inline_data.size());
            b.ForceVectorAlignment(d.processed.size(), 1, 16);
            inline_data.push_back(et::CreateBackendDelegateInlineData(b, b.CreateVector(d.processed)));
        }
        const auto ref = et::CreateBackendDelegateDataReference(b, d.location, d.index.value_or(own));
        std::vector<flatbuffers::Offset<et::CompileSpec>> specs;
        specs.push_back(et::CreateCompileSpec(b, b.CreateString("output_format"), b.CreateVector(Bytes{'v', 'e', 'l', 'a'})));
        if (d.compile_flags)
            specs.push_back(et::CreateCompileSpec(b, b.CreateString("compile_flags"),
                                                  b.CreateVector(Bytes(d.compile_flags->begin(), d.compile_flags->end()))));
        entries.push_back(et::CreateBackendDelegate(b, b.CreateString(d.id), ref, b.CreateVector(specs)));
    }
    // Each delegate's call in one chain, its tensors as values (after an Int value, so that the
    // arguments are not simply 0, 1, ...).
    std::vector<flatbuffers::Offset<et::EValue>> values = {et::CreateEValue(
        b, et::KernelTypes_IntValue, et::CreateIntValue(b).Union())};
    std::vector<flatbuffers::Offset<et::Instruction>> instructions;
    for (size_t i = 0; i < delegates.size(); ++i) {
        if (!delegates[i].call_sizes) continue;
        std::vector<int32_t> args;
        for (const auto& sizes : *delegates[i].call_sizes) {
            args.push_back(static_cast<int32_t>(values.size()));
            values.push_back(et::CreateEValue(b, et::KernelTypes_Tensor, et::CreateTensor(b, b.CreateVector(sizes)).Union()));
        }
        if (delegates[i].call_arg && !args.empty()) args[0] = *delegates[i].call_arg;
        const auto call = et::CreateDelegateCall(b, static_cast<int32_t>(i), b.CreateVector(args));
        instructions.push_back(et::CreateInstruction(b, et::InstructionArguments_DelegateCall, call.Union()));
    }
    const std::vector chains = {et::CreateChain(b, b.CreateVector(instructions))};
    const auto plan = et::CreateExecutionPlan(b, b.CreateString("forward"), b.CreateVector(values),
                                              b.CreateVector(chains), b.CreateVector(entries));
    const std::vector plans = {plan};
    et::FinishProgramBuffer(b, et::CreateProgram(b, 0, b.CreateVector(plans), b.CreateVector(inline_data),
                                                 b.CreateVector(segments)));
    Bytes out(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
    if (!extended_header) return out;

    const uint64_t program_size = out.size() + kHeaderBytes;
    const uint64_t segment_base = segment_data.empty() ? 0 : aligned(program_size);
    Bytes header;
    put_string(header, "eh00");
    put_u32(header, 24);
    put_u64(header, program_size);
    put_u64(header, segment_base);
    header.resize(kHeaderBytes, 0);
    out.insert(out.begin() + kHeaderAt, header.begin(), header.end());
    const uint32_t root = out[0] | out[1] << 8 | out[2] << 16 | static_cast<uint32_t>(out[3]) << 24;
    patch_u32(out, 0, root + kHeaderBytes);  // the root offset now reaches over the header
    if (segment_base) {
        out.resize(segment_base, 0);
        put_bytes(out, segment_data);
    }
    return out;
}

// A valid vela_bin_stream for the NPU of `config`: one input, one output.
Bytes small_stream(uint32_t config = kU55_128Config) {
    Bytes out;
    for (const auto& [name, data] : std::vector<std::pair<std::string, Bytes>>{
             {"vela_bin_stream", {}},
             {"cmd_data", cop1_payload(config, kU55Id, kSomeWords)},
             {"weight_data", {1, 2, 3}},
             {"scratch_size", scratch_size_block(128)},
             {"inputs", io_block({{1, 1, 1, 2, 2, 4, 1, 0, 1}})},
             {"outputs", io_block({{1, 1, 1, 1, 1, 4, 1, 64, 1}})},
             {"vela_end_stream", {}}})
        put_bytes(out, executorch_block(name, data));
    return out;
}

size_t offset_of(const Bytes& haystack, const Bytes& needle) {
    const auto it = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end());
    return static_cast<size_t>(it - haystack.begin());
}

std::string pte_error(const Bytes& bytes) {
    return error_of([&] { load_executorch_program("model.pte", bytes, {}); });
}

TEST(Pte, InlineDelegateLoadsAsItsVelaBinStream) {
    const Bytes stream = small_stream();
    const Bytes pte = pte_file({{.processed = stream}}, /*extended_header=*/false);
    const auto model = load_model(write_temp("inline.pte", pte), {});
    const auto direct = load_executorch_bin("direct.bin", stream, {});
    EXPECT_EQ(model->format, ModelFormat::ExecuTorchProgram);
    EXPECT_EQ(model_format_name(model->format), "executorch-pte");
    EXPECT_EQ(model->config.name, "ethos-u55-128");
    ASSERT_EQ(model->invocations.size(), 1u);
    const NpuInvocation& inv = model->invocations[0];
    EXPECT_EQ(inv.stream.words, kSomeWords);
    // Offsets are the .pte's: the stream's words sit where they lie in the file.
    EXPECT_EQ(inv.stream.file_offset, offset_of(pte, stream) + direct->invocations[0].stream.file_offset);
    ASSERT_EQ(inv.regions.size(), 2u);
    EXPECT_TRUE(std::ranges::equal(inv.regions[0].bytes, Bytes{1, 2, 3}));
    EXPECT_TRUE(inv.regions[0].file_mapped);  // the weights are read where the mapped .pte holds them
    EXPECT_EQ(inv.regions[1].size, 128u);
    ASSERT_EQ(model->inputs.size(), 1u);
    EXPECT_EQ(model->inputs[0].shape, direct->inputs[0].shape);
    EXPECT_EQ(model->outputs.at(0).offset, 64u);
    EXPECT_TRUE(model->inputs[0].name.empty());  // one delegate: named as the vela_bin_stream's
}

TEST(Pte, SegmentDelegateIsFoundThroughTheExtendedHeader) {
    const Bytes stream = small_stream();
    const Bytes pte = pte_file({{.processed = stream, .location = et::DataLocation_SEGMENT}});
    const size_t at = offset_of(pte, stream);
    EXPECT_EQ(at % kSegmentAlignment, 0u);
    EXPECT_GT(at, 8u + kHeaderBytes);
    const auto model = load_model(write_temp("segment.pte", pte), {});
    ASSERT_EQ(model->invocations.size(), 1u);
    EXPECT_EQ(model->invocations[0].stream.words, kSomeWords);
    EXPECT_TRUE(std::ranges::equal(model->invocations[0].regions[0].bytes, Bytes{1, 2, 3}));
    EXPECT_TRUE(model->invocations[0].regions[0].file_mapped);
    EXPECT_EQ(model->outputs.at(0).offset, 64u);

    // The same segment without the header that locates it.
    Bytes no_header = pte;
    no_header[kHeaderAt] = 'x';
    const std::string e = pte_error(no_header);
    EXPECT_THAT(e, HasSubstr("model.pte"));
    EXPECT_THAT(e, HasSubstr("execution_plan[0].delegates[0].processed.location"));
    EXPECT_THAT(e, HasSubstr("no extended header"));
}

TEST(Pte, SeveralDelegatesAreSeveralInvocations) {
    const Bytes pte = pte_file({{.processed = small_stream()},
                                {.processed = {1, 2, 3}, .id = "XnnpackBackend"},
                                {.processed = small_stream(), .location = et::DataLocation_SEGMENT}});
    const auto model = load_model(write_temp("two.pte", pte), {});
    ASSERT_EQ(model->invocations.size(), 2u);
    ASSERT_EQ(model->inputs.size(), 2u);
    EXPECT_EQ(model->inputs[0].name, "forward.delegates[0].inputs[0]");
    EXPECT_EQ(model->outputs[1].name, "forward.delegates[2].outputs[0]");
    EXPECT_EQ(model->invocations[1].inputs[0].name, "forward.delegates[2].inputs[0]");
    EXPECT_LT(model->invocations[0].stream.file_offset, model->invocations[1].stream.file_offset);

    const auto u55_256 = find_npu_config("ethos-u55-256");
    ASSERT_TRUE(u55_256);
    const std::string e =
        pte_error(pte_file({{.processed = small_stream()},
                            {.processed = small_stream(u55_256->config_word), .location = et::DataLocation_SEGMENT}}));
    EXPECT_THAT(e, HasSubstr("CONFIG"));
    EXPECT_THAT(e, HasSubstr("Ethos-U delegate 1 targets ethos-u55-256 but the first targets ethos-u55-128"));
}

// The Arm backend records Vela's command line in each delegate's "compile_flags"; a run without
// --system-config / --memory-mode uses the ones recorded there that Vela ships for its NPU.
TEST(Pte, RunsOnTheMemorySystemItsCompileFlagsName) {
    const auto run_on = [](const std::vector<Delegate>& delegates, const SystemSelection& user = {}) {
        const auto model = load_model(write_temp("flags.pte", pte_file(delegates)), {});
        const MemorySystem m = model_memory_system(*model, user);
        if (delegates.size() == 1) {  // a run times on that system
            const RunResult r = run_model(*model, {}, {.system = user, .pipeline = {.execute = false}});
            EXPECT_EQ(r.memory.system.name + r.memory.mode.name, m.system.name + m.mode.name);
        }
        return m.system.name + " " + m.mode.name;
    };
    const std::string flags = "--accelerator-config=ethos-u55-128 --config=Arm/vela.ini --output-format=raw "
                              "--system-config=Ethos_U55_Deep_Embedded --memory-mode=Sram_Only";
    EXPECT_EQ(run_on({{.processed = small_stream()}}), "Ethos_U55_High_End_Embedded Shared_Sram");  // Vela's default
    EXPECT_EQ(run_on({{.processed = small_stream(), .compile_flags = flags}}), "Ethos_U55_Deep_Embedded Sram_Only");
    EXPECT_EQ(run_on({{.processed = small_stream(), .compile_flags = "--memory-mode Sram_Only"}}),
              "Ethos_U55_High_End_Embedded Sram_Only");
    // The user's choice wins, each part on its own.
    EXPECT_EQ(run_on({{.processed = small_stream(), .compile_flags = flags}}, SystemSelection{"", "Shared_Sram", {}}),
              "Ethos_U55_Deep_Embedded Shared_Sram");
    // Names Vela does not ship for this NPU (another generation's, a private vela.ini's) are not followed.
    EXPECT_EQ(run_on({{.processed = small_stream(),
                       .compile_flags = "--system-config=Ethos_U85_SYS_DRAM_Mid --memory-mode=My_Board"}}),
              "Ethos_U55_High_End_Embedded Shared_Sram");
    // Delegates compiled differently say nothing the run could follow.
    EXPECT_EQ(run_on({{.processed = small_stream(), .compile_flags = flags},
                      {.processed = small_stream(), .compile_flags = "--memory-mode=Shared_Sram"}}),
              "Ethos_U55_High_End_Embedded Shared_Sram");
    // A recorded name the run cannot take is said, not silently replaced; a --config file that
    // defines it makes it one the run takes.
    const auto board = load_model(
        write_temp("board.pte", pte_file({{.processed = small_stream(),
                                            .compile_flags = "--system-config=My_Board --memory-mode=Sram_Only"}})),
        {});
    const SystemChoice choice = choose_system(*board, {});
    EXPECT_EQ(choice.followed, std::vector<std::string>{"--memory-mode Sram_Only"});
    ASSERT_EQ(choice.not_followed.size(), 1u);
    EXPECT_THAT(choice.not_followed[0], HasSubstr("records --system-config My_Board, which this run cannot take"));
    EXPECT_THAT(choice.not_followed[0], HasSubstr("no such System_Config section"));
    const std::string board_ini = "[System_Config.My_Board]\ninherit=System_Config.Ethos_U55_Deep_Embedded\n";
    const std::string ini = write_temp("board.ini", Bytes(board_ini.begin(), board_ini.end()));
    EXPECT_EQ(model_memory_system(*board, SystemSelection{"", "", {ini}}).system.name, "My_Board");

    const std::string path = write_temp("flags.pte", pte_file({{.processed = small_stream(), .compile_flags = flags}}));
    EXPECT_EQ(load_model(path, {})->compiled_for.source,
              path + ": execution_plan[0].delegates[0].compile_specs[1] (compile_flags)");
}

// A delegate's feature maps take the shapes of the tensors the program's call passes where those
// hold the elements in Vela's order (small_stream's maps: input 1x1x1x2x2x4, output 1x1x1x1x1x4);
// a tensor in another order (channels first), of other elements, or no call keeps Vela's shape.
TEST(Pte, FeatureMapsTakeTheShapesOfTheProgramsTensors) {
    const auto shapes_of = [](const std::optional<std::vector<std::vector<int32_t>>>& sizes) {
        const auto model = load_model(write_temp("shapes.pte", pte_file({{.processed = small_stream(), .call_sizes = sizes}})), {});
        return std::pair{model->inputs.at(0).shape, model->outputs.at(0).shape};
    };
    using Shape = std::vector<int64_t>;
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{1, 2, 2, 4}, {1, 4}}), std::pair(Shape{1, 2, 2, 4}, Shape{1, 4}));
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{2, 2, 4}, {4}}), std::pair(Shape{2, 2, 4}, Shape{4}));
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{1, 4, 2, 2}, {1, 1, 4}}),
              std::pair(Shape{1, 1, 1, 2, 2, 4}, Shape{1, 1, 4}));  // channels first: Vela's order kept
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{1, 2, 2, 5}, {1, 2, 2}}),
              std::pair(Shape{1, 1, 1, 2, 2, 4}, Shape{1, 1, 1, 1, 1, 4}));  // other elements
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{1, 2, 2, 4}}),
              std::pair(Shape{1, 1, 1, 2, 2, 4}, Shape{1, 1, 1, 1, 1, 4}));  // not inputs + outputs
    EXPECT_EQ(shapes_of(std::nullopt), std::pair(Shape{1, 1, 1, 2, 2, 4}, Shape{1, 1, 1, 1, 1, 4}));
    // A tensor of more dimensions than ExecuTorch allows (16) keeps Vela's shape too.
    std::vector<int32_t> deep(17, 1);
    deep.back() = 4;
    EXPECT_EQ(shapes_of(std::vector<std::vector<int32_t>>{{1, 2, 2, 4}, deep}),
              std::pair(Shape{1, 2, 2, 4}, Shape{1, 1, 1, 1, 1, 4}));
    // An argument that is not a tensor (value 0, an Int) leaves its map as it is.
    const auto model = load_model(write_temp("int_arg.pte", pte_file({{.processed = small_stream(),
                                                                       .call_sizes = std::vector<std::vector<int32_t>>{{1, 2, 2, 4}, {1, 4}},
                                                                       .call_arg = 0}})),
                                  {});
    EXPECT_EQ(model->inputs.at(0).shape, (Shape{1, 1, 1, 2, 2, 4}));
    EXPECT_EQ(model->outputs.at(0).shape, (Shape{1, 4}));
    // A call naming a value the plan does not have is refused, naming the argument.
    const std::string e = pte_error(pte_file({{.processed = small_stream(),
                                              .call_sizes = std::vector<std::vector<int32_t>>{{1, 2, 2, 4}, {1, 4}},
                                              .call_arg = 99}}));
    EXPECT_THAT(e, HasSubstr("execution_plan[0].chains[0].instructions[0].args[0]"));
    EXPECT_THAT(e, HasSubstr("value 99 does not exist (the plan has 3 values)"));
}

TEST(Pte, WithoutAnEthosUDelegateNamesTheDelegatesItHas) {
    const std::string e = error_of([&] {
        load_model(write_temp("cpu.pte", pte_file({{.processed = {0}, .id = "XnnpackBackend"},
                                                   {.processed = {0}, .id = "VgfBackend"}})),
                   {});
    });
    EXPECT_THAT(e, HasSubstr("cpu.pte"));
    EXPECT_THAT(e, HasSubstr("delegates: no Ethos-U delegate (EthosUBackend); the program's delegates: "
                             "XnnpackBackend, VgfBackend"));
    EXPECT_THAT(pte_error(pte_file({})), HasSubstr("no backend delegate"));
}

TEST(Pte, HostileFiles) {
    const Bytes good = pte_file({{.processed = small_stream(), .location = et::DataLocation_SEGMENT}});
    ASSERT_NO_THROW(load_executorch_program("model.pte", good, {}));

    for (const size_t cut : {size_t{0}, size_t{6}, size_t{20}, good.size() / 2, good.size() - 1}) {
        SCOPED_TRACE(cut);
        const std::string e = pte_error(Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut)));
        EXPECT_THAT(e, HasSubstr("model.pte: file@0x"));
    }
    EXPECT_THAT(pte_error(Bytes(good.begin(), good.begin() + 40)), HasSubstr("extended_header.program_size"));

    Bytes version = good;
    version[7] = '3';
    EXPECT_THAT(pte_error(version), HasSubstr("\"ET13\" where an ExecuTorch program has \"ET12\""));

    Bytes length = good;
    patch_u32(length, kHeaderLengthAt, 8);
    EXPECT_THAT(pte_error(length), HasSubstr("file@0xc: extended_header.length"));

    Bytes huge_program = good;
    patch_u64(huge_program, kProgramSizeAt, uint64_t{1} << 63);
    EXPECT_THAT(pte_error(huge_program), HasSubstr("file@0x10: extended_header.program_size"));

    Bytes base_past_end = good;
    patch_u64(base_past_end, kSegmentBaseAt, good.size() + 16);
    EXPECT_THAT(pte_error(base_past_end), HasSubstr("file@0x18: extended_header.segment_base_offset"));

    Bytes base_inside_program = good;
    patch_u64(base_inside_program, kSegmentBaseAt, 16);
    EXPECT_THAT(pte_error(base_inside_program), HasSubstr("extended_header.segment_base_offset"));

    Bytes short_program = good;  // the flatbuffer said to end before its own tables
    patch_u64(short_program, kProgramSizeAt, 48);
    EXPECT_THAT(pte_error(short_program), HasSubstr("flatbuffer verification failed"));

    for (const uint64_t size : {uint64_t{1} << 40, ~uint64_t{0}}) {
        const std::string e = pte_error(pte_file(
            {{.processed = small_stream(), .location = et::DataLocation_SEGMENT, .declared_size = size}}));
        EXPECT_THAT(e, HasSubstr("segments[0]"));
        EXPECT_THAT(e, HasSubstr("runs past the end"));
    }
    EXPECT_THAT(pte_error(pte_file({{.processed = small_stream(), .location = et::DataLocation_SEGMENT, .index = 3}})),
                HasSubstr("segment 3 does not exist (1 segments)"));
    EXPECT_THAT(pte_error(pte_file({{.processed = small_stream(), .index = 7}})),
                HasSubstr("backend_delegate_data[7] does not exist"));
    EXPECT_THAT(pte_error(pte_file({{.processed = small_stream(), .location = static_cast<et::DataLocation>(5)}})),
                HasSubstr("unknown data location 5"));

    // A broken vela_bin_stream inside: its error gives the .pte's offset of the broken block.
    Bytes stream = small_stream();
    stream[32 + 15] = 'x';  // cmd_data's name no longer NUL-terminated
    const Bytes broken = pte_file({{.processed = stream}});
    EXPECT_THAT(pte_error(broken),
                HasSubstr(fmt::format("file@0x{:x}: block.name", offset_of(broken, stream) + 32)));
}

// Models whose vela_bin_stream (like their .npz) does not give TFLM's output; they must give
// exactly what the .npz loaded directly gives.
const std::map<std::string, std::string> kNotTflmOutput = {
    // engine/test_conformance.cc's known difference: TFLM derives int16 SUB's multipliers in float.
    {"sub_8x8x32_i16", "Vela's multipliers"},
    // The LSTM state is a variable tensor; neither the .npz nor a vela_bin_stream records its
    // zero point, so it starts at zero where TFLM starts it at the zero point (loaders README).
    {"dtln_noise_suppression", "LSTM state at zero"},
};

// Every fully-NPU ethos-u55-128 model with a TFLM golden, its .npz written as an ExecuTorch
// vela_bin_stream and put in a .pte inline and in a segment, runs to TFLM's output for both
// golden inputs (but the models above, which run exactly as their .npz).
TEST(PteCorpus, EthosUDelegatesRunToTheGoldens) {
    if (!have_vectors()) GTEST_SKIP() << "no Vela corpus at " << vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    const std::string config = "ethos-u55-128";
    int models = 0, runs = 0, as_npz = 0;
    for (const CorpusEntry& entry : fully_npu_entries(vectors_dir(), config)) {
        const fs::path dir = vectors_dir() / entry.model, golden = dir / "golden";
        const fs::path npz_path = dir / config / "model_vela.npz";
        if (!fs::exists(golden / "seed1.out0.bin") || !fs::exists(npz_path)) continue;
        SCOPED_TRACE(entry.model);
        const auto npz = load_model(npz_path.string(), {});
        const Bytes stream = vela_bin_stream_of(*npz);
        ++models;
        for (const auto location : {et::DataLocation_INLINE, et::DataLocation_SEGMENT}) {
            const auto pte = load_model(write_temp(entry.model + ".pte", pte_file({{.processed = stream, .location = location}})), {});
            ASSERT_EQ(pte->config.name, config);
            ASSERT_EQ(pte->invocations.size(), 1u);
            EXPECT_EQ(pte->invocations[0].stream.words, npz->invocations[0].stream.words);
            for (const int seed : {1, 2}) {
                std::vector<std::vector<uint8_t>> inputs;
                for (size_t k = 0; k < pte->inputs.size(); ++k)
                    inputs.push_back(read_bytes(golden / fmt::format("seed{}.in{}.bin", seed, k)));
                const RunResult result = run_model(*pte, inputs, {.pipeline = {.execute = true, .timing = false}});
                ++runs;
                ASSERT_EQ(result.outputs.size(), pte->outputs.size());
                bool matches_golden = true;
                for (size_t k = 0; k < result.outputs.size(); ++k)
                    matches_golden &= result.outputs[k] == read_bytes(golden / fmt::format("seed{}.out{}.bin", seed, k));
                if (matches_golden) continue;
                EXPECT_TRUE(kNotTflmOutput.contains(entry.model)) << "seed " << seed << " differs from TFLM's output";
                EXPECT_EQ(result.outputs, run_model(*npz, inputs, {.pipeline = {.execute = true, .timing = false}}).outputs) << "seed " << seed;
                ++as_npz;
            }
        }
    }
    std::cout << "[ pte      ] " << models << " corpus models in .pte files (inline and segment), " << runs
              << " runs: " << runs - as_npz << " equal to TFLM's golden, " << as_npz
              << " differing from it exactly as the .npz does\n";
    EXPECT_GT(models, 50);
}

}  // namespace
}  // namespace ethosu::test
