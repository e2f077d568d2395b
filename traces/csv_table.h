#pragma once
// CSV as Vela writes it (the tables of its debug database, its per-layer report): a header row,
// then one record per line; read with errors that name the file, the byte offset of the record
// and `table.column`.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ethosu {

struct CsvTable {
    std::string name;
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::vector<uint64_t> row_offsets;  // byte offset of each row in the file, for errors
};

// Comma-separated, strings in double quotes (a doubled quote inside is one quote), one record per
// line; blank lines are skipped. base: where text starts in the file named by source. Throws
// ethosu::Error for an unterminated quote, text after a closing quote, a row whose field count
// is not the header's, and a table without a header.
CsvTable read_csv_table(const std::string& name, std::string_view text, uint64_t base, const std::string& source);

// Column access by name with errors that name file, table, row and column.
class TableView {
public:
    // Throws ethosu::Error (at offset) when a required column is missing.
    TableView(const CsvTable& table, const std::string& source, uint64_t offset,
              std::initializer_list<std::string_view> required);

    size_t size() const { return table_.rows.size(); }
    uint64_t row_offset(size_t row) const { return table_.row_offsets[row]; }
    const std::string& text(size_t row, const std::string& column) const { return table_.rows[row][columns_.at(column)]; }
    int64_t number(size_t row, const std::string& column) const;  // an integer, else an Error
    double real(size_t row, const std::string& column) const;      // a decimal number, else an Error

    [[noreturn]] void fail(size_t row, const std::string& column, const std::string& what) const;

private:
    const CsvTable& table_;
    const std::string& source_;
    std::map<std::string, size_t> columns_;
};

}  // namespace ethosu
