"""The README's code runs as written, and its test command is the one CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert len(blocks) >= 2
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, "README.md", "exec"), namespace)


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"^    (python3 -m venv .*)$", README, flags=re.M)
    assert len(commands) == 2 and "sko verify" in commands[0] and "pytest" in commands[1]
    assert commands[1] in (ROOT / ".ci" / "run").read_text()
