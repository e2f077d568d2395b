#!/usr/bin/env python3
"""docs/schemas against what the CLI writes: `run --json` (the example; with the corpus, a graph
model with --pmu) validates against run.schema.json, a manifest `baseline` writes against
manifest.schema.json, whose objects hold exactly the keys frontend/cli/manifest.cc declares (with
their required ones). A broken document must fail, so the validator is shown to check. The
validator is schema_check.py (the keywords these schemas use), so the test needs no package.
Usage: json_schemas.py EMU SOURCE_DIR [VECTORS_DIR]."""
import json
import os
import re
import subprocess
import sys
import tempfile

from schema_check import errors

import harness
from harness import expect, finish

emu, source = sys.argv[1], sys.argv[2]
harness.emu = emu
vectors = sys.argv[3] if len(sys.argv) > 3 else ""


def emu_run(*args):
    r = subprocess.run([emu, *args], capture_output=True, text=True, timeout=300)
    expect(r.returncode == 0, f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def validates(document, schema, what):
    found = errors(document, schema, schema)
    expect(not found, f"{what}: {found[:5]}")


schemas = os.path.join(source, "docs", "schemas")
run_schema = json.load(open(os.path.join(schemas, "run.schema.json")))
manifest_schema = json.load(open(os.path.join(schemas, "manifest.schema.json")))

with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "model.bin")
    emu_run("example", model)
    prefix = os.path.join(tmp, "o")
    full = json.loads(emu_run("run", model, "--json", "--output-prefix", prefix))
    expect(full["format"] == "ethosu-emu-run" and full["version"] == 1, "run --json carries its format and version")
    validates(full, run_schema, "run --json")
    validates(json.loads(emu_run("run", model, "--json", "--no-timing", "--output-prefix", prefix)), run_schema,
              "run --json --no-timing")
    validates(json.loads(emu_run("run", model, "--json", "--timing-only", "--pmu", "NPU_ACTIVE")), run_schema,
              "run --json --pmu")
    corpus = os.path.join(vectors, "arm_kws_dnn_s", "ethos-u55-128", "model_vela.tflite") if vectors else ""
    if corpus and os.path.exists(corpus):
        graph = json.loads(emu_run("run", corpus, "--json", "--pmu", "NPU_ACTIVE,AXI0_RD_DATA_BEAT_RECEIVED",
                                   "--output-prefix", prefix))
        expect("operators" in graph, "a graph run lists its operators")
        validates(graph, run_schema, "run --json of a graph")

    # The validator fails what it should.
    broken = dict(full, version="1", cycles={"total": -1})
    found = errors(broken, run_schema, run_schema)
    expect(any("version" in f for f in found) and any("cycles.total" in f for f in found)
           and any("$.cycles: missing 'npu_active'" in f for f in found), f"a broken run document: {found}")

    manifest = os.path.join(tmp, "m.json")
    tensor = os.path.join(tmp, "in.bin")
    with open(tensor, "wb") as f:
        f.write(bytes(json.loads(emu_run("info", model, "--json"))["inputs"][0]["bytes"]))
    emu_run("baseline", "--manifest", manifest, model, "--input", tensor, "--name", "example")
    document = json.load(open(manifest))
    validates(document, manifest_schema, "baseline's manifest")
    document["entries"][0]["baseline"]["cyles"] = 1
    expect(any("unexpected key 'cyles'" in f for f in errors(document, manifest_schema, manifest_schema)),
           "an unknown manifest key fails the schema")

# The manifest schema's objects hold exactly manifest.cc's declared keys, required as declared.
declared = {}
text = open(os.path.join(source, "frontend", "cli", "manifest.cc")).read()
for table, body in re.findall(r"constexpr Key (k\w+Keys)\[\] = \{(.*?)\};", text, re.S):
    declared[table] = {name: bool(required) for name, required in
                       re.findall(r'\{"(\w+)", KeyType::\w+(?:, (true))?\}', body)}
objects = {"kManifestKeys": manifest_schema, "kEntryKeys": "entry", "kOutputKeys": "output",
           "kBaselineKeys": "baseline", "kTrafficKeys": "traffic", "kMemoryTrafficKeys": "memory_traffic",
           "kPortKeys": "port", "kLayerKeys": "layer"}
expect(set(declared) == set(objects), f"manifest.cc's key tables {sorted(declared)}, the schema's {sorted(objects)}")
for table, keys in declared.items():
    schema = objects.get(table)
    schema = manifest_schema["$defs"][schema] if isinstance(schema, str) else schema
    if schema is None:
        continue
    expect(set(schema["properties"]) == set(keys), f"{table}: schema keys {sorted(schema['properties'])}, "
                                                   f"manifest.cc {sorted(keys)}")
    expect(set(schema.get("required", [])) == {k for k, r in keys.items() if r},
           f"{table}: schema requires {schema.get('required')}, manifest.cc {[k for k, r in keys.items() if r]}")

finish()
