// The debug-database reader: every corpus database against Vela's own per-layer CSV and the
// command streams it describes; hand-made and truncated files end in ethosu::Error naming the file.

#include <gtest/gtest.h>

#include <iostream>
#include <sstream>

#include "emulator/isa/error.h"
#include "tests/traces/trace_test_util.h"
#include "traces/per_layer_csv.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;

// A complete, small database in Vela's layout: one source op, one scheduled op at offset 8.
std::string table(const std::string& name, const std::string& csv) {
    return "<table name=\"" + name + "\">\n<![CDATA[\n" + csv + "]]>\n</table>\n";
}
const std::string kCmdstream = table("cmdstream", "\"id\"\n1\n");
const std::string kQueue = table("queue", "\"offset\",\"cmdstream_id\",\"optimised_id\",\"scheduled_id\"\n8,1,2,5\n");
const std::string kPerf = table("perf",
                                "\"id\",\"source_id\",\"optimised_id\",\"operator\",\"name\",\"staging_usage\",\"op_cycles\"\n"
                                "5,1,2,\"Add\",\"out, \"\"final\"\"\",4096,3072\n");
const std::string kSource = table("source", "\"id\",\"operator\"\n1,\"Add\"\n");

std::string database(const std::string& tables) {
    return "<?xml version='1.0' encoding='UTF-8'?>\n<!-- made by hand -->\n<debug source=\"./model\">\n" + tables +
           "</debug>\n";
}
const std::string kValid = database(kCmdstream + kQueue + kPerf + kSource);

// The message of the ethosu::Error that parsing text throws; it must name the file.
std::string parse_error(const std::string& text) {
    try {
        DebugDatabase::parse(text, "bad_debug.xml");
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "bad_debug.xml") << e.what();
        return e.what();
    }
    ADD_FAILURE() << "expected ethosu::Error";
    return {};
}

TEST(DebugDb, ReadsVelaLayout) {
    const auto db = DebugDatabase::parse(kValid, "ok.xml");
    ASSERT_EQ(db.ops().size(), 1u);
    const VelaOp& op = db.ops()[0];
    EXPECT_EQ(op.id, 5);
    EXPECT_EQ(op.op, "Add");
    EXPECT_EQ(op.original_operator, "Add");
    EXPECT_EQ(op.name, "out, \"final\"");
    EXPECT_EQ(op.staging_usage, 4096);
    EXPECT_EQ(db.op_at(0, 8), &op);
    EXPECT_EQ(db.op_at(0, 12), nullptr);
    EXPECT_EQ(db.op_at(1, 8), nullptr);
}

// Vela 2.x-4.x: no `perf` table; the queue names ops of `optimised`, which have no layer name.
TEST(DebugDb, ReadsTheLayoutBeforeVela5) {
    // As Vela 3.1 writes them: ops by id, not in the order they run; the graph's input unqueued.
    const std::string optimised = table("optimised", "\"id\",\"source_id\",\"operator\",\"kernel_w\"\n"
                                                     "0,1,\"FullyConnected\",1\n1,1,\"Placeholder\",1\n2,1,\"Conv2DBias\",3\n");
    const std::string queue = table("queue", "\"offset\",\"cmdstream_id\",\"optimised_id\"\n8,1,2\n12,1,2\n20,1,0\n");
    const std::string source = table("source", "\"id\",\"operator\"\n1,\"CONV_2D\"\n");
    const auto db = DebugDatabase::parse(database(source + optimised + queue + kCmdstream), "vela3.xml");
    ASSERT_EQ(db.ops().size(), 3u);
    EXPECT_EQ(db.ops()[0].op, "Placeholder");
    EXPECT_EQ(db.ops()[2].op, "FullyConnected");
    const VelaOp& op = db.ops()[1];
    EXPECT_EQ(op.id, 2);
    EXPECT_EQ(op.op, "Conv2DBias");
    EXPECT_EQ(op.original_operator, "CONV_2D");
    EXPECT_EQ(op.name, "");
    EXPECT_EQ(op.display_name(), "Conv2DBias #2");
    EXPECT_EQ(op.staging_usage, 0);
    EXPECT_EQ(db.op_at(0, 8), &op);
    EXPECT_EQ(db.op_at(0, 12), &op);
    EXPECT_EQ(db.op_at(0, 20), &db.ops()[2]);

    const std::string dangling = table("queue", "\"offset\",\"cmdstream_id\",\"optimised_id\"\n8,1,3\n");
    const std::string message = parse_error(database(source + optimised + dangling + kCmdstream));
    EXPECT_NE(message.find("queue.optimised_id"), std::string::npos) << message;
    EXPECT_NE(message.find("not in the optimised table"), std::string::npos) << message;
    // A Vela 5 queue (scheduled_id) beside a table of the older layout is refused by name.
    EXPECT_NE(parse_error(database(source + optimised +
                                   table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\n8,1,2\n") + kCmdstream))
                  .find("no column \"optimised_id\""),
              std::string::npos);
}

TEST(DebugDb, MissingTablesAndColumnsAreNamed) {
    EXPECT_NE(parse_error(database(kCmdstream + kPerf + kSource)).find("no table \"queue\""), std::string::npos);
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kSource)).find("no table \"perf\""), std::string::npos);
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kPerf)).find("no table \"source\""), std::string::npos);
    EXPECT_NE(parse_error(database(kQueue + kPerf + kSource)).find("no table \"cmdstream\""), std::string::npos);
    const std::string no_name_column = table("source", "\"id\",\"kind\"\n1,\"Add\"\n");
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kPerf + no_name_column)).find("no column \"operator\""),
              std::string::npos);
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kPerf + kSource + kSource)).find("appears twice"),
              std::string::npos);
}

TEST(DebugDb, BadRowsAndReferencesAreNamed) {
    const std::string bad_offset = table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\nx8,1,5\n");
    EXPECT_NE(parse_error(database(kCmdstream + bad_offset + kPerf + kSource)).find("queue.offset"), std::string::npos);
    const std::string odd_offset = table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\n6,1,5\n");
    EXPECT_NE(parse_error(database(kCmdstream + odd_offset + kPerf + kSource)).find("queue.offset"), std::string::npos);
    const std::string dangling = table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\n8,1,6\n");
    EXPECT_NE(parse_error(database(kCmdstream + dangling + kPerf + kSource)).find("not in the perf table"),
              std::string::npos);
    const std::string other_stream = table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\n8,2,5\n");
    EXPECT_NE(parse_error(database(kCmdstream + other_stream + kPerf + kSource)).find("queue.cmdstream_id"),
              std::string::npos);
    const std::string short_row = table("source", "\"id\",\"operator\"\n1\n");
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kPerf + short_row)).find("1 fields, the header 2"),
              std::string::npos);
    const std::string open_quote = table("source", "\"id\",\"operator\"\n1,\"Add\n");
    EXPECT_NE(parse_error(database(kCmdstream + kQueue + kPerf + open_quote)).find("quoted field never ends"),
              std::string::npos);
}

TEST(DebugDb, ErrorsGiveTheRowsByteOffset) {
    const std::string queue = table("queue", "\"offset\",\"cmdstream_id\",\"scheduled_id\"\n8,1,5\n12,1,x5\n");
    const std::string text = database(kCmdstream + queue + kPerf + kSource);
    try {
        DebugDatabase::parse(text, "bad_debug.xml");
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().offset, text.find("12,1,x5"));
        EXPECT_EQ(e.where().field, "queue.scheduled_id");
    }
}

TEST(DebugDb, MalformedXmlIsAnError) {
    EXPECT_NE(parse_error("").find("no root element"), std::string::npos);
    EXPECT_NE(parse_error("<other/>").find("not <debug>"), std::string::npos);
    EXPECT_NE(parse_error("<debug></table>").find("does not match <debug>"), std::string::npos);
    EXPECT_NE(parse_error("<debug/><debug/>").find("second root"), std::string::npos);
    EXPECT_NE(parse_error("<!DOCTYPE debug><debug/>").find("document type"), std::string::npos);
    EXPECT_NE(parse_error("<debug a=&amp;/>").find("not quoted"), std::string::npos);
    EXPECT_NE(parse_error("<debug>&nbsp;</debug>").find("unknown entity"), std::string::npos);
    EXPECT_NE(parse_error("<debug><table></table></debug>").find("table without a name"), std::string::npos);
    EXPECT_NE(parse_error("stray <debug/>").find("text outside the root"), std::string::npos);
}

TEST(DebugDb, EveryTruncationIsAnErrorNamingTheFile) {
    // Cuts after </debug> leave a whole document.
    const size_t document_end = kValid.rfind("</debug>") + 8;
    for (size_t cut = 0; cut < document_end; ++cut) {
        const std::string message = parse_error(kValid.substr(0, cut));
        EXPECT_NE(message.find("bad_debug.xml"), std::string::npos) << "cut at " << cut;
    }
}

TEST(DebugDb, MissingFileIsAnErrorNamingIt) {
    try {
        DebugDatabase::load("/nonexistent/model_debug.xml", DebugDatabase::max_file_bytes(0));
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "/nonexistent/model_debug.xml");
    }
}

TEST(DebugDb, EndlessFileIsRefusedAtTheLimit) {
    // /dev/zero never ends: the read must stop one byte past the limit, not exhaust memory.
    try {
        DebugDatabase::load("/dev/zero", DebugDatabase::max_file_bytes(100));
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "/dev/zero");
        EXPECT_EQ(e.where().offset, DebugDatabase::max_file_bytes(100));
        EXPECT_EQ(e.where().field, "--debug-db");
    }
}

std::vector<std::vector<std::string>> read_csv_rows(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        std::vector<std::string> fields;
        std::string field;
        bool quoted = false;
        for (const char c : line) {
            if (c == '"') quoted = !quoted;
            else if (c == ',' && !quoted) fields.push_back(std::exchange(field, {}));
            else field += c;
        }
        fields.push_back(field);
        rows.push_back(fields);
    }
    return rows;
}

// Every corpus database: its ops are the rows of Vela's per-layer CSV (written by Vela from the
// same database), and its queue lists exactly the kernel ops of the command stream.
TEST(DebugDb, CorpusDatabasesMatchVelaCsvAndTheCommandStreams) {
    if (!test::have_vectors()) GTEST_SKIP() << "no Vela corpus at " << test::vectors_dir() << " (ETHOSU_VECTORS_DIR)";
    int databases = 0, matched_streams = 0, queue_entries = 0;
    for (const auto& model_dir : fs::directory_iterator(test::vectors_dir())) {
        if (!model_dir.is_directory()) continue;
        for (const auto& config_dir : fs::directory_iterator(model_dir.path())) {
            const fs::path xml = config_dir.path() / "model_debug.xml";
            if (!fs::exists(xml)) continue;
            SCOPED_TRACE(xml.string());
            const auto model = load_model((config_dir.path() / "model_vela.tflite").string(), {});
            uint64_t stream_bytes = 0;
            for (const auto& invocation : model->invocations) stream_bytes += invocation.stream.words.size() * 4;
            const auto db = DebugDatabase::load(xml.string(), DebugDatabase::max_file_bytes(stream_bytes));
            ++databases;
            const auto vela_rows = read_csv_rows(test::read_text(config_dir.path() / "model_per-layer.csv"));
            ASSERT_EQ(vela_rows.size(), db.ops().size() + 1);
            for (size_t i = 0; i < db.ops().size(); ++i) {
                const auto& row = vela_rows[i + 1];
                ASSERT_EQ(row.size(), 16u);
                EXPECT_EQ(row[0], db.ops()[i].original_operator);
                EXPECT_EQ(row[1], db.ops()[i].op);
                EXPECT_EQ(row[3], std::to_string(db.ops()[i].staging_usage));
                EXPECT_EQ(row[15], db.ops()[i].name);
            }

            if (model->invocations.size() != 1) continue;  // the queue's streams are the run's only for one
            std::vector<DecodedStream> streams{
                decode_stream(model->config, model->invocations[0].stream.words, model->path)};
            const std::vector<TimingResult> no_timing;
            const MemorySystem memory;
            const TracedRun traced{model->path, model->config, memory, streams, no_timing, &db};
            EXPECT_NO_THROW(traced.check_debug_db());
            ++matched_streams;
            queue_entries += static_cast<int>(db.queue_offsets().size());
        }
    }
    EXPECT_GT(databases, 300);
    EXPECT_GT(matched_streams, 300);
    std::cout << databases << " databases, " << matched_streams << " streams matched, " << queue_entries
              << " queue entries\n";
}

// The older layout over every Vela 3.10 and 4.1 database: each queue lists exactly the kernel ops
// of its command stream.
TEST(DebugDb, OlderVelaDatabasesMatchTheCommandStreams) {
    const fs::path vectors = ETHOSU_VECTORS_VELA_DIR;
    if (!fs::exists(vectors)) GTEST_SKIP() << "Vela 3.10/4.1 test vectors not found at " << vectors << " (ETHOSU_VECTORS_VELA_DIR)";
    int matched_streams = 0;
    for (const auto& xml : fs::recursive_directory_iterator(vectors)) {
        if (xml.path().filename() != "model_debug.xml") continue;
        SCOPED_TRACE(xml.path().string());
        const auto model = load_model((xml.path().parent_path() / "model_vela.tflite").string(), {});
        if (model->invocations.size() != 1) continue;  // the queue's streams are the run's only for one
        auto db = DebugDatabase::load(xml.path().string(),
                                      DebugDatabase::max_file_bytes(model->invocations[0].stream.words.size() * 4));
        ASSERT_FALSE(db.ops().empty());
        for (const VelaOp& op : db.ops()) EXPECT_TRUE(op.name.empty() && !op.op.empty() && !op.original_operator.empty());
        std::vector<DecodedStream> streams{decode_stream(model->config, model->invocations[0].stream.words, model->path)};
        const auto before = db.queue_offsets();
        db.align_queue_to(streams);
        // 3.10 records the offset after each op, 4.1 at it.
        const bool vela3 = xml.path().string().find("/3.10.0/") != std::string::npos;
        EXPECT_EQ(before.front().second - db.queue_offsets().front().second, vela3 ? 4u : 0u);
        const std::vector<TimingResult> no_timing;
        const MemorySystem memory;
        const TracedRun traced{model->path, model->config, memory, streams, no_timing, &db};
        EXPECT_NO_THROW(traced.check_debug_db());
        ++matched_streams;
    }
    EXPECT_GT(matched_streams, 400);
    std::cout << matched_streams << " Vela 3.10/4.1 streams matched their databases\n";
}

TEST(DebugDb, DatabaseOfAnotherModelIsRefused) {
    test::TimedRun run = test::run_example();
    run.debug_db = DebugDatabase::parse(kValid, "other_debug.xml");  // one op, at offset 8
    try {
        run.traced().check_debug_db();
        FAIL() << "expected ethosu::Error";
    } catch (const Error& e) {
        EXPECT_EQ(e.where().file, "other_debug.xml");
        EXPECT_NE(std::string(e.what()).find("not from"), std::string::npos) << e.what();
    }
    EXPECT_THROW(per_layer_rows(run.traced()), Error);
}

TEST(DebugDb, ShortLayerNameIsTheLayersOwnOutput) {
    EXPECT_EQ(short_layer_name("m/re_lu/Relu;m/batch_normalization/FusedBatchNormV3;m/conv2d/Conv2D"), "m/re_lu/Relu");
    EXPECT_EQ(short_layer_name("input_int8"), "input_int8");
    EXPECT_EQ(short_layer_name(";odd"), ";odd");
    EXPECT_EQ(short_layer_name(""), "");
}

TEST(DebugDb, VelaWritesItBesideTheModelAsStemDebugXml) {
    EXPECT_EQ(debug_db_path("out/model_vela.tflite"), "out/model_debug.xml");
    EXPECT_EQ(debug_db_path("kws_vela.tflite"), "kws_debug.xml");
    EXPECT_EQ(debug_db_path("model.tflite"), std::nullopt);
    EXPECT_EQ(debug_db_path("_vela.tflite"), std::nullopt);
}

}  // namespace
}  // namespace ethosu
