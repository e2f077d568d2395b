#include "traces/csv_table.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "emulator/isa/error.h"

namespace ethosu {

CsvTable read_csv_table(const std::string& name, std::string_view text, uint64_t base, const std::string& source) {
    CsvTable table;
    table.name = name;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == '\n' || text[i] == '\r') {
            ++i;
            continue;
        }
        const size_t record_start = i;
        std::vector<std::string> fields;
        std::string field;
        while (true) {
            if (i < text.size() && text[i] == '"') {
                ++i;
                while (true) {
                    if (i >= text.size())
                        throw Error({source, base + record_start, name}, "truncated: quoted field never ends");
                    if (text[i] == '"') {
                        if (i + 1 < text.size() && text[i + 1] == '"') {
                            field += '"';
                            i += 2;
                            continue;
                        }
                        ++i;
                        break;
                    }
                    field += text[i++];
                }
                if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
                    throw Error({source, base + i, name}, "text after a closing quote");
            } else {
                while (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r') field += text[i++];
            }
            fields.push_back(std::move(field));
            field.clear();
            if (i < text.size() && text[i] == ',') {
                ++i;
                continue;
            }
            break;
        }
        if (table.header.empty()) {
            table.header = std::move(fields);
            continue;
        }
        if (fields.size() != table.header.size()) {
            throw Error({source, base + record_start, name},
                        fmt::format("row has {} fields, the header {}", fields.size(), table.header.size()));
        }
        table.rows.push_back(std::move(fields));
        table.row_offsets.push_back(base + record_start);
    }
    if (table.header.empty()) throw Error({source, base, name}, "table has no header row");
    return table;
}

TableView::TableView(const CsvTable& table, const std::string& source, uint64_t offset,
                     std::initializer_list<std::string_view> required)
    : table_(table), source_(source) {
    for (const auto column : required) {
        size_t i = 0;
        while (i < table.header.size() && table.header[i] != column) ++i;
        if (i == table.header.size()) throw Error({source, offset, table.name}, fmt::format("no column \"{}\"", column));
        columns_[std::string(column)] = i;
    }
}

int64_t TableView::number(size_t row, const std::string& column) const {
    const std::string& s = text(row, column);
    int64_t value = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size()) fail(row, column, fmt::format("\"{}\" is not an integer", s));
    return value;
}

double TableView::real(size_t row, const std::string& column) const {
    const std::string& s = text(row, column);
    double value = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(value))
        fail(row, column, fmt::format("\"{}\" is not a number", s));
    return value;
}

void TableView::fail(size_t row, const std::string& column, const std::string& what) const {
    throw Error({source_, row_offset(row), fmt::format("{}.{}", table_.name, column)}, what);
}

}  // namespace ethosu
