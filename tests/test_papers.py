"""The paper reproductions run and give the papers' numbers."""

from __future__ import annotations

import numpy as np

from papers import featherstone_ch6, jain_part2


def test_jain_part2(tmp_path, capsys):
    out = jain_part2.main(tmp_path)
    assert out["bodies"] == 14 and len(out["segments"]) == 5
    assert out["segments"][-1] == [14, 13, 12]  # the base branch, numbered last (canonical)
    assert out["checks_passed"] and len(out["checks"]) >= 20
    assert max(out["checks"].values()) < 1e-10
    assert out["patterns_match"] and out["E_strictly_lower"]
    assert 0.2 < out["M_zero_fraction"] < 0.3  # branch-induced zeros of ℳ
    assert abs(out["det_innovations"] - 1.0) < 1e-12
    assert abs(out["logdet_M"] - out["logdet_D"]) < 1e-10 * abs(out["logdet_M"])
    assert out["omega_shape"] == (8, 8) and out["omega_error"] < 1e-10 and out["omega_rank"] == 8
    assert out["pendulum_error"] < 1e-12
    assert {p.name for p in tmp_path.glob("*.png")} == {"jain_E.png", "jain_phi.png", "jain_M.png"}
    assert "all pass" in capsys.readouterr().out


def test_double_pendulum_closed_form():
    model = jain_part2.double_pendulum(0.7)
    np.testing.assert_allclose(np.asarray(jain_part2.alg.mass_matrix(model)),
                               jain_part2.double_pendulum_mass_matrix(0.7), rtol=1e-13)


def test_featherstone_ch6(tmp_path):
    out = featherstone_ch6.main(tmp_path)
    fig = out["figure_6_2"]
    assert fig["a"]["nonzeros"] == 6 and fig["b"]["nonzeros"] == 36
    assert fig["c"]["nonzeros"] == 22 and fig["d"]["nonzeros"] == fig["e"]["nonzeros"] == 24
    for entry in fig.values():
        assert entry["nonzeros"] == entry["predicted_nonzeros"] and entry["matches_rule"] and entry["fill_in"] == 0
    assert out["d_e_same_tree"] and out["d_e_permutation"]
    t = out["table_6_4"]
    assert t["expanded"] == t["from_model"] == (0, 1, 2, 3, 1, 4, 4, 5)
    assert t["map"] == (0, 1, 4, 5, 6, 7, 8) and t["dof_pattern_matches"]
    assert (tmp_path / "featherstone_fig6_2.png").stat().st_size > 1000
