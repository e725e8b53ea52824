"""The constraint-embedding reproduction runs and gives EMBEDDING.md's numbers (short runs)."""

from __future__ import annotations

from papers import constraint_embedding


def test_constraint_embedding(tmp_path, capsys):
    out = constraint_embedding.main(["--max-k", "10", "--dense-max-k", "10", "--horizon", "0.2", "--quiet",
                                     "--output", str(tmp_path)])
    knee, grip, chains = out["knee"], out["gripper"], out["chains"]
    assert knee["nv"] == 1 and knee["node_dim"] == 18 and knee["nodes"] == 1
    assert knee["closure_gap"] < 1e-9 and knee["kkt_error"] < 1e-10
    assert grip["nv"] == grip["spanning_nv"] - 1 and grip["mass_matrix_error"] < 1e-12 and grip["kkt_error"] < 1e-10
    assert grip["mimic_error"] < 1e-15
    assert chains["k"] == [10] and chains["dense_k"] == [10] and chains["max_error"] < 1e-10
    assert (tmp_path / "constraint_embedding.png").stat().st_size > 1000
    assert "figure:" in capsys.readouterr().out
