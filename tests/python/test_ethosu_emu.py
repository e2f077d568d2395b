"""The Python module ethosu_emu on corpus models: outputs against the TFLite Micro goldens, figures
against the CLI's `run --json`, repeated and interleaved runs, errors and refused inputs.

Run by ctest (tests/python/CMakeLists.txt) with the interpreter the module was built for; the
environment names the module's directory (PYTHONPATH), the CLI, the corpus and the version.
"""

import doctest
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import threading
import unittest
import warnings

import numpy as np

import ethosu_emu

VECTORS = pathlib.Path(os.environ.get("ETHOSU_VECTORS_DIR", "../shared/vectors"))
HOSTILE = pathlib.Path(os.environ.get("ETHOSU_HOSTILE_DIR", "../shared/hostile"))
CLI = os.environ.get("ETHOSU_EMU_CLI", "")
README = pathlib.Path(__file__).resolve().parents[2] / "frontend" / "python" / "README.md"

# Elements where TFLM's SUB and the NPU differ by one LSB on the golden inputs, as
# tests/engine/test_conformance.cc lists them (kKnownDifferences): model -> seed -> indices.
KNOWN_DIFFERENCES = {"sub_8x8x32_i16": {1: {1118}, 2: {361, 782, 889}}}


def needs_vectors(test):
    return unittest.skipUnless(VECTORS.is_dir(), f"corpus absent: {VECTORS} (set ETHOSU_VECTORS_DIR)")(test)


def model_path(name, config="ethos-u55-128"):
    return VECTORS / name / config / "model_vela.tflite"


def golden_inputs(model, name, seed):
    """The golden input files of a seed as arrays of the model's input dtypes and shapes."""
    return [np.fromfile(VECTORS / name / "golden" / f"seed{seed}.in{k}.bin", dtype=t.dtype).reshape(t.shape)
            for k, t in enumerate(model.inputs)]


def cli_run(path, inputs, *options):
    """`ethosu-emu run --json` on the same inputs, written as raw files: its JSON and output bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for k, array in enumerate(inputs):
            files += ["--input", os.path.join(tmp, f"in{k}.bin")]
            array.tofile(files[-1])
        out = subprocess.run([CLI, "run", str(path), "--json", "--output-prefix", os.path.join(tmp, "out"), *files,
                              *options], check=True, capture_output=True, text=True)
        figures = json.loads(out.stdout)
        return figures, [pathlib.Path(o["file"]).read_bytes() for o in figures["outputs"]]


class Module(unittest.TestCase):
    def test_imported_from_the_build_tree(self):
        # PYTHONPATH names the module ctest built: not an installed one.
        built = pathlib.Path(os.environ["PYTHONPATH"].split(os.pathsep)[0]).resolve()
        self.assertEqual(pathlib.Path(ethosu_emu.__file__).resolve().parent, built)

    def test_version(self):
        self.assertEqual(ethosu_emu.__version__, os.environ["ETHOSU_EMU_VERSION"])

    def test_import_without_numpy_names_the_interpreter(self):
        # As under an interpreter of the same ABI without numpy (pyenv's next to Debian's).
        code = "import sys; sys.modules['numpy'] = None; import ethosu_emu"
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn(f"ImportError: ethosu_emu needs numpy, which {sys.executable} cannot import", run.stderr)

    def test_error_classes(self):
        self.assertTrue(issubclass(ethosu_emu.Error, ValueError))
        self.assertTrue(issubclass(ethosu_emu.FileError, ethosu_emu.Error))
        self.assertTrue(issubclass(ethosu_emu.FileError, OSError))
        self.assertTrue(issubclass(ethosu_emu.MissingFileError, FileNotFoundError))
        self.assertEqual(ethosu_emu.Error.__module__, "ethosu_emu")

    def test_missing_model_is_file_not_found(self):
        with self.assertRaises(FileNotFoundError) as raised:
            ethosu_emu.load("/nonexistent/model.tflite")
        self.assertIsInstance(raised.exception, ethosu_emu.Error)
        self.assertEqual(raised.exception.filename, "/nonexistent/model.tflite")
        self.assertEqual(raised.exception.kind, "io")

    def test_everything_public_has_a_docstring(self):
        self.assertIn("timing=False", ethosu_emu.__doc__)
        undocumented = []
        for name in dir(ethosu_emu):
            item = getattr(ethosu_emu, name)
            if name.startswith("_") or not callable(item):
                continue
            if not (item.__doc__ or "").strip():
                undocumented.append(name)
            if isinstance(item, type):
                for member, value in vars(item).items():
                    if member.startswith("_"):
                        continue
                    if not (getattr(value, "__doc__", None) or "").strip():
                        undocumented.append(f"{name}.{member}")
        self.assertEqual(undocumented, [])
        # Parameters carry their names, as help() shows them.
        self.assertIn("load(path: object, npu: Optional[str] = None", ethosu_emu.load.__doc__)


@needs_vectors
class Goldens(unittest.TestCase):
    def check_config(self, config):
        ran, refused = [], []
        for meta in sorted(VECTORS.glob("*/golden/meta.json")):
            name = meta.parent.parent.name
            path = model_path(name, config)
            if not path.exists():
                continue
            try:
                model = ethosu_emu.load(str(path))
            except ethosu_emu.Error as e:
                # A graph operator the host does not implement is refused at load, by name.
                self.assertIn("operator", str(e))
                refused.append(name)
                continue
            seeds = json.loads(meta.read_text())["seeds"]
            for seed in (1, 2):
                if f"seed{seed}" not in seeds:
                    continue
                result = model.run(golden_inputs(model, name, seed), timing=False)
                self.assertEqual(len(result.outputs), len(model.outputs))
                for k, (output, tensor) in enumerate(zip(result.outputs, model.outputs)):
                    with self.subTest(model=name, config=config, seed=seed, output=k):
                        self.assertEqual(output.dtype, tensor.dtype)
                        self.assertEqual(output.shape, tensor.shape)
                        golden = np.fromfile(meta.parent / f"seed{seed}.out{k}.bin", dtype=tensor.dtype)
                        differing = set(np.flatnonzero(output.reshape(-1) != golden).tolist())
                        self.assertEqual(differing, KNOWN_DIFFERENCES.get(name, {}).get(seed, set()) if k == 0 else set())
            ran.append(name)
        print(f"\n{config}: {len(ran)} models to their goldens, {len(refused)} refused at load: {refused}",
              file=sys.stderr)
        self.assertGreater(len(ran), 50)

    def test_u55_128(self):
        self.check_config("ethos-u55-128")

    def test_u85_256(self):
        self.check_config("ethos-u85-256")


@needs_vectors
@unittest.skipUnless(CLI, "ETHOSU_EMU_CLI not set")
class AgainstTheCli(unittest.TestCase):
    # A fully-NPU network, a graph with float I/O and CPU operators, int16, two inputs; U55 and U85.
    CASES = [("person_detect", "ethos-u55-128"), ("arm_kws_cnn_s", "ethos-u55-128"),
             ("conv_k3s1_same_12x12x16to24_i16", "ethos-u65-256"), ("add_8x8x32", "ethos-u85-256"),
             ("person_detect", "ethos-u85-1024")]

    def test_outputs_cycles_ops_traffic_pmu(self):
        for name, config in self.CASES:
            with self.subTest(model=name, config=config):
                path = model_path(name, config)
                model = ethosu_emu.load(str(path))
                inputs = golden_inputs(model, name, 1)
                result = model.run(inputs)
                cli, cli_outputs = cli_run(path, inputs)
                self.assertEqual(result.npu_cycles, cli["cycles"]["total"])
                self.assertEqual(result.macs, cli["macs"])
                self.assertEqual(result.traffic, cli["traffic"]["memories"])
                self.assertEqual(result.system_config, cli["system_config"])
                self.assertEqual(result.memory_mode, cli["memory_mode"])
                # Every modelled event, four at a time (the U55/U65 PMU's counters).
                events = [e for e in result.pmu if e != "cycle_counter"]
                for first in range(0, len(events), 4):
                    pmu = cli_run(path, inputs, "--pmu", ",".join(events[first:first + 4]))[0]["pmu"]
                    self.assertEqual(result.pmu["cycle_counter"], pmu["cycle_counter"])
                    for counter in pmu["event_counters"]:
                        self.assertEqual(result.pmu[counter["event"]], counter["count"], counter["event"])
                self.assertEqual(len(result.ops), len(cli["ops"]))
                for ours, theirs in zip(result.ops, cli["ops"]):
                    self.assertEqual(ours["cycles"], theirs["end"] - theirs["start"])
                    for key in ("offset", "kind", "start", "end", "compute_cycles", "macs", "traffic"):
                        self.assertEqual(ours.get(key), theirs.get(key), key)
                self.assertEqual([o.tobytes() for o in result.outputs], cli_outputs)
                self.assertEqual(model.time().npu_cycles, result.npu_cycles)

    def test_trace_and_per_layer_csv_as_the_cli_writes_them(self):
        path = model_path("person_detect")
        model = ethosu_emu.load(str(path))
        inputs = golden_inputs(model, "person_detect", 1)
        with tempfile.TemporaryDirectory() as tmp:
            model.run(inputs).write_trace(os.path.join(tmp, "py.json"))
            model.run(inputs).write_per_layer_csv(os.path.join(tmp, "py.csv"))
            cli_run(path, inputs, "--trace", os.path.join(tmp, "cli.json"), "--per-layer", os.path.join(tmp, "cli.csv"))
            trace = json.loads(pathlib.Path(tmp, "py.json").read_text())
            self.assertEqual(trace, json.loads(pathlib.Path(tmp, "cli.json").read_text()))
            self.assertTrue(trace["traceEvents"])
            self.assertEqual(pathlib.Path(tmp, "py.csv").read_text(), pathlib.Path(tmp, "cli.csv").read_text())

    def test_debug_db_per_layer_and_report_as_the_cli(self):
        path = model_path("person_detect")
        debug_db = path.parent / "model_debug.xml"
        model = ethosu_emu.load(path, debug_db=debug_db)
        self.assertEqual(model.debug_db, str(debug_db))
        inputs = golden_inputs(model, "person_detect", 1)
        with tempfile.TemporaryDirectory() as tmp:
            ours = {k: os.path.join(tmp, f"py.{k}") for k in ("trace", "per_layer", "report")}
            result = model.run(inputs, **ours)
            cli_run(path, inputs, "--debug-db", str(debug_db), "--trace", os.path.join(tmp, "cli.trace"),
                    "--per-layer", os.path.join(tmp, "cli.per_layer"), "--report", os.path.join(tmp, "cli.report"))
            for kind in ours:
                self.assertEqual(pathlib.Path(ours[kind]).read_text(), pathlib.Path(tmp, f"cli.{kind}").read_text(), kind)
            self.assertEqual(result.report_html(), pathlib.Path(ours["report"]).read_text())
            csv_rows = pathlib.Path(ours["per_layer"]).read_text().splitlines()[1:]
        # Per-layer rows carry the layer names of the debug database, as the CSV's rows do.
        rows = result.per_layer
        self.assertEqual(len(rows), len(csv_rows))
        self.assertTrue(all(r["alignment"] == "debug_db" and r["name"] for r in rows))
        self.assertTrue(all(r["name"] in line for r, line in zip(rows, csv_rows)))
        self.assertEqual(sum(r["op_cycles"] for r in rows), result.npu_cycles)
        self.assertTrue(any(r["vela"] is not None for r in rows))
        kernel_names = {op["name"] for op in result.ops if op["kind"] == "conv"}
        self.assertTrue(all("@0x" not in name for name in kernel_names), kernel_names)

    def test_tensors_as_info_json(self):
        path = model_path("arm_kws_cnn_s")
        model = ethosu_emu.load(str(path))
        info = json.loads(subprocess.run([CLI, "info", str(path), "--json"], check=True, capture_output=True,
                                         text=True).stdout)
        self.assertEqual(model.npu_config, info["npu"])
        for ours, theirs in zip(model.inputs + model.outputs, info["inputs"] + info["outputs"]):
            self.assertEqual(ours.name, theirs["name"])
            self.assertEqual(list(ours.shape), theirs["shape"])
            self.assertEqual(str(ours.dtype), theirs["type"])
            self.assertEqual(ours.size_bytes, theirs["bytes"])


@needs_vectors
class Sessions(unittest.TestCase):
    def figures(self, result):
        return [o.tobytes() for o in result.outputs], result.npu_cycles, result.ops, result.pmu

    def test_repeated_runs_are_identical(self):
        model = ethosu_emu.load(str(model_path("person_detect")))
        first = golden_inputs(model, "person_detect", 1)
        second = golden_inputs(model, "person_detect", 2)
        expected = self.figures(model.run(first))
        for _ in range(5):
            self.assertEqual(self.figures(model.run(first)), expected)
            other = model.run(second)  # another input between runs leaves no trace in the next
            self.assertNotEqual(other.outputs[0].tobytes(), expected[0][0])

    def test_two_models_interleaved(self):
        names = ["person_detect", "mlperftiny_kws_dscnn_int8"]
        models = [ethosu_emu.load(str(model_path(n))) for n in names]
        inputs = [golden_inputs(m, n, 1) for m, n in zip(models, names)]
        expected = [self.figures(m.run(x)) for m, x in zip(models, inputs)]
        for _ in range(3):
            for m, x, e in zip(models, inputs, expected):
                self.assertEqual(self.figures(m.run(x)), e)

    def test_runs_on_threads(self):
        # Runs release the GIL; one model's runs take turns, two models run at once.
        names = ["person_detect", "mlperftiny_kws_dscnn_int8"]
        models = [ethosu_emu.load(str(model_path(n))) for n in names]
        inputs = [golden_inputs(m, n, 1) for m, n in zip(models, names)]
        expected = [self.figures(m.run(x)) for m, x in zip(models, inputs)]
        failures = []

        def work(i):
            for _ in range(4):
                if self.figures(models[i % 2].run(inputs[i % 2])) != expected[i % 2]:
                    failures.append(i)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])

    def test_timing_only_and_untimed_runs(self):
        model = ethosu_emu.load(str(model_path("person_detect")))
        full = model.run(golden_inputs(model, "person_detect", 1))
        for timed in (model.time(), model.run(timing_only=True)):
            self.assertEqual(timed.outputs, [])
            self.assertEqual(timed.npu_cycles, full.npu_cycles)
            self.assertEqual(timed.ops, full.ops)
        untimed = model.run(golden_inputs(model, "person_detect", 1), timing=False)
        self.assertEqual(untimed.outputs[0].tobytes(), full.outputs[0].tobytes())
        self.assertFalse(untimed.timed)
        # Every timing figure is None; every artefact only timing makes raises, saying why.
        for figure in ("npu_cycles", "macs", "ops", "per_layer", "traffic", "pmu"):
            self.assertIsNone(getattr(untimed, figure), figure)
            self.assertIsNotNone(getattr(full, figure), figure)
        with tempfile.TemporaryDirectory() as tmp:
            for write in (untimed.write_trace, untimed.write_per_layer_csv, untimed.write_report):
                with self.assertRaisesRegex(ethosu_emu.Error, "needs the timing model; this run had timing=False"):
                    write(os.path.join(tmp, "file"))
            with self.assertRaisesRegex(ethosu_emu.Error, "timing=False"):
                untimed.report_html()
            self.assertEqual(os.listdir(tmp), [])
            with self.assertRaisesRegex(ValueError, "need timing=True"):
                model.run(timing=False, trace=os.path.join(tmp, "t.json"))
        with self.assertRaisesRegex(ValueError, "timing_only=True needs timing=True"):
            model.run(timing=False, timing_only=True)

    def test_tensor_description(self):
        model = ethosu_emu.load(str(model_path("person_detect")))
        self.assertEqual(model.npu_config, "ethos-u55-128")
        (tensor,) = model.inputs
        self.assertEqual((tensor.name, tensor.shape, tensor.dtype), ("input", (1, 96, 96, 1), np.dtype(np.int8)))
        self.assertEqual(tensor.zero_point, [-1])
        self.assertAlmostEqual(tensor.scale[0], 1 / 127.5, places=6)
        self.assertEqual(model.outputs[0].shape, (1, 2))
        self.assertEqual(repr(model), f"Model('{model_path('person_detect')}', npu_config='ethos-u55-128', inputs=1, outputs=1)")
        self.assertEqual(repr(tensor), "Tensor(name='input', shape=(1, 96, 96, 1), dtype=int8, scale=[0.007843138], "
                                       "zero_point=[-1])")
        self.assertEqual(repr(model.run(timing=False)), "Result(outputs=1, npu_cycles=None)")

    def test_parameters_named_as_the_cli_options(self):
        path = str(model_path("person_detect"))
        self.assertEqual(ethosu_emu.load(path, npu="ethos-u55-128").npu, "ethos-u55-128")
        with self.assertRaises(ethosu_emu.Error) as raised:
            ethosu_emu.load(path, npu="ethos-u85-256")
        self.assertIn("npu= ethos-u85-256", str(raised.exception))
        self.assertNotIn("--", str(raised.exception))
        with self.assertRaises(ethosu_emu.Error) as raised:
            ethosu_emu.load(path, system_config="No_Such_Config")
        self.assertTrue(str(raised.exception).startswith("system_config=: No_Such_Config: "), str(raised.exception))
        with self.assertRaises(FileNotFoundError) as raised:
            ethosu_emu.load(path, config="/nonexistent/vela.ini")
        self.assertEqual(raised.exception.filename, "/nonexistent/vela.ini")
        self.assertIn("config=", str(raised.exception))

    def test_old_parameter_names_warn_and_still_work(self):
        path = str(model_path("person_detect"))
        with self.assertWarnsRegex(DeprecationWarning, "use npu="):
            self.assertEqual(ethosu_emu.load(path, config="ethos-u55-128").npu_config, "ethos-u55-128")
        with self.assertWarnsRegex(DeprecationWarning, "use config="):
            with self.assertRaises(FileNotFoundError):
                ethosu_emu.load(path, vela_ini=["/nonexistent/vela.ini"])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            ethosu_emu.load(path, npu="ethos-u55-128", config=[])

    def test_work_limits_named_as_parameters(self):
        path = str(model_path("person_detect"))
        with self.assertRaises(ethosu_emu.Error) as raised:
            ethosu_emu.load(path, max_op_work=1000).run()
        self.assertEqual(raised.exception.kind, "limit_exceeded")
        self.assertIn("raise it with max_op_work=", str(raised.exception))
        with self.assertRaisesRegex(ethosu_emu.Error, "raise it with max_allocation="):
            ethosu_emu.load(str(model_path("arm_kws_cnn_s")), max_allocation=16)
        self.assertEqual(ethosu_emu.load(path, max_op_work=1 << 40).run(timing=False).outputs[0].shape, (1, 2))

    def test_pmu_events_asked_for(self):
        model = ethosu_emu.load(str(model_path("person_detect")))
        full = model.time()
        chosen = model.run(timing_only=True, pmu=["NPU_ACTIVE", "MAC_ACTIVE"])
        self.assertEqual(list(chosen.pmu), ["cycle_counter", "NPU_ACTIVE", "MAC_ACTIVE"])
        self.assertEqual(chosen.pmu["MAC_ACTIVE"], full.pmu["MAC_ACTIVE"])
        with self.assertRaisesRegex(ethosu_emu.Error, "pmu=") as raised:
            model.run(timing_only=True, pmu=["NO_SUCH_EVENT"])
        self.assertNotIn("--pmu", str(raised.exception))

    def test_system_config(self):
        model = ethosu_emu.load(str(model_path("person_detect")), system_config="Ethos_U55_Deep_Embedded")
        self.assertEqual(model.time().system_config, "Ethos_U55_Deep_Embedded")
        with self.assertRaisesRegex(ethosu_emu.Error, "No_Such_Config"):
            ethosu_emu.load(str(model_path("person_detect")), system_config="No_Such_Config")


@needs_vectors
class Refusals(unittest.TestCase):
    def setUp(self):
        self.model = ethosu_emu.load(str(model_path("add_8x8x32")))
        self.inputs = golden_inputs(self.model, "add_8x8x32", 1)

    def test_wrong_dtype(self):
        with self.assertRaisesRegex(TypeError, r"input 1 \(.*\): dtype int16 given, the model expects int8"):
            self.model.run([self.inputs[0], self.inputs[1].astype(np.int16)])

    def test_wrong_shape(self):
        with self.assertRaisesRegex(ValueError, r"input 0 \(.*\): shape \(2048,\) given, the model expects \(1, 8, 8, 32\)"):
            self.model.run([self.inputs[0].reshape(-1), self.inputs[1]])

    def test_wrong_count(self):
        with self.assertRaisesRegex(ValueError, "1 inputs given, the model has 2"):
            self.model.run([self.inputs[0]])

    def test_not_an_array(self):
        with self.assertRaisesRegex(TypeError, "a numpy array or None, not <class 'list'>"):
            self.model.run([self.inputs[0].tolist(), self.inputs[1]])

    def test_npz_shapes_padded_to_six_dimensions(self):
        # Vela's raw .npz pads shapes with leading 1s; the .tflite's shape, or any other that differs
        # only in dimensions of 1, is accepted as well.
        model = ethosu_emu.load(str(VECTORS / "add_8x8x32" / "ethos-u55-128" / "model_vela.npz"))
        self.assertEqual(model.inputs[0].shape, (1, 1, 1, 8, 8, 32))
        outputs = model.run(self.inputs).outputs
        self.assertEqual(outputs[0].shape, (1, 1, 1, 8, 8, 32))
        self.assertEqual(outputs[0].tobytes(), self.model.run(self.inputs).outputs[0].tobytes())
        with self.assertRaisesRegex(ValueError, r"shape \(8, 32\) given, the model expects \(1, 1, 1, 8, 8, 32\)"):
            model.run([x[0, 0] for x in self.inputs])
        # Dimensions of 1 anywhere leave the bytes as they are.
        moved = [x.reshape(8, 1, 8, 32, 1) for x in self.inputs]
        self.assertEqual(model.run(moved).outputs[0].tobytes(), outputs[0].tobytes())

    def test_none_is_zeros(self):
        zeros = [np.zeros_like(x) for x in self.inputs]
        self.assertEqual(self.model.run([None, None]).outputs[0].tobytes(), self.model.run(zeros).outputs[0].tobytes())

    def test_non_contiguous_input(self):
        flipped = np.ascontiguousarray(self.inputs[0][:, ::-1])
        view = flipped[:, ::-1]  # the golden input again, as a strided view
        self.assertFalse(view.flags["C_CONTIGUOUS"])
        self.assertEqual(self.model.run([view, self.inputs[1]]).outputs[0].tobytes(),
                         self.model.run(self.inputs).outputs[0].tobytes())


@needs_vectors
class Errors(unittest.TestCase):
    def test_truncated_model(self):
        data = model_path("person_detect").read_bytes()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "truncated.tflite")
            pathlib.Path(path).write_bytes(data[:len(data) // 3])
            with self.assertRaises(ethosu_emu.Error) as raised:
                ethosu_emu.load(path)
        error = raised.exception
        self.assertEqual(error.file, path)
        self.assertTrue(str(error).startswith(path + ": "), str(error))
        self.assertTrue(error.reason)
        self.assertEqual(error.kind, "malformed")

    def test_not_a_model(self):
        with tempfile.NamedTemporaryFile(suffix=".bin") as f:
            f.write(b"not a model at all")
            f.flush()
            with self.assertRaisesRegex(ethosu_emu.Error, "not a model"):
                ethosu_emu.load(f.name)

    def test_debug_db_of_another_model(self):
        other = model_path("mlperftiny_kws_dscnn_int8").parent / "model_debug.xml"
        model = ethosu_emu.load(str(model_path("person_detect")), debug_db=other)
        with self.assertRaisesRegex(ethosu_emu.Error, "model_debug.xml"):
            model.run()

    @unittest.skipUnless((HOSTILE / "ub_op_cost_47.tflite").exists(), f"reproducer absent: {HOSTILE}")
    def test_hostile_stream(self):
        model = ethosu_emu.load(str(HOSTILE / "ub_op_cost_47.tflite"))
        # A full run and a timing-only run refuse it alike.
        for mode, run in (("full", model.run), ("timing-only", lambda: model.run(timing_only=True))):
            with self.subTest(mode=mode):
                with self.assertRaises(ethosu_emu.Error) as raised:
                    run()
                self.assertEqual(raised.exception.offset, 0x4c)
                self.assertEqual(raised.exception.field, "NPU_SET_IFM_DEPTH_M1")
                self.assertIn("never wrote", raised.exception.reason)
                self.assertEqual(raised.exception.kind, "malformed")


@needs_vectors
class ReadmeExample(unittest.TestCase):
    def test_readme_example_runs_as_written(self):
        # The README's example is a doctest run where its relative paths resolve: a directory
        # holding the corpus's person_detect, so that its figures cannot go stale.
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as tmp:
            os.symlink((VECTORS / "person_detect").resolve(), os.path.join(tmp, "person_detect"))
            os.chdir(tmp)
            try:
                failed, attempted = doctest.testfile(str(README), module_relative=False, optionflags=doctest.ELLIPSIS)
            finally:
                os.chdir(cwd)
        self.assertGreater(attempted, 10)
        self.assertEqual(failed, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
