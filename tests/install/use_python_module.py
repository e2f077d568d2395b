"""The installed Python module, imported from the install prefix alone, runs the bundled example
as the installed CLI does. Arguments: PYTHON_DIR VERSION ETHOSU_EMU WORK_DIR."""

import json
import pathlib
import subprocess
import sys

python_dir, version, cli, work = sys.argv[1:]
sys.path.insert(0, python_dir)
import ethosu_emu  # noqa: E402

assert pathlib.Path(ethosu_emu.__file__).parent == pathlib.Path(python_dir), ethosu_emu.__file__
assert ethosu_emu.__version__ == version, ethosu_emu.__version__

example = f"{work}/example.bin"
subprocess.run([cli, "example", example], check=True, capture_output=True)
figures = json.loads(subprocess.run([cli, "run", example, "--json", "--output-prefix", f"{work}/example"],
                                    check=True, capture_output=True, text=True).stdout)
result = ethosu_emu.load(example).run()
assert result.npu_cycles == figures["cycles"]["total"], (result.npu_cycles, figures["cycles"])
assert [o.tobytes() for o in result.outputs] == [pathlib.Path(o["file"]).read_bytes() for o in figures["outputs"]]
print(f"installed ethosu_emu {version}: the example in {result.npu_cycles} cycles, as the CLI")
