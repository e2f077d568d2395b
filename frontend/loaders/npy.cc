#include "frontend/loaders/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace ethosu {
namespace {

constexpr std::string_view kMagic{"\x93NUMPY", 6};

// The header's dict literal, parsed strictly: string keys, and values that are a string,
// True/False or a tuple of non-negative integers. Errors point at the offending character.
class HeaderParser {
public:
    HeaderParser(const ByteReader& member, size_t text_pos, std::string_view text, std::string field)
        : member_(member), text_pos_(text_pos), text_(text), field_(std::move(field)) {}

    void parse(NpyArray& out) {
        bool have_descr = false, have_order = false, have_shape = false;
        expect('{');
        while (!consume('}')) {
            const size_t key_pos = pos_;
            const std::string key = string_literal();
            expect(':');
            const auto once = [&](bool& seen) {
                if (seen) fail_at(key_pos, fmt::format("key '{}' appears twice", key));
                seen = true;
            };
            if (key == "descr") {
                once(have_descr);
                out.descr = string_literal();
            } else if (key == "fortran_order") {
                once(have_order);
                out.fortran_order = boolean();
            } else if (key == "shape") {
                once(have_shape);
                out.shape = int_tuple();
            } else {
                fail_at(key_pos, fmt::format("unexpected key '{}'", key));
            }
            if (!consume(',')) {
                expect('}');
                break;
            }
        }
        skip_space();
        if (pos_ != text_.size()) fail("unexpected text after the header dict");
        if (!have_descr || !have_order || !have_shape) fail("header lacks one of 'descr', 'fortran_order', 'shape'");
    }

private:
    [[noreturn]] void fail_at(size_t pos, const std::string& reason) const {
        member_.fail_at(text_pos_ + pos, field_, reason);
    }
    [[noreturn]] void fail(const std::string& reason) const { fail_at(pos_, reason); }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n')) ++pos_;
    }
    bool consume(char c) {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!consume(c)) fail(fmt::format("expected '{}'", c));
    }

    std::string string_literal() {
        skip_space();
        if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a quoted string");
        const char quote = text_[pos_++];
        const size_t end = text_.find(quote, pos_);
        if (end == std::string_view::npos) fail("unterminated string");
        const std::string_view body = text_.substr(pos_, end - pos_);
        if (body.find('\\') != std::string_view::npos) fail("escapes in strings are not supported");
        pos_ = end + 1;
        return std::string(body);
    }

    bool boolean() {
        skip_space();
        if (consume_word("True")) return true;
        if (consume_word("False")) return false;
        fail("expected True or False");
    }
    bool consume_word(std::string_view word) {
        if (text_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    uint64_t integer() {
        skip_space();
        const size_t start = pos_;
        uint64_t value = 0;
        while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
            const uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
            if (value > (UINT64_MAX - digit) / 10) fail_at(start, "dimension does not fit in 64 bits");
            value = value * 10 + digit;
            ++pos_;
        }
        if (pos_ == start) fail("expected a non-negative integer");
        return value;
    }

    std::vector<uint64_t> int_tuple() {
        expect('(');
        std::vector<uint64_t> values;
        while (!consume(')')) {
            if (values.size() == kMaxNpyDimensions) fail(fmt::format("more than {} dimensions", kMaxNpyDimensions));
            values.push_back(integer());
            if (!consume(',')) {
                expect(')');
                break;
            }
        }
        return values;
    }

    const ByteReader& member_;
    size_t text_pos_;
    std::string_view text_;
    std::string field_;
    size_t pos_ = 0;
};

// Bytes per element of a descr such as "<i8" or "|S580"; only little-endian or byte-order-free
// plain types (no objects, no structured types).
uint64_t item_size(const ByteReader& r, size_t header_pos, const std::string& descr, const std::string& field) {
    const auto bad = [&](const std::string& reason) {
        r.fail_at(header_pos, field, fmt::format("descr '{}': {}", descr, reason));
    };
    if (descr.size() < 2 || (descr[0] != '<' && descr[0] != '|')) bad("only little-endian data is supported");
    if (std::string_view("biufcSUV").find(descr[1]) == std::string_view::npos)
        bad("only numbers and byte strings are read (object arrays are pickles)");
    const std::string_view digits = std::string_view(descr).substr(2);
    if (digits.empty() || digits.size() > 9 ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
        bad("element size is not a small decimal number");
    const uint64_t size = std::stoull(std::string(digits));
    if (size == 0) bad("element size 0");
    return size;
}

}  // namespace

NpyArray parse_npy(ByteReader member, const std::string& name) {
    const auto magic = member.bytes(kMagic.size(), name + ": magic");
    if (!std::equal(magic.begin(), magic.end(), kMagic.begin(),
                    [](uint8_t a, char b) { return a == static_cast<uint8_t>(b); }))
        member.fail_at(0, name + ": magic", "not a .npy array (no \\x93NUMPY magic)");
    const uint8_t major = member.u8(name + ": version");
    member.u8(name + ": version");
    if (major < 1 || major > 3)
        member.fail_at(6, name + ": version", fmt::format("format version {} is not 1..3", major));
    const uint64_t header_length =
        major == 1 ? member.u16(name + ": header length") : member.u32(name + ": header length");
    const size_t header_pos = member.position();
    const auto header = member.bytes(header_length, name + ": header");

    NpyArray array{"", false, {}, member};  // elements narrowed to the data below
    HeaderParser(member, header_pos, {reinterpret_cast<const char*>(header.data()), header.size()}, name + ": header")
        .parse(array);
    if (array.fortran_order && array.shape.size() > 1)
        member.fail_at(header_pos, name + ": header", "Fortran-ordered arrays are not supported", ErrorKind::Unsupported);

    const uint64_t item = item_size(member, header_pos, array.descr, name + ": header");
    uint64_t count = 0;
    if (std::find(array.shape.begin(), array.shape.end(), 0) == array.shape.end()) {
        count = 1;
        for (const uint64_t dim : array.shape) {  // checked before multiplying, so it cannot overflow
            if (count > member.remaining() / dim)
                member.fail(name + ": data",
                            fmt::format("shape needs more elements than the {} bytes left", member.remaining()));
            count *= dim;
        }
    }
    if (count > member.remaining() / item)
        member.fail(name + ": data", fmt::format("{} elements of {} bytes need more than the {} bytes left", count,
                                                 item, member.remaining()));
    array.elements = member.sub(count * item, name + ": data");
    if (!member.at_end())
        member.fail(name + ": data", fmt::format("{} bytes follow the array data", member.remaining()));
    return array;
}

std::string npy_descr(ElementType type) {
    switch (type) {
        case ElementType::Int8: return "|i1";
        case ElementType::UInt8: return "|u1";
        case ElementType::Bool: return "|b1";
        case ElementType::Int16: return "<i2";
        case ElementType::UInt16: return "<u2";
        case ElementType::Int32: return "<i4";
        case ElementType::Int64: return "<i8";
        case ElementType::Float32: return "<f4";
        case ElementType::Int4:  // packed two to a byte: numpy has no such type
        case ElementType::Other: return "";
    }
    return "";
}

std::string shape_tuple(std::span<const int64_t> shape) {
    // A one-element tuple keeps its trailing comma, as in Python.
    std::string dims;
    for (const int64_t d : shape) dims += fmt::format("{}, ", d);
    if (shape.size() > 1) dims.resize(dims.size() - 2);
    else if (shape.size() == 1) dims.pop_back();
    return "(" + dims + ")";
}

std::vector<uint8_t> npy_file(const std::string& descr, std::span<const int64_t> shape, std::span<const uint8_t> elements) {
    std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_tuple(shape));
    // numpy pads the header with spaces and a newline so the data starts 64-byte aligned.
    const size_t preamble = kMagic.size() + 4;
    header.append(63 - (preamble + header.size()) % 64, ' ');
    header.push_back('\n');
    std::vector<uint8_t> file(kMagic.begin(), kMagic.end());
    file.push_back(1);
    file.push_back(0);
    file.push_back(static_cast<uint8_t>(header.size() & 0xFF));
    file.push_back(static_cast<uint8_t>(header.size() >> 8));
    file.insert(file.end(), header.begin(), header.end());
    file.insert(file.end(), elements.begin(), elements.end());
    return file;
}

}  // namespace ethosu
