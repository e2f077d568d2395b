#include "frontend/cli/manifest.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <set>
#include <span>

#include "emulator/isa/bounded_file.h"

namespace ethosu {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// A manifest of every corpus model, configuration and seed takes about 1 MB; 64 times that is
// room for any real suite and keeps /dev/zero given as a manifest from filling the memory.
constexpr uint64_t kMaxManifestBytes = 64ull << 20;
// A manifest nests 7 levels deep (entries, baseline, traffic, memories); deeper JSON is refused
// while it is parsed, before anything recurses over it.
constexpr int kMaxManifestDepth = 32;

enum class KeyType { String, Strings, Count, Number, Bool, Array, Object, Outputs };

// The one declaration of each object's keys: validation, and the list an unknown key is told.
struct Key {
    std::string_view name;
    KeyType type;
    bool required = false;
};

constexpr Key kManifestKeys[] = {{"format", KeyType::String, true},
                                 {"version", KeyType::Count, true},
                                 {"comment", KeyType::String},
                                 {"entries", KeyType::Array, true}};
constexpr Key kEntryKeys[] = {{"name", KeyType::String},          {"model", KeyType::String, true},
                              {"npu", KeyType::String},           {"system_config", KeyType::String},
                              {"memory_mode", KeyType::String},   {"config", KeyType::Strings},
                              {"inputs", KeyType::Strings},       {"outputs", KeyType::Outputs},
                              {"baseline", KeyType::Object},      {"skip", KeyType::String},
                              {"allow_cpu_only", KeyType::Bool},  {"comment", KeyType::String}};
constexpr Key kOutputKeys[] = {{"file", KeyType::String, true},
                               {"max_abs_diff", KeyType::Number},
                               {"max_differing", KeyType::Count},
                               {"comment", KeyType::String}};
constexpr Key kBaselineKeys[] = {{"drift_percent", KeyType::Number},
                                 {"allow_faster", KeyType::Bool},
                                 {"cycles", KeyType::Count, true},
                                 {"traffic", KeyType::Object},
                                 {"layers", KeyType::Array}};
constexpr Key kLayerKeys[] = {{"name", KeyType::String, true}, {"cycles", KeyType::Count, true}};
constexpr Key kTrafficKeys[] = {{"memories", KeyType::Object}, {"axi", KeyType::Array}};
constexpr Key kMemoryTrafficKeys[] = {{"read_bytes", KeyType::Count, true}, {"write_bytes", KeyType::Count, true}};
constexpr Key kPortKeys[] = {{"port", KeyType::String, true},
                             {"memory", KeyType::String, true},
                             {"read_beats", KeyType::Count, true},
                             {"write_beats", KeyType::Count, true},
                             // Written by baseline (run --json has them); not compared.
                             {"read_transactions", KeyType::Count},
                             {"write_transactions", KeyType::Count}};

std::string_view type_text(KeyType type) {
    switch (type) {
        case KeyType::String: return "a string";
        case KeyType::Strings: return "a list of strings";
        case KeyType::Count: return "a non-negative integer";
        case KeyType::Number: return "a non-negative number";
        case KeyType::Bool: return "true or false";
        case KeyType::Array: return "a list";
        case KeyType::Object: return "an object";
        case KeyType::Outputs: return "a list of files, {\"file\", ...} objects or nulls";
    }
    return "";
}

// A value for an error message: numbers and short strings as written, anything else by its type.
std::string describe(const json& value) {
    if (value.is_number() || value.is_boolean() || value.is_null()) return value.dump();
    if (value.is_string() && value.get<std::string>().size() <= 64) return value.dump();
    return std::string(value.is_array() ? "a list" : value.is_object() ? "an object" : "a long string");
}

bool has_type(const json& value, KeyType type) {
    switch (type) {
        case KeyType::String: return value.is_string();
        case KeyType::Strings:
            return value.is_array() && std::all_of(value.begin(), value.end(), [](const json& v) { return v.is_string(); });
        case KeyType::Count: return value.is_number_integer() && (value.is_number_unsigned() || value.get<int64_t>() >= 0);
        case KeyType::Number: return value.is_number() && value.get<double>() >= 0 && std::isfinite(value.get<double>());
        case KeyType::Bool: return value.is_boolean();
        case KeyType::Array: return value.is_array();
        case KeyType::Object: return value.is_object();
        case KeyType::Outputs:
            return value.is_array() && std::all_of(value.begin(), value.end(), [](const json& v) {
                       return v.is_string() || v.is_object() || v.is_null();
                   });
    }
    return false;
}

// Where in the manifest a value sits: "entries[3].outputs[0]".
struct Place {
    const std::string& label;
    std::string path;

    Place operator/(std::string_view key) const { return {label, path.empty() ? std::string(key) : path + "." + std::string(key)}; }
    Place operator[](size_t index) const { return {label, fmt::format("{}[{}]", path, index)}; }
    [[noreturn]] void fail(const std::string& reason) const { throw UsageError({label, std::nullopt, path}, reason); }
};

// The object's keys against their declaration: each known, of its type, the required ones there.
void check_keys(const json& object, const Place& at, std::span<const Key> keys) {
    if (!object.is_object()) at.fail(fmt::format("must be an object, not {}", describe(object)));
    for (const auto& item : object.items()) {
        // Named, not a structured binding: clang 14 cannot capture one in the lambda.
        const std::string& name = item.key();
        const json& value = item.value();
        const auto key = std::find_if(keys.begin(), keys.end(), [&](const Key& k) { return k.name == name; });
        if (key == keys.end()) {
            std::string valid;
            for (const Key& k : keys) valid += fmt::format("{}{}", valid.empty() ? "" : ", ", k.name);
            (at / name).fail(fmt::format("unknown key; valid keys: {}", valid));
        }
        if (!has_type(value, key->type)) (at / name).fail(fmt::format("must be {}, not {}", type_text(key->type), describe(value)));
    }
    for (const Key& k : keys)
        if (k.required && !object.contains(k.name)) (at / k.name).fail("missing");
}

std::string resolve(const std::string& path, const fs::path& folder) {
    const fs::path p(path);
    return (p.is_absolute() || folder.empty() ? p : folder / p).string();
}

// A path from the manifest that must name an existing file.
std::string existing_file(const json& value, const Place& at, const fs::path& folder) {
    const std::string path = resolve(value.get<std::string>(), folder);
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) at.fail(fmt::format("no such file: {}", path));
    return path;
}

bool is_memory_name(const std::string& name) {
    for (int m = 0; m < kMemoryKinds; ++m)
        if (memory_kind_name(static_cast<MemoryKind>(m)) == name) return true;
    return false;
}

void check_memory_name(const std::string& name, const Place& at) {
    if (is_memory_name(name)) return;
    std::string valid;
    for (int m = 0; m < kMemoryKinds; ++m)
        valid += fmt::format("{}{}", m ? ", " : "", memory_kind_name(static_cast<MemoryKind>(m)));
    at.fail(fmt::format("no memory {:?}; memories: {}", name, valid));
}

Baseline parse_baseline(const json& object, const Place& at) {
    check_keys(object, at, kBaselineKeys);
    Baseline baseline;
    baseline.drift_percent = object.value("drift_percent", 0.0);
    baseline.allow_faster = object.value("allow_faster", false);
    baseline.figures = {{"cycles", object["cycles"]}};
    for (size_t i = 0; i < object.value("layers", json::array()).size(); ++i) {
        const json& layer = object["layers"][i];
        check_keys(layer, (at / "layers")[i], kLayerKeys);
        baseline.layers.push_back({layer["name"].get<std::string>(), layer["cycles"].get<int64_t>()});
    }
    if (!object.contains("traffic")) return baseline;
    const json& traffic = object["traffic"];
    check_keys(traffic, at / "traffic", kTrafficKeys);
    if (traffic.contains("memories")) {
        for (const auto& [name, counts] : traffic["memories"].items()) {
            const Place place = at / "traffic" / "memories" / name;
            check_memory_name(name, place);
            check_keys(counts, place, kMemoryTrafficKeys);
        }
    }
    if (traffic.contains("axi")) {
        std::set<std::string> ports;
        for (size_t i = 0; i < traffic["axi"].size(); ++i) {
            const json& port = traffic["axi"][i];
            const Place place = (at / "traffic" / "axi")[i];
            check_keys(port, place, kPortKeys);
            const std::string name = port["port"].get<std::string>();
            if (name != "AXI0" && name != "AXI1") (place / "port").fail(fmt::format("{:?}: the ports are AXI0 and AXI1", name));
            if (!ports.insert(name).second) (place / "port").fail(fmt::format("{} is listed twice", name));
            check_memory_name(port["memory"].get<std::string>(), place / "memory");
        }
    }
    baseline.figures["traffic"] = traffic;
    return baseline;
}

OutputExpectation parse_output(const json& value, const Place& at, const fs::path& folder) {
    if (value.is_null()) return {};
    if (value.is_string()) return {existing_file(value, at, folder), std::nullopt, std::nullopt};
    check_keys(value, at, kOutputKeys);
    OutputExpectation out{existing_file(value["file"], at / "file", folder), std::nullopt, std::nullopt};
    if (value.contains("max_abs_diff")) out.max_abs_diff = value["max_abs_diff"].get<double>();
    if (value.contains("max_differing")) out.max_differing = value["max_differing"].get<uint64_t>();
    return out;
}

ManifestEntry parse_entry(const json& object, const Place& at, const fs::path& folder) {
    check_keys(object, at, kEntryKeys);
    ManifestEntry entry;
    entry.name = object.value("name", default_entry_name(object["model"].get<std::string>()));
    if (entry.name.empty()) (at / "name").fail("must not be empty");
    entry.skip = object.value("skip", "");
    if (object.contains("skip") && entry.skip.empty()) (at / "skip").fail("must say why the entry is skipped");
    entry.model = existing_file(object["model"], at / "model", folder);
    entry.npu = object.value("npu", "");
    entry.system.system_config = object.value("system_config", "");
    entry.system.memory_mode = object.value("memory_mode", "");
    for (size_t i = 0; i < object.value("config", json::array()).size(); ++i)
        entry.system.config_files.push_back(existing_file(object["config"][i], (at / "config")[i], folder));
    for (size_t i = 0; i < object.value("inputs", json::array()).size(); ++i)
        entry.inputs.push_back(existing_file(object["inputs"][i], (at / "inputs")[i], folder));
    for (size_t i = 0; i < object.value("outputs", json::array()).size(); ++i)
        entry.outputs.push_back(parse_output(object["outputs"][i], (at / "outputs")[i], folder));
    if (object.contains("baseline")) entry.baseline = parse_baseline(object["baseline"], at / "baseline");
    entry.allow_cpu_only = object.value("allow_cpu_only", false);
    return entry;
}

}  // namespace

Manifest parse_manifest(json document, const std::string& label, const fs::path& folder) {
    const Place top{label, ""};
    check_keys(document, top, kManifestKeys);
    if (document["format"] != kManifestFormat) (top / "format").fail(fmt::format("must be {:?}", kManifestFormat));
    if (document["version"] != kManifestVersion)
        (top / "version").fail(fmt::format("{} is not a version this ethosu-emu reads ({})", document["version"].dump(),
                                           kManifestVersion));
    Manifest manifest{label, {}, {}};
    std::set<std::string> names;
    const json& entries = document["entries"];
    for (size_t i = 0; i < entries.size(); ++i) {
        const Place at = (top / "entries")[i];
        manifest.entries.push_back(parse_entry(entries[i], at, folder));
        if (!names.insert(manifest.entries.back().name).second)
            (at / "name").fail(fmt::format("{:?} names an earlier entry too; give each entry a name of its own",
                                           manifest.entries.back().name));
    }
    manifest.document = std::move(document);
    return manifest;
}

Manifest read_manifest(const std::string& path) {
    std::string text;
    try {
        text = read_bounded_file(path, kMaxManifestBytes, "manifest", "a manifest of the whole corpus is about 1 MB");
    } catch (const Error& e) {
        throw UsageError(e.where(), e.reason());
    }
    json document;
    const auto limit_depth = [&](int depth, json::parse_event_t, json&) {
        if (depth > kMaxManifestDepth)
            throw UsageError({path, std::nullopt, "JSON"}, fmt::format("nested deeper than {} levels", kMaxManifestDepth));
        return true;
    };
    try {
        document = json::parse(text, limit_depth);
    } catch (const json::parse_error& e) {
        throw UsageError({path, e.byte ? std::optional<uint64_t>(e.byte - 1) : std::nullopt, "JSON"}, e.what());
    }
    return parse_manifest(std::move(document), path, fs::path(path).parent_path());
}

json empty_manifest_document() {
    return {{"format", kManifestFormat}, {"version", kManifestVersion}, {"entries", json::array()}};
}

void write_manifest(const json& document, const std::string& path) {
    std::ofstream out(path);
    out << document.dump(2) << "\n";
    if (!out) throw Error({path, std::nullopt, {}}, "cannot write file", ErrorKind::Io);
}

std::string path_in_manifest(const fs::path& path, const fs::path& folder) {
    std::error_code ec;
    const fs::path absolute = fs::absolute(path, ec);
    const fs::path relative = fs::relative(absolute, fs::absolute(folder.empty() ? "." : folder, ec), ec);
    if (ec || relative.empty()) return absolute.generic_string();
    return relative.generic_string();
}

json baseline_json(const json& timing) {
    return {{"cycles", timing["cycles"]["total"]}, {"traffic", timing["traffic"]}};
}

std::string default_entry_name(const std::string& model_as_written) {
    std::vector<std::string> parts;
    for (const auto& part : fs::path(model_as_written).relative_path())
        if (part != ".." && part != "." && !part.empty()) parts.push_back(part.string());
    if (parts.empty()) return model_as_written;
    parts.back() = fs::path(parts.back()).stem().string();
    const size_t first = parts.size() > 3 ? parts.size() - 3 : 0;
    std::string name;
    for (size_t i = first; i < parts.size(); ++i) name += (name.empty() ? "" : "/") + parts[i];
    return name;
}

std::vector<Figure> baseline_figures(const json& figures) {
    std::vector<Figure> out{{"cycles", figures["cycles"]}};
    if (!figures.contains("traffic")) return out;
    const json& traffic = figures["traffic"];
    // Every memory in a fixed order, so that a memory without traffic on one side compares as 0.
    for (int m = 0; m < kMemoryKinds && traffic.contains("memories"); ++m) {
        const std::string name(memory_kind_name(static_cast<MemoryKind>(m)));
        const json counts = traffic.value("memories", json::object()).value(name, json::object());
        out.push_back({name + " read bytes", counts.value("read_bytes", json(0))});
        out.push_back({name + " write bytes", counts.value("write_bytes", json(0))});
    }
    for (const json& port : traffic.value("axi", json::array())) {
        const std::string name = port["port"].get<std::string>();
        out.push_back({name + " memory", port["memory"]});
        out.push_back({name + " read beats", port["read_beats"]});
        out.push_back({name + " write beats", port["write_beats"]});
    }
    return out;
}

}  // namespace ethosu
