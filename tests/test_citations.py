"""Every citation of the theory guide in the code, docs and verify registry resolves in docs/theory."""

import pytest

from sko.verify import REGISTRY
from tests.citations import (
    GUIDE_FILES,
    THEORY,
    Citation,
    Reference,
    citations_in,
    labels_of,
    references_in,
    registry_citations,
    source_citations,
    unresolved,
)


def refs(text: str) -> set[tuple[str, str]]:
    return {(r.kind, r.label) for r in references_in(text)}


def test_the_guide_has_every_file_cited():
    for name in (*GUIDE_FILES, "index"):
        assert (THEORY / f"{name}.md").is_file(), name


def test_every_source_citation_resolves():
    citations = source_citations()
    assert len(citations) > 100, "the scan found too few citations: is it looking in the right place?"
    assert sum(len(c.references) for c in citations) > 100
    assert unresolved(citations) == []


def test_every_registry_equation_resolves():
    # The project's own checks; tests register user checks with made-up equations of their own
    # (the README's examples run as exec'd code, whose functions have no module).
    checks = [check for check in REGISTRY if (check.function.__module__ or "").startswith("sko.")]
    assert len(checks) > 30
    citations = registry_citations(checks)
    assert {c.where.split(":")[1] for c in citations} == {check.name for check in checks}
    assert unresolved(citations) == []


def test_sko_md_defines_the_papers_numbered_results():
    labels = labels_of((THEORY / "SKO.md").read_text(encoding="utf-8"))
    assert labels.sections >= {str(n) for n in range(1, 15)}
    assert labels.lemmas >= {str(n) for n in range(1, 13)}
    assert labels.algorithms >= {"3.1", "4.1", "4.2", "4.3", "6.1"}
    assert labels.corollaries >= {"3.1", "6.1"}
    assert labels.equations >= {"1", "2", "3", "11", "12", "31", "45", "49", "51", "53", "54", "59", "60"}


@pytest.mark.parametrize(
    "tail, expected",
    [
        (" §11, Lemma 12, Algorithm 6.1).", {("section", "11"), ("lemma", "12"), ("algorithm", "6.1")}),
        (" §6 Lemma 3, §7 Lemmas 5, 6)", {("section", "6"), ("section", "7"), ("lemma", "3"),
                                          ("lemma", "5"), ("lemma", "6")}),
        (" §10,\n    Lemma 11, Corollary 6.1).", {("section", "10"), ("lemma", "11"), ("corollary", "6.1")}),
        (" §2–§4: SPO products", {("section", "2"), ("section", "3"), ("section", "4")}),
        (" §13 (Eq. 61–63)", {("section", "13"), ("equation", "61"), ("equation", "62"), ("equation", "63")}),
        (', *Joint library*; Featherstone Table 4.1', {("heading", "Joint library")}),
        (', "Split of the\n    inter-node force").', {("heading", "Split of the inter-node force")}),
        ("; RBDA §6.4–6.5).", set()),
        (" §1, paper §8.2).", {("section", "1")}),
        (" §12, Section 6.2).", {("section", "12")}),
        (" §2                 8.9e-16   pass\n  chain  spo_products  Lemmas 1, 2", {("section", "2")}),
        (" identities on the model. Eq. 5 elsewhere", set()),
    ],
)
def test_the_parser_reads_what_a_citation_cites(tail, expected):
    assert refs(tail) == expected


def test_a_citation_the_guide_lacks_is_reported(tmp_path):
    (tmp_path / "SKO.md").write_text(
        "# Title\n\n## §2 Operators\n\n**Lemma 3** (a lemma).\n\n$$ x = y \\tag{Eq. 12} $$\n\n"
        "Text (Eq. 13) and (Eq. 41–43).\n\n## Joint library\n",
        encoding="utf-8",
    )
    good = citations_in('see SKO.md §2, Lemma 3, Eq. 12, 13, 42 and SKO.md, *Joint library*.', "good")
    assert unresolved(good, tmp_path) == []
    fake = citations_in("see SKO.md §99, Lemma 4, Algorithm 6.1 (Eq. 44) and SKO.md, *Nowhere*.", "fake")
    problems = unresolved(fake, tmp_path)
    for missing in ("section '99'", "lemma '4'", "algorithm '6.1'", "equation '44'", "heading 'Nowhere'"):
        assert any(missing in p for p in problems), (missing, problems)
    assert unresolved([Citation("NOPE.md", (Reference("section", "1"),), "x")], tmp_path) == [
        "x: NOPE.md is not in docs/theory"
    ]


def test_a_registry_string_without_a_file_cites_sko_md():
    class Check:
        name, equation = "made_up", "Lemma 99, Eq. 7"

    (citation,) = registry_citations([Check()])
    assert citation.file == "SKO.md"
    assert any("lemma '99'" in p for p in unresolved([citation]))
