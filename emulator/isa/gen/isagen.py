#!/usr/bin/env python3
"""Generate the ISA tables (commands, fields, enums, registers) from the per-generation
TOML descriptions in emulator/isa/desc.

The output is reproducible: it depends only on the descriptions' content (no paths,
dates or ordering of the file system). A description that breaks an invariant
(overlapping fields, duplicate opcodes, unknown keys, ...) is a build error that names
the file and the item.
"""
import argparse
import sys
import tomllib
from pathlib import Path

CMD_KINDS = ("cmd0", "cmd1")
ACCESS = ("RW", "RO", "WO")
GEN_KEYS = {"name", "product", "arch", "address_bits"}
COMMAND_KEYS = {"name", "kind", "opcode", "op", "fields"}
FIELD_KEYS = {"name", "bits", "enum", "signed", "format", "reads_as"}
REGISTER_KEYS = {"name", "offset", "count", "width", "reset", "access", "fields"}
REG_FIELD_KEYS = {"name", "bits"}
TOP_KEYS = {"generation", "enums", "command", "register"}


class DescriptionError(Exception):
    pass


def fail(path, where, message):
    raise DescriptionError(f"{path}: {where}: {message}")


def check_keys(path, where, table, allowed):
    unknown = sorted(set(table) - allowed)
    if unknown:
        fail(path, where, f"unknown key '{unknown[0]}' (valid: {', '.join(sorted(allowed))})")


def parse_range(path, where, text):
    """'31:16' or '16' -> (lo, width)."""
    try:
        if ":" in text:
            hi, lo = (int(p) for p in text.split(":"))
        else:
            hi = lo = int(text)
    except ValueError:
        fail(path, where, f"bad bit range '{text}'")
    if hi < lo:
        fail(path, where, f"bit range '{text}' has high < low")
    return lo, hi - lo + 1


def parse_bits(path, where, bits):
    parts = bits if isinstance(bits, list) else [bits]
    if not parts or len(parts) > 2:
        fail(path, where, "a field has one or two bit ranges")
    return [parse_range(path, where, p) for p in parts]


def read_toml(path):
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        fail(path, "file", e.strerror)
    except tomllib.TOMLDecodeError as e:
        fail(path, "toml", str(e))


def by_name(path, where, rows, name):
    found = [i for i, row in enumerate(rows) if row.get("name") == name]
    if not found:
        fail(path, where, f"'{name}' is not in the inherited description")
    return found[0]


def read_description(path, inheriting=()):
    """The description's tables, with those of the description it inherits (`inherit = "<file>"`)
    merged in: its own [generation]; the inherited enums, commands and registers less those
    [remove] names, each of its own rows replacing the inherited row of that name or adding one.
    Commands stay in (kind, opcode) order, registers are ordered by offset in load."""
    doc = read_toml(path)
    base_name = doc.pop("inherit", None)
    remove = doc.pop("remove", None)
    if base_name is None:
        if remove is not None:
            fail(path, "remove", "only a description that inherits removes rows")
        return doc
    base_path = Path(path).parent / base_name
    if base_path.resolve() in inheriting:
        fail(path, "inherit", f"'{base_name}' inherits this description back")
    base = read_description(base_path, inheriting + (Path(path).resolve(),))
    remove = remove or {}
    check_keys(path, "remove", remove, {"enums", "commands", "registers"})
    if "generation" not in doc:
        fail(path, "generation", "a description that inherits gives its own [generation] table")
    merged = dict(doc)
    enums = dict(base.get("enums", {}))
    for name in remove.get("enums", []):
        if name not in enums:
            fail(path, "remove.enums", f"'{name}' is not in the inherited description")
        del enums[name]
    enums.update(doc.get("enums", {}))
    merged["enums"] = enums
    for key, removed in (("command", "commands"), ("register", "registers")):
        rows = list(base.get(key, []))
        for name in remove.get(removed, []):
            del rows[by_name(path, f"remove.{removed}", rows, name)]
        for row in doc.get(key, []):
            names = [r.get("name") for r in rows]
            if row.get("name") in names:
                rows[names.index(row.get("name"))] = row
            else:
                rows.append(row)
        merged[key] = rows
    merged["command"].sort(key=lambda c: (str(c.get("kind")), c.get("opcode") if isinstance(c.get("opcode"), int) else -1))
    return merged


def load(path):
    doc = read_description(path)
    check_keys(path, "top level", doc, TOP_KEYS)
    gen = doc.get("generation")
    if gen is None:
        fail(path, "generation", "missing [generation] table")
    check_keys(path, "generation", gen, GEN_KEYS)
    for key in GEN_KEYS:
        if key not in gen:
            fail(path, "generation", f"missing key '{key}'")

    # [enums.<name>]: the values Arm's interface header defines. An enum the engine reads declares
    # `means = "<EngineEnum>"` and gives each value as { value = N, means = "<Enumerator>", ... }:
    # the engine enumerator it means and that enumerator's attributes (integers or booleans, the
    # same wherever the enumerator appears). isagen generates the engine enums from these rows, so
    # a value, its meaning and its attributes are one row and the decoder maps no code by hand.
    enums = {}
    meanings = {}
    for ename, table in sorted(doc.get("enums", {}).items()):
        where = f"enums.{ename}"
        engine = table.get("means")
        if engine is not None and (not isinstance(engine, str) or not engine.isidentifier()):
            fail(path, f"{where}.means", "must name the engine enum")
        rows = {k: v for k, v in table.items() if k != "means"}
        if not rows:
            fail(path, where, "an enum needs at least one value")
        seen = {}
        values = {}
        mapped = {}
        for vname, row in rows.items():
            vwhere = f"{where}.{vname}"
            if engine is None:
                if isinstance(row, dict):
                    fail(path, vwhere, "a value with a meaning needs the enum's 'means' (the engine enum)")
                value = row
            else:
                if not isinstance(row, dict):
                    fail(path, vwhere, f"value has no meaning (write {{ value = N, means = \"...\" }})")
                if "value" not in row or "means" not in row:
                    fail(path, vwhere, "needs 'value' and 'means'")
                value = row["value"]
                target = row["means"]
                if not isinstance(target, str) or not target.isidentifier():
                    fail(path, vwhere, "'means' must be an engine enumerator's name")
                attrs = {k: v for k, v in row.items() if k not in ("value", "means")}
                for k, v in attrs.items():
                    if not k.isidentifier() or not isinstance(v, (int, bool)):
                        fail(path, f"{vwhere}.{k}", "an attribute is an integer or a boolean")
                mapped[vname] = (target, attrs)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                fail(path, vwhere, "value must be a non-negative integer")
            if value in seen:
                fail(path, where, f"'{vname}' and '{seen[value]}' share value {value}")
            seen[value] = vname
            values[vname] = value
        enums[ename] = sorted(((v, n) for n, v in values.items()))
        if engine is not None:
            meanings[ename] = (engine, mapped)

    commands = []
    names = set()
    opcodes = {}
    for i, c in enumerate(doc.get("command", [])):
        where = f"command[{i}] {c.get('name', '?')}"
        check_keys(path, where, c, COMMAND_KEYS)
        for key in ("name", "kind", "opcode"):
            if key not in c:
                fail(path, where, f"missing key '{key}'")
        if c["kind"] not in CMD_KINDS:
            fail(path, where, f"kind '{c['kind']}' (valid: {', '.join(CMD_KINDS)})")
        if not 0 <= c["opcode"] < 1024:
            fail(path, where, f"opcode {c['opcode']:#x} does not fit in 10 bits")
        if c["name"] in names:
            fail(path, where, "duplicate command name")
        names.add(c["name"])
        key = (c["kind"], c["opcode"])
        if key in opcodes:
            fail(path, where, f"{c['kind']} opcode {c['opcode']:#05x} already used by {opcodes[key]}")
        opcodes[key] = c["name"]
        # An operation (NPU_OP_*) names the kind of op the decoder freezes it into (OpKind); the
        # decoder dispatches on it. A register write (NPU_SET_*) has none.
        op = c.get("op")
        if c["name"].startswith("NPU_OP_") != (op is not None):
            fail(path, where, "an NPU_OP_* command names its op kind ('op = \"...\"'), no other command does")
        if op is not None and (not isinstance(op, str) or not op.isidentifier()):
            fail(path, f"{where}.op", "must name an op kind (OpKind)")
        top = 31 if c["kind"] == "cmd0" else 63
        used = {}
        fields = []
        for f in c.get("fields", []):
            fwhere = f"{where}.{f.get('name', '?')}"
            check_keys(path, fwhere, f, FIELD_KEYS)
            parts = parse_bits(path, fwhere, f.get("bits", ""))
            for lo, width in parts:
                for bit in range(lo, lo + width):
                    if bit < 16 or bit > top:
                        fail(path, fwhere, f"bit {bit} outside the parameter bits 16..{top}")
                    if bit in used:
                        fail(path, fwhere, f"bit {bit} overlaps field '{used[bit]}'")
                    used[bit] = f["name"]
            total = sum(w for _, w in parts)
            enum = f.get("enum")
            if enum is not None:
                if enum not in enums:
                    fail(path, fwhere, f"unknown enum '{enum}'")
                biggest = enums[enum][-1][0]
                if biggest >= (1 << total):
                    fail(path, fwhere, f"enum '{enum}' value {biggest} does not fit in {total} bits")
            # reads_as = "signed": the NPU reads the bits as two's complement where Arm's header types
            # the field unsigned (the listing shows it unsigned, as Vela prints it).
            if f.get("reads_as", "signed") != "signed":
                fail(path, fwhere, f"reads_as '{f['reads_as']}' (valid: signed)")
            if f["name"].endswith("_m1") and (enum is not None or f.get("signed") or "reads_as" in f):
                fail(path, fwhere, "a *_m1 field (stored minus one) is an unsigned number")
            if f.get("format", "dec") not in ("dec", "hex"):
                fail(path, fwhere, f"format '{f['format']}' (valid: dec, hex)")
            fields.append({"name": f["name"], "parts": parts, "enum": enum,
                           "signed": bool(f.get("signed", False)), "hex": f.get("format") == "hex",
                           "reads_signed": "reads_as" in f})
        if len({f["name"] for f in fields}) != len(fields):
            fail(path, where, "duplicate field name")
        commands.append({"name": c["name"], "kind": c["kind"], "opcode": c["opcode"], "op": op, "fields": fields})

    registers = []
    occupied = {}
    for i, r in enumerate(doc.get("register", [])):
        where = f"register[{i}] {r.get('name', '?')}"
        check_keys(path, where, r, REGISTER_KEYS)
        for key in ("name", "offset", "reset", "access"):
            if key not in r:
                fail(path, where, f"missing key '{key}'")
        if r["access"] not in ACCESS:
            fail(path, where, f"access '{r['access']}' (valid: {', '.join(ACCESS)})")
        width = r.get("width", 32)
        count = r.get("count", 1)
        if width not in (32, 64) or r["offset"] % 4:
            fail(path, where, "registers are 32 or 64 bits wide at 4-byte aligned offsets")
        if r["reset"] >= (1 << width):
            fail(path, where, f"reset value does not fit in {width} bits")
        for k in range(count):
            for word in range(width // 32):
                off = r["offset"] + k * (width // 8) + word * 4
                if off in occupied:
                    fail(path, where, f"offset {off:#x} overlaps register {occupied[off]}")
                occupied[off] = r["name"]
        fields = []
        used = {}
        for f in r.get("fields", []):
            fwhere = f"{where}.{f.get('name', '?')}"
            check_keys(path, fwhere, f, REG_FIELD_KEYS)
            parts = parse_bits(path, fwhere, f.get("bits", ""))
            if len(parts) != 1:
                fail(path, fwhere, "register fields have one bit range")
            lo, w = parts[0]
            for bit in range(lo, lo + w):
                if bit >= width:
                    fail(path, fwhere, f"bit {bit} outside the {width}-bit register")
                if bit in used:
                    fail(path, fwhere, f"bit {bit} overlaps field '{used[bit]}'")
                used[bit] = f["name"]
            fields.append((f["name"], lo, w))
        registers.append({"name": r["name"], "offset": r["offset"], "count": count, "width": width,
                          "reset": r["reset"], "access": r["access"], "fields": fields})
    registers.sort(key=lambda r: r["offset"])
    return {"gen": gen, "enums": enums, "meanings": meanings, "commands": commands, "registers": registers,
            "path": path}


def cpp_id(name):
    return name[4:] if name.startswith("NPU_") else name


def field_id(cmd, field):
    return f"{cpp_id(cmd)}__{field}"


def short(gen_name):
    return gen_name.replace("ethos-", "")  # "u55"


def engine_enums(descs, cmd_count):
    """The engine enums the descriptions' meanings name, with their enumerators in order of first
    appearance (U55, U65, U85) and one constexpr function per attribute; and what code that keeps
    a register file needs of the commands (their type and count) without their tables."""
    order = sorted(descs, key=lambda d: d["gen"]["name"])
    enumerators = {}  # engine enum -> {enumerator: (attrs, where)}
    for d in order:
        for ename, (engine, mapped) in d["meanings"].items():
            values = dict((n, v) for v, n in d["enums"][ename])
            known = enumerators.setdefault(engine, {})
            for vname in sorted(mapped, key=lambda n: values[n]):
                target, attrs = mapped[vname]
                where = f"{d['path']}: enums.{ename}.{vname}"
                if target in known and known[target][0] != attrs:
                    raise DescriptionError(f"{where}: {engine}::{target} has attributes {attrs}, "
                                           f"but {known[target][1]} gives {known[target][0]}")
                known.setdefault(target, (attrs, where))
    out = ["// Generated by emulator/isa/gen/isagen.py from emulator/isa/desc/*.toml. Do not edit.",
           "// The engine enums alone, for code that needs no command or register tables.",
           "#pragma once",
           "#include <array>",
           "#include <cstddef>",
           "#include <cstdint>",
           "#include <string_view>",
           "",
           "namespace ethosu::isa {",
           "enum class Cmd : uint16_t;  // isa_generated.h: every command of every generation",
           f"inline constexpr size_t kCmdCount = {cmd_count};",
           "}  // namespace ethosu::isa",
           "",
           "namespace ethosu {", "",
           "// The engine enums the descriptions' value rows mean (`means`), and their attributes.",
           "template <class E> struct EngineEnum;", ""]
    for engine in sorted(enumerators):
        known = enumerators[engine]
        names = list(known)
        keys = {k for attrs, _ in known.values() for k in attrs}
        # A boolean attribute is false where a row leaves it out; an integer one is on every row.
        flags = {k for k in keys if all(isinstance(a[k], bool) for a, _ in known.values() if k in a)}
        for target, (attrs, where) in known.items():
            for k in flags:
                attrs.setdefault(k, False)
            missing = sorted(keys - set(attrs))
            if missing:
                raise DescriptionError(f"{where}: {engine}::{target} lacks attribute '{missing[0]}' "
                                       f"that other {engine} values have")
        out.append(f"enum class {engine} : uint8_t {{ {', '.join(names)} }};")
        quoted = ", ".join(f'"{n}"' for n in names)
        out.append(f"template <> struct EngineEnum<{engine}> {{")
        out.append(f'    static constexpr std::string_view name = "{engine}";')
        out.append(f"    static constexpr std::array<std::string_view, {len(names)}> names = {{{quoted}}};")
        out.append("};")
        for key in sorted(keys):
            is_bool = all(isinstance(known[n][0][key], bool) for n in names)
            ctype = "bool" if is_bool else "int"
            vals = ", ".join((str(known[n][0][key]).lower() if is_bool else str(known[n][0][key])) for n in names)
            out.append(f"constexpr {ctype} {key}({engine} v) {{")
            out.append(f"    constexpr {ctype} table[] = {{{vals}}};")
            out.append("    return table[static_cast<size_t>(v)];")
            out.append("}")
        out.append("")
    out.append("}  // namespace ethosu")
    out.append("")
    return out


def generate(descs):
    # Union of command and field identities, in a stable order.
    cmd_names = sorted({c["name"] for d in descs for c in d["commands"]})
    engine = engine_enums(descs, len(cmd_names))  # checks the meanings across descriptions first
    gens = {short(d["gen"]["name"]): d for d in descs}
    for required in ("u55", "u65", "u85"):
        if required not in gens:
            raise DescriptionError(f"no description for ethos-{required}")
    field_names = sorted({field_id(c["name"], f["name"]) for d in descs for c in d["commands"] for f in c["fields"]})
    reg_names = sorted({r["name"] for d in descs for r in d["registers"]})
    reg_field_names = sorted({f"{r['name']}__{n}" for d in descs for r in d["registers"] for n, _, _ in r["fields"]})

    h = []
    h.append("// Generated by emulator/isa/gen/isagen.py from emulator/isa/desc/*.toml. Do not edit.")
    h.append("#pragma once")
    h.append("#include <array>")
    h.append("#include <cstddef>")
    h.append("#include <cstdint>")
    h.append("#include <string_view>")
    h.append("")
    h.append('#include "emulator/isa/isa_enums.h"')
    h.append("")
    h.append("namespace ethosu::isa {")
    h.append("")
    h.append("// Every command of every generation; the same opcode may name different commands.")
    h.append("enum class Cmd : uint16_t {")
    for n in cmd_names:
        h.append(f"    {cpp_id(n)},")
    h.append("};")
    h.append("")
    h.append("// Every (command, field) pair of every generation.")
    h.append("enum class Field : uint16_t {")
    for n in field_names:
        h.append(f"    {n},")
    h.append("};")
    h.append(f"inline constexpr size_t kFieldCount = {len(field_names)};")
    h.append("")
    h.append("// Every memory-mapped register of every generation, and every (register, field) pair.")
    h.append("enum class Reg : uint16_t {")
    for n in reg_names:
        h.append(f"    {n},")
    h.append("};")
    h.append(f"inline constexpr size_t kRegCount = {len(reg_names)};")
    h.append("enum class RegField : uint16_t {")
    for n in reg_field_names:
        h.append(f"    {n},")
    h.append("};")
    h.append(f"inline constexpr size_t kRegFieldCount = {len(reg_field_names)};")
    h.append("")
    for g in sorted(gens):
        h.append(f"namespace {g} {{")
        for ename, values in gens[g]["enums"].items():
            h.append(f"enum class {ename} : uint32_t {{")
            for v, n in values:
                h.append(f"    {n} = {v},")
            h.append("};")
        h.append(f"}}  // namespace {g}")
        h.append("")
    h.append("}  // namespace ethosu::isa")
    h.append("")

    c = []
    c.append("// Generated by emulator/isa/gen/isagen.py from emulator/isa/desc/*.toml. Do not edit.")
    c.append('#include "emulator/isa/description.h"')
    c.append("")
    c.append("namespace ethosu::isa {")
    c.append("namespace {")
    c.append("")
    for g in sorted(gens):
        d = gens[g]
        enum_pos = {}
        for k, (ename, values) in enumerate(d["enums"].items()):
            vals = ", ".join(f'{{"{n}", {v}}}' for v, n in values)
            c.append(f"constexpr EnumValue {g}_enum_{ename}_values[] = {{{vals}}};")
            if ename in d["meanings"]:
                mtype, mapped = d["meanings"][ename]
                codes = ", ".join(f"static_cast<uint8_t>({mtype}::{mapped[n][0]})" for _, n in values)
                c.append(f"constexpr uint8_t {g}_enum_{ename}_meaning[] = {{{codes}}};")
            enum_pos[ename] = k
        c.append(f"constexpr EnumDesc {g}_enums[] = {{")
        for ename in d["enums"]:
            if ename in d["meanings"]:
                meaning = f'"{d["meanings"][ename][0]}", {g}_enum_{ename}_meaning'
            else:
                meaning = '"", {}'
            c.append(f'    {{"{ename}", {g}_enum_{ename}_values, {meaning}}},')
        c.append("};")
        for cmd in d["commands"]:
            if not cmd["fields"]:
                continue
            c.append(f"constexpr FieldDesc {g}_fields_{cpp_id(cmd['name'])}[] = {{")
            for f in cmd["fields"]:
                parts = f["parts"] + [(0, 0)] * (2 - len(f["parts"]))
                enum = f"&{g}_enums[{enum_pos[f['enum']]}]" if f["enum"] else "nullptr"
                c.append(f'    {{Field::{field_id(cmd["name"], f["name"])}, Cmd::{cpp_id(cmd["name"])}, "{f["name"]}", '
                         f'{{{{{{{parts[0][0]}, {parts[0][1]}}}, {{{parts[1][0]}, {parts[1][1]}}}}}}}, '
                         f'{len(f["parts"])}, {enum}, {str(f["signed"]).lower()}, {str(f["hex"]).lower()}, '
                         f'{str(f["reads_signed"]).lower()}, {str(f["name"].endswith("_m1")).lower()}}},')
            c.append("};")
        c.append(f"constexpr CommandDesc {g}_commands[] = {{")
        for cmd in d["commands"]:
            fields = f"{g}_fields_{cpp_id(cmd['name'])}" if cmd["fields"] else "{}"
            kind = "CmdKind::Cmd0" if cmd["kind"] == "cmd0" else "CmdKind::Cmd1"
            op = f"OpKind::{cmd['op']}" if cmd["op"] else "std::nullopt"
            c.append(f'    {{Cmd::{cpp_id(cmd["name"])}, "{cmd["name"]}", {kind}, {cmd["opcode"]:#05x}, {fields}, {op}}},')
        c.append("};")
        for r in d["registers"]:
            if r["fields"]:
                vals = ", ".join(f'{{RegField::{r["name"]}__{n}, "{n}", {lo}, {w}}}' for n, lo, w in r["fields"])
                c.append(f"constexpr RegisterFieldDesc {g}_regfields_{r['name']}[] = {{{vals}}};")
        c.append(f"constexpr RegisterDesc {g}_registers[] = {{")
        for r in d["registers"]:
            fields = f"{g}_regfields_{r['name']}" if r["fields"] else "{}"
            c.append(f'    {{Reg::{r["name"]}, "{r["name"]}", {r["offset"]:#06x}, {r["count"]}, {r["width"]}, {r["reset"]:#010x}, '
                     f'Access::{r["access"]}, {fields}}},')
        c.append("};")
        c.append("")
    c.append("}  // namespace")
    c.append("")
    for g in sorted(gens):
        d = gens[g]
        gen = d["gen"]
        enum_name = {"u55": "U55", "u65": "U65", "u85": "U85"}[g]
        c.append(f"const GenerationDesc& generation_{g}() {{")
        c.append("    static const GenerationDesc desc = [] {")
        c.append("        GenerationDesc d;")
        c.append(f"        d.generation = Generation::{enum_name};")
        c.append(f'        d.name = "{gen["name"]}";')
        c.append(f'        d.arch = "{gen["arch"]}";')
        c.append(f"        d.product = {gen['product']};")
        c.append(f"        d.address_bits = {gen['address_bits']};")
        c.append(f"        d.commands = {g}_commands;")
        c.append(f"        d.registers = {g}_registers;")
        c.append(f"        d.enums = {g}_enums;")
        c.append("        d.index();")
        c.append("        return d;")
        c.append("    }();")
        c.append("    return desc;")
        c.append("}")
        c.append("")
    c.append("}  // namespace ethosu::isa")
    c.append("")
    return "\n".join(engine), "\n".join(h), "\n".join(c)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out-dir", required=True)
    parser.add_argument("descriptions", nargs="+")
    args = parser.parse_args()
    try:
        descs = [load(p) for p in args.descriptions]
        enums, header, source = generate(descs)
    except DescriptionError as e:
        print(f"isagen: error: {e}", file=sys.stderr)
        return 1
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for name, text in (("isa_enums.h", enums), ("isa_generated.h", header), ("isa_generated.cc", source)):
        target = out / name
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
