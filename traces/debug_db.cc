#include "traces/debug_db.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <numeric>
#include <set>

#include "emulator/isa/bounded_file.h"
#include "emulator/isa/error.h"
#include "traces/csv_table.h"

namespace ethosu {
namespace {

// The XML this file needs: a prolog, comments, processing instructions, elements with quoted
// attributes, character data and CDATA sections. No DTDs (nothing Vela writes uses one).
struct XmlElement {
    std::string name;
    std::map<std::string, std::string> attributes;
    std::string content;          // character data and CDATA, concatenated (layout whitespace before a CDATA section dropped)
    uint64_t content_offset = 0;  // where content starts in the file
    uint64_t offset = 0;          // where the start tag is
    int parent = -1;
};

class XmlReader {
public:
    XmlReader(std::string_view text, const std::string& source) : text_(text), source_(source) {}

    // All elements in document order; element 0 is the root.
    std::vector<XmlElement> read() {
        std::vector<XmlElement> elements;
        std::vector<int> open;
        bool root_closed = false;
        if (text_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
        while (pos_ < text_.size()) {
            if (text_[pos_] != '<') {
                const size_t end = std::min(text_.find('<', pos_), text_.size());
                const std::string data = decode_entities(text_.substr(pos_, end - pos_), pos_);
                if (open.empty()) {
                    if (data.find_first_not_of(" \t\r\n") != std::string::npos)
                        fail(pos_, "", "text outside the root element");
                } else {
                    auto& element = elements[static_cast<size_t>(open.back())];
                    if (element.content.empty()) element.content_offset = pos_;
                    element.content += data;
                }
                pos_ = end;
                continue;
            }
            const size_t at = pos_;
            if (starts_with("<?")) {
                skip_past("?>", "processing instruction");
            } else if (starts_with("<!--")) {
                skip_past("-->", "comment");
            } else if (starts_with("<![CDATA[")) {
                if (open.empty()) fail(at, "CDATA", "CDATA section outside the root element");
                const size_t begin = at + 9;
                skip_past("]]>", "CDATA section");
                auto& element = elements[static_cast<size_t>(open.back())];
                // Layout whitespace before the section is not data: offsets count from here.
                if (element.content.find_first_not_of(" \t\r\n") == std::string::npos) {
                    element.content.clear();
                    element.content_offset = begin;
                }
                element.content += text_.substr(begin, pos_ - 3 - begin);
            } else if (starts_with("<!")) {
                fail(at, "", "document type declarations are not supported");
            } else if (starts_with("</")) {
                pos_ += 2;
                const std::string name = read_name();
                skip_space();
                expect('>', name);
                if (open.empty() || elements[static_cast<size_t>(open.back())].name != name)
                    fail(at, name, open.empty() ? "closing tag without an open element"
                                                : fmt::format("closing tag does not match <{}>",
                                                              elements[static_cast<size_t>(open.back())].name));
                open.pop_back();
                if (open.empty()) root_closed = true;
            } else {
                if (root_closed || (open.empty() && !elements.empty())) fail(at, "", "a second root element");
                ++pos_;
                XmlElement element;
                element.offset = at;
                element.name = read_name();
                element.parent = open.empty() ? -1 : open.back();
                const bool empty = read_attributes(element);
                elements.push_back(std::move(element));
                if (!empty) open.push_back(static_cast<int>(elements.size() - 1));
                else if (open.empty()) root_closed = true;
            }
        }
        if (!open.empty()) {
            const auto& element = elements[static_cast<size_t>(open.back())];
            fail(text_.size(), element.name, fmt::format("truncated: <{}> at offset 0x{:x} is never closed", element.name,
                                                         element.offset));
        }
        if (elements.empty()) fail(text_.size(), "", "no root element");
        return elements;
    }

private:
    [[noreturn]] void fail(uint64_t offset, const std::string& field, const std::string& what) const {
        throw Error({source_, offset, field}, what);
    }

    bool starts_with(std::string_view s) const { return text_.substr(pos_).starts_with(s); }

    void skip_past(std::string_view terminator, const char* what) {
        const size_t end = text_.find(terminator, pos_);
        if (end == std::string_view::npos) fail(pos_, "", fmt::format("truncated: {} never ends", what));
        pos_ = end + terminator.size();
    }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\r' ||
                                       text_[pos_] == '\n'))
            ++pos_;
    }

    void expect(char c, const std::string& field) {
        if (pos_ >= text_.size()) fail(pos_, field, "truncated inside a tag");
        if (text_[pos_] != c) fail(pos_, field, fmt::format("expected '{}'", c));
        ++pos_;
    }

    std::string read_name() {
        const size_t begin = pos_;
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            const bool name_char = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                   c == '_' || c == '-' || c == '.' || c == ':';
            if (!name_char) break;
            ++pos_;
        }
        if (pos_ >= text_.size()) fail(pos_, "", "truncated inside a tag");
        if (pos_ == begin) fail(pos_, "", "expected a name");
        return std::string(text_.substr(begin, pos_ - begin));
    }

    // Reads attributes up to '>' or '/>'; returns whether the element is empty ('/>').
    bool read_attributes(XmlElement& element) {
        while (true) {
            skip_space();
            if (pos_ >= text_.size()) fail(pos_, element.name, "truncated inside a tag");
            if (text_[pos_] == '>') {
                ++pos_;
                return false;
            }
            if (starts_with("/>")) {
                pos_ += 2;
                return true;
            }
            const std::string key = read_name();
            skip_space();
            expect('=', key);
            skip_space();
            if (pos_ >= text_.size()) fail(pos_, key, "truncated inside a tag");
            const char quote = text_[pos_];
            if (quote != '"' && quote != '\'') fail(pos_, key, "attribute value is not quoted");
            const size_t end = text_.find(quote, pos_ + 1);
            if (end == std::string_view::npos) fail(pos_, key, "truncated: attribute value never ends");
            element.attributes[key] = decode_entities(text_.substr(pos_ + 1, end - pos_ - 1), pos_ + 1);
            pos_ = end + 1;
        }
    }

    std::string decode_entities(std::string_view s, uint64_t offset) const {
        std::string out;
        for (size_t i = 0; i < s.size(); ++i) {
            if (s[i] != '&') {
                out += s[i];
                continue;
            }
            const size_t end = s.find(';', i);
            if (end == std::string_view::npos) fail(offset + i, "", "entity without ';'");
            const std::string_view entity = s.substr(i + 1, end - i - 1);
            static const std::map<std::string_view, char> named = {
                {"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
            if (auto it = named.find(entity); it != named.end()) {
                out += it->second;
            } else if (entity.size() > 1 && entity[0] == '#') {
                const bool hex = entity[1] == 'x';
                uint32_t code = 0;
                const auto digits = entity.substr(hex ? 2 : 1);
                const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), code, hex ? 16 : 10);
                if (ec != std::errc() || p != digits.data() + digits.size() || code == 0 || code > 0x7F)
                    fail(offset + i, std::string(entity), "only ASCII character references are supported");
                out += static_cast<char>(code);
            } else {
                fail(offset + i, std::string(entity), "unknown entity");
            }
            i = end;
        }
        return out;
    }

    std::string_view text_;
    const std::string& source_;
    size_t pos_ = 0;
};

}  // namespace

DebugDatabase DebugDatabase::parse(std::string_view text, const std::string& source) {
    DebugDatabase db;
    db.source_ = source;
    const std::vector<XmlElement> elements = XmlReader(text, source).read();
    if (elements[0].name != "debug")
        throw Error({source, elements[0].offset, elements[0].name}, "root element is not <debug>");
    std::map<std::string, uint64_t> table_offsets;
    for (const auto& element : elements) {
        if (element.parent != 0 || element.name != "table") continue;
        const auto name = element.attributes.find("name");
        if (name == element.attributes.end()) throw Error({source, element.offset, "table"}, "table without a name");
        if (table_offsets.contains(name->second))
            throw Error({source, element.offset, name->second}, "table appears twice");
        table_offsets[name->second] = element.offset;
        db.tables_.push_back(read_csv_table(name->second, element.content, element.content_offset, source));
    }
    auto table = [&](const std::string& name, std::initializer_list<std::string_view> columns) {
        for (const auto& t : db.tables_) {
            if (t.name == name) return TableView(t, source, table_offsets[name], columns);
        }
        throw Error({source, std::nullopt, name}, fmt::format("no table \"{}\" in the debug database", name));
    };
    auto has_table = [&](std::string_view name) {
        return std::any_of(db.tables_.begin(), db.tables_.end(), [&](const CsvTable& t) { return t.name == name; });
    };
    // Two layouts. Vela 5 queues each command against a scheduled op of its `perf` table
    // (scheduled_id), which also carries the layer name and staging usage. Vela 2.x to 4.x have
    // no `perf` table: the queue names an op of `optimised` (optimised_id; id, source_id and
    // operator, no layer name), as in every model_debug.xml of ../shared/vectors-vela and the FVP
    // anchors (Vela 3.1, 3.10, 4.1).
    const bool scheduled = has_table("perf") || !has_table("optimised");
    db.scheduled_layout_ = scheduled;
    const std::string op_column = scheduled ? "scheduled_id" : "optimised_id";
    const std::string op_table = scheduled ? "perf" : "optimised";
    const TableView cmdstream = table("cmdstream", {"id"});
    const TableView queue = table("queue", {"offset", "cmdstream_id", op_column});
    const TableView ops = scheduled ? table("perf", {"id", "source_id", "operator", "name", "staging_usage"})
                                    : table("optimised", {"id", "source_id", "operator"});
    const TableView source_ops = table("source", {"id", "operator"});

    std::map<int64_t, std::string> source_operator;
    for (size_t r = 0; r < source_ops.size(); ++r) source_operator[source_ops.number(r, "id")] = source_ops.text(r, "operator");

    std::map<int64_t, size_t> op_index;
    for (size_t r = 0; r < ops.size(); ++r) {
        VelaOp op;
        op.id = ops.number(r, "id");
        op.source_id = ops.number(r, "source_id");
        op.op = ops.text(r, "operator");
        if (scheduled) {
            op.name = ops.text(r, "name");
            op.staging_usage = ops.number(r, "staging_usage");
        }
        const auto original = source_operator.find(op.source_id);
        if (original == source_operator.end())
            ops.fail(r, "source_id", fmt::format("source op {} is not in the source table", op.source_id));
        op.original_operator = original->second;
        if (!op_index.emplace(op.id, db.ops_.size()).second) ops.fail(r, "id", fmt::format("op {} appears twice", op.id));
        db.ops_.push_back(std::move(op));
    }

    std::map<int64_t, size_t> stream_index;
    for (size_t r = 0; r < cmdstream.size(); ++r) {
        if (!stream_index.emplace(cmdstream.number(r, "id"), stream_index.size()).second)
            cmdstream.fail(r, "id", "command stream listed twice");
    }
    for (size_t r = 0; r < queue.size(); ++r) {
        const int64_t offset = queue.number(r, "offset");
        if (offset < 0 || offset > UINT32_MAX || offset % 4 != 0)
            queue.fail(r, "offset", fmt::format("{} is not a command-stream word offset", offset));
        const auto stream = stream_index.find(queue.number(r, "cmdstream_id"));
        if (stream == stream_index.end()) queue.fail(r, "cmdstream_id", "not in the cmdstream table");
        const auto op = op_index.find(queue.number(r, op_column));
        if (op == op_index.end()) queue.fail(r, op_column, fmt::format("not in the {} table", op_table));
        if (!db.queue_.emplace(std::pair{stream->second, static_cast<uint32_t>(offset)}, op->second).second)
            queue.fail(r, "offset", "command-stream offset listed twice");
    }
    if (!scheduled) db.order_ops_as_queued();
    return db;
}

std::string VelaOp::display_name() const { return name.empty() ? fmt::format("{} #{}", op, id) : name; }

std::string VelaOp::short_name() const { return short_layer_name(display_name()); }

std::string short_layer_name(std::string_view name) {
    const size_t separator = name.find(';');
    return std::string(separator == std::string_view::npos || separator == 0 ? name : name.substr(0, separator));
}

std::optional<std::string> debug_db_path(const std::string& model_path) {
    constexpr std::string_view suffix = "_vela.tflite";
    if (model_path.size() <= suffix.size() || !model_path.ends_with(suffix)) return std::nullopt;
    return model_path.substr(0, model_path.size() - suffix.size()) + "_debug.xml";
}

uint64_t DebugDatabase::max_file_bytes(uint64_t command_stream_bytes) {
    // Over the corpus model_debug.xml is 5 to 18 times its command stream (rows per op and per
    // tensor), plus a fixed part under 20 KB.
    return (uint64_t{1} << 20) + 64 * command_stream_bytes;
}

DebugDatabase DebugDatabase::load(const std::string& path, uint64_t max_bytes) {
    return parse(read_bounded_file(path, max_bytes, "--debug-db",
                                   "a debug database is at most 64 times its command stream, plus 1 MiB"),
                 path);
}

const VelaOp* DebugDatabase::op_at(size_t stream, uint32_t offset) const {
    const auto it = queue_.find({stream, offset});
    return it == queue_.end() ? nullptr : &ops_[it->second];
}

void DebugDatabase::order_ops_as_queued() {
    // Ops the queue never names (the graph's inputs) first, then by their first command.
    constexpr std::pair<size_t, uint32_t> kUnqueued{0, 0};
    std::vector<std::pair<size_t, uint32_t>> first(ops_.size(), {SIZE_MAX, UINT32_MAX});
    for (const auto& [key, op] : queue_) first[op] = std::min(first[op], key);
    for (auto& key : first)
        if (key.first == SIZE_MAX) key = kUnqueued;
    std::vector<size_t> order(ops_.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return first[a] < first[b]; });
    std::vector<VelaOp> ops;
    std::vector<size_t> new_index(ops_.size());
    for (size_t i = 0; i < order.size(); ++i) {
        new_index[order[i]] = i;
        ops.push_back(std::move(ops_[order[i]]));
    }
    ops_ = std::move(ops);
    for (auto& [key, op] : queue_) op = new_index[op];
}

void DebugDatabase::align_queue_to(const std::vector<DecodedStream>& streams) {
    if (scheduled_layout_ || queue_.empty()) return;
    std::set<std::pair<size_t, uint32_t>> op_ends;
    for (size_t s = 0; s < streams.size(); ++s) {
        for (const DecodedOp& op : streams[s].ops)
            if (is_kernel_op(op.kind)) op_ends.insert({s, op.offset + 4});  // NPU_OP_* is one word
    }
    for (const auto& [key, op] : queue_)
        if (!op_ends.contains(key)) return;
    std::map<std::pair<size_t, uint32_t>, size_t> aligned;
    for (const auto& [key, op] : queue_) aligned.emplace(std::pair{key.first, key.second - 4}, op);
    queue_ = std::move(aligned);
}

std::vector<std::pair<size_t, uint32_t>> DebugDatabase::queue_offsets() const {
    std::vector<std::pair<size_t, uint32_t>> out;
    for (const auto& [key, op] : queue_) out.push_back(key);
    return out;
}

}  // namespace ethosu
