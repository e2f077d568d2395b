#pragma once
// Vela's debug database (model_debug.xml, written with --enable-debug-db): a <debug> element
// holding <table name="..."> elements, each a CSV text in a CDATA section (a quoted header row,
// then one row per record). We read it with a reader of our own and keep what traces need:
// which Vela op each NPU_OP_* belongs to (table `queue`), that op's operator, layer name and
// staging usage (`perf`, Vela 5; Vela 2.x-4.x have `optimised`, with the operator only), and the
// operator it came from in the source graph (`source`).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emulator/isa/decoder.h"
#include "traces/csv_table.h"

namespace ethosu {


// One scheduled operation of Vela's `perf` table, or (Vela 2.x-4.x) one op of `optimised`.
struct VelaOp {
    int64_t id = 0;                 // scheduled (optimised) op id
    int64_t source_id = 0;          // id in the `source` table
    std::string op;                 // the scheduled operator (Vela's "NNG Operator")
    std::string original_operator;  // the operator of the source graph
    std::string name;               // the layer name (its output tensor); empty before Vela 5
    int64_t staging_usage = 0;      // bytes of staging memory Vela planned; 0 before Vela 5

    // The layer name, or where a database has none, the operator and id ("Conv2DBias #4").
    std::string display_name() const;
    // display_name() as a person reads it: short_layer_name of it.
    std::string short_name() const;
};

// A layer name as TFLite's converter writes a fused layer's: its ops' output names joined by ';',
// the layer's own first ("m/re_lu/Relu;m/bn/FusedBatchNormV3;m/conv2d/Conv2D"). The first name,
// or the whole when there is one.
std::string short_layer_name(std::string_view name);

class DebugDatabase {
public:
    // Parses the text of a model_debug.xml; source names the file in errors. Throws ethosu::Error
    // (file, byte offset, table or element) for malformed XML or CSV, a missing table or column,
    // a non-numeric id and an id one table refers to but another does not define.
    static DebugDatabase parse(std::string_view text, const std::string& source);
    // Reads and parses the file, refusing one over max_bytes (see max_file_bytes).
    static DebugDatabase load(const std::string& path, uint64_t max_bytes);
    // The largest debug database a model with this many command-stream bytes may come with.
    static uint64_t max_file_bytes(uint64_t command_stream_bytes);

    const std::string& source() const { return source_; }
    const std::vector<CsvTable>& tables() const { return tables_; }
    // `perf` order; for the older layout, the order the queue runs them in (Vela 3.x lists a
    // graph's ops in `optimised` by id, not in execution order).
    const std::vector<VelaOp>& ops() const { return ops_; }

    // The scheduled op an NPU_OP_* at this byte offset of the run's stream-th command stream
    // belongs to (streams in the order of the `cmdstream` table); nullptr when the queue has none.
    const VelaOp* op_at(size_t stream, uint32_t offset) const;
    // Every (stream, byte offset) the queue lists.
    std::vector<std::pair<size_t, uint32_t>> queue_offsets() const;

    // Vela 2.x-3.x record each queue offset after emitting the NPU_OP_* command (its offset + 4;
    // every Vela 3.1 and 3.10 database we hold), later versions at the command itself. For a
    // database of the older layout whose offsets all sit one command past the streams' kernel ops,
    // moves them onto the ops; any other database is left as it is, for the run's check to judge.
    void align_queue_to(const std::vector<DecodedStream>& streams);

private:
    void order_ops_as_queued();

    std::string source_;
    std::vector<CsvTable> tables_;
    std::vector<VelaOp> ops_;
    std::map<std::pair<size_t, uint32_t>, size_t> queue_;  // (stream, offset) -> index in ops_
    bool scheduled_layout_ = true;                          // Vela 5's `perf` table, not `optimised`
};

// Where Vela writes a model's debug database (--enable-debug-db): `<dir>/<stem>_debug.xml` for
// `<dir>/<stem>_vela.tflite`; nullopt for a model not named that way.
std::optional<std::string> debug_db_path(const std::string& model_path);

}  // namespace ethosu
