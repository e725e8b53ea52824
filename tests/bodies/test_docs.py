"""The code in docs/bodies.md runs and does what the text says."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "bodies.md"


def test_bodies_guide_example_runs():
    code = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert code
    namespace: dict = {}
    exec(compile(code[0], str(DOC), "exec"), namespace)
    assert {w.shape for w in namespace["model"].phi.values()} == {(6, 10)}  # "weights of shape 6 × 10"
    assert len(namespace["trajectory"].t) == 101
