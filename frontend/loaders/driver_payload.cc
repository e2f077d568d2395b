// The driver payload Vela attaches to each NPU invocation: COP1 (a list of tagged driver
// actions) or COP2 (a versioned header, then sized entries with metadata).

#include <fmt/format.h>

#include "frontend/loaders/byte_reader.h"
#include "frontend/loaders/loader_common.h"
#include "frontend/loaders/model.h"

namespace ethosu {
namespace {

constexpr uint32_t kCop1Magic = 0x31504F43;  // "COP1"
constexpr uint32_t kCop2Magic = 0x32504F43;  // "COP2"
constexpr uint32_t kVeumMagic = 0x4D554556;  // "VEUM": Vela's COP2 command-stream metadata

// COP1 tag ids (bits 7:0 of a tag word).
enum Cop1Tag : uint8_t { kOptimizerConfig = 1, kCommandStream = 2, kReadApb = 3, kDumpShram = 4, kNop = 5 };

constexpr uint32_t kCop2CommandStreamEntry = 1;

CommandStream parse_cop1(ByteReader& r, uint64_t max_stream_words) {
    CommandStream cs;
    cs.payload_kind = "COP1";
    bool have_stream = false;
    while (!r.at_end()) {
        const size_t tag_pos = r.position();
        const uint32_t tag = r.u32("tag");
        switch (tag & 0xFF) {
            case kOptimizerConfig:
                if (cs.config_word) r.fail_at(tag_pos, "OPTIMIZER_CONFIG", "second OPTIMIZER_CONFIG tag");
                cs.config_word_offset = r.file_offset();
                cs.config_word = r.u32("OPTIMIZER_CONFIG.CONFIG");
                cs.id_word = r.u32("OPTIMIZER_CONFIG.ID");
                break;
            case kNop: break;
            case kCommandStream: {
                if (have_stream)
                    r.fail_at(tag_pos, "COMMAND_STREAM",
                              "second COMMAND_STREAM tag (one stream per payload is supported)");
                const uint64_t length = (((tag >> 8) & 0xFF) << 16) | (tag >> 16);
                if (length * 4 > r.remaining())
                    r.fail_at(tag_pos, "COMMAND_STREAM.length",
                              fmt::format("stream of {} words runs past the end of the payload ({} bytes left)", length,
                                          r.remaining()));
                check_stream_length(r, tag_pos, length, max_stream_words, "COMMAND_STREAM.length");
                cs.file_offset = r.file_offset();
                cs.words = r.words(length, "COMMAND_STREAM");
                have_stream = true;
                break;
            }
            case kReadApb:
            case kDumpShram:
                r.fail_at(tag_pos, "tag",
                          fmt::format("driver action {} ({}) is not supported", tag & 0xFF,
                                      (tag & 0xFF) == kReadApb ? "READ_APB" : "DUMP_SHRAM"),
                          ErrorKind::Unsupported);
            default:
                r.fail_at(tag_pos, "tag", fmt::format("unknown driver action id {} in tag 0x{:08x}", tag & 0xFF, tag));
        }
    }
    if (!have_stream) r.fail("COMMAND_STREAM", "payload has no COMMAND_STREAM tag");
    return cs;
}

// One COP2 command-stream entry: metadata (header "VEUM", then CONFIG, ID, features,
// staging usage), padding, then the stream filling the rest of the entry.
void parse_cop2_stream_entry(ByteReader entry, CommandStream& cs, uint64_t max_stream_words) {
    const uint32_t metadata_length = entry.u32("metadata.length");  // bytes after this word
    ByteReader meta = entry.sub(metadata_length, "metadata");
    meta.expect(meta.u32("metadata.magic") == kVeumMagic, "metadata.magic", "expected \"VEUM\"");
    const uint16_t major = meta.u16("metadata.version.major");
    meta.expect(major == 1, "metadata.version.major", fmt::format("metadata version {} is not 1", major));
    meta.u16("metadata.version.minor");
    const uint32_t data_length = meta.u32("metadata.data_length");
    ByteReader data = meta.sub(data_length, "metadata.data");
    cs.config_word_offset = data.file_offset();
    cs.config_word = data.u32("metadata.CONFIG");
    cs.id_word = data.u32("metadata.ID");
    // The features word's local-addressing bit (vela --separate-io-regions) says the inputs and
    // outputs sit in regions of their own (3 and 4); the tensors' records carry those regions.
    data.u32("metadata.features");

    if (entry.remaining() % 4 != 0)
        entry.fail("COMMAND_STREAM",
                   fmt::format("stream of {} bytes is not a whole number of words", entry.remaining()));
    check_stream_length(entry, entry.position(), entry.remaining() / 4, max_stream_words, "COMMAND_STREAM");
    cs.file_offset = entry.file_offset();
    cs.words = entry.words(entry.remaining() / 4, "COMMAND_STREAM");
}

CommandStream parse_cop2(ByteReader& r, uint64_t max_stream_words) {
    CommandStream cs;
    cs.payload_kind = "COP2";
    const uint16_t major = r.u16("version.major");
    r.expect(major == 1, "version.major", fmt::format("COP2 version {} is not 1", major));
    r.u16("version.minor");
    const uint64_t actions_length = r.u64("length");
    if (actions_length != r.remaining())
        r.fail("length", fmt::format("header gives {} bytes of actions but {} follow", actions_length, r.remaining()));
    bool have_stream = false;
    while (!r.at_end()) {
        const size_t entry_pos = r.position();
        const uint32_t type = r.u32("entry.type");
        const uint32_t length = r.u32("entry.length");
        ByteReader entry = r.sub(length, "entry");
        if (type != kCop2CommandStreamEntry)
            r.fail_at(entry_pos, "entry.type", fmt::format("unknown entry type {}", type));
        if (have_stream)
            r.fail_at(entry_pos, "entry.type", "second command-stream entry (one stream per payload is supported)");
        parse_cop2_stream_entry(entry, cs, max_stream_words);
        have_stream = true;
    }
    if (!have_stream) r.fail("entry", "payload has no command-stream entry");
    return cs;
}

}  // namespace

CommandStream parse_driver_payload(const std::string& path, const uint8_t* payload, size_t size, uint64_t base_offset,
                                   uint64_t max_stream_words) {
    ByteReader r(path, {payload, size}, base_offset);
    if (size % 4 != 0) r.fail("payload", fmt::format("payload of {} bytes is not a whole number of words", size));
    const uint32_t magic = r.u32("magic");
    if (magic == kCop1Magic) return parse_cop1(r, max_stream_words);
    if (magic == kCop2Magic) return parse_cop2(r, max_stream_words);
    r.fail_at(0, "magic", fmt::format("expected \"COP1\" or \"COP2\", found 0x{:08x}", magic));
}

}  // namespace ethosu
