"""Citations of the theory guide (``docs/theory/*.md``) and whether they resolve.

A citation names a guide file (``SKO.md``) and may go on with what it cites in that file:
``§11``, ``Lemma 12``, ``Corollary 6.1``, ``Algorithm 6.1``, ``Eq. 54`` (lists and ranges such as
``Lemmas 7, 8`` or ``Eq. 49–51`` included) or a section by name (``RIGID.md, *Joint library*``,
``CFA.md, "The CFA"``). What follows another source (``the paper's Eq. 39``, ``RBDA §6.4``,
``Featherstone Table 4.1``, ``Section 6.2``) is not the guide's and is not collected. A verify
registry ``equation`` string without a file name cites SKO.md.

A cited label resolves when the guide file defines it: a heading ``## §11 …``, a bold
``**Lemma 12**`` / ``**Corollary 6.1**`` / ``**Algorithm 6.1**``, an equation tag ``(Eq. 54)``
(or ``\\tag{Eq. 54}``, ``(Eq. 41–43)``), or a heading starting with the cited name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
THEORY = ROOT / "docs" / "theory"
GUIDE_FILES = ("SKO", "RIGID", "BODIES", "SPARSE", "CFA", "EMBEDDING", "DERIVATIVES", "CONSTRAINTS", "IDENTIFICATION", "CENTROIDAL", "API")
SCANNED = ("sko", "graphs", "algorithms", "papers", "benchmarks", "tests", "docs")
NOT_SCANNED = {"citations.py", "test_citations.py"}

FILE = re.compile(r"\b(" + "|".join(GUIDE_FILES) + r")\.md\b")
NUMBER = r"\d+(?:\.\d+)?[a-g]?"
SEQUENCE = rf"{NUMBER}(?:\s*(?:,|–|-|and|to)\s*{NUMBER})*"
SECTIONS = rf"{NUMBER}(?:\s*(?:,|–|-|and|to)\s*§?\s*{NUMBER})*"
KINDS = {
    "section": re.compile(rf"§\s*({SECTIONS})"),
    "lemma": re.compile(rf"\bLemmas?\s+({SEQUENCE})"),
    "corollary": re.compile(rf"\bCorollar(?:y|ies)\s+({SEQUENCE})"),
    "algorithm": re.compile(rf"\bAlgorithms?\s+({SEQUENCE})"),
    "equation": re.compile(rf"\bEq(?:s|uations?)?\.?\s+({SEQUENCE})"),
}
HEADING_NAME = re.compile(r"""^\s*[,;]?\s*(?:\*([^*]+)\*|"([^"]+)")""")
# What ends the part of a text that belongs to a citation: another source, a sentence end,
# a colon, a closing quote or backtick, a blank line.
FOREIGN = re.compile(r"\b(?:paper|paper's|RBDA|Featherstone|Liu|[Tt]ables?|[Cc]hapters?|Sections?)\b")
END = re.compile(r"""(?<!Eq)(?<!Eqs)\.(?:\s|$)|:\s|["`]""")


@dataclass(frozen=True)
class Reference:
    kind: str  # section, lemma, corollary, algorithm, equation or heading
    label: str


@dataclass(frozen=True)
class Citation:
    file: str  # "SKO.md"
    references: tuple[Reference, ...]
    where: str  # "path:line" or "registry:<check>"


def _expand(sequence: str) -> list[str]:
    """``"7, 8"`` → 7, 8; ``"49–51"`` → 49, 50, 51; ``"§2–§13"`` → 2 … 13; ``"6.4–6.5"`` → both ends."""
    labels: list[str] = []
    for part in re.split(r"\s*(?:,|and)\s*", sequence.replace("§", "")):
        ends = [end.strip() for end in re.split(r"\s*(?:–|-|to)\s*", part) if end.strip()]
        if len(ends) == 2 and ends[0].isdigit() and ends[1].isdigit() and int(ends[0]) < int(ends[1]):
            labels.extend(str(n) for n in range(int(ends[0]), int(ends[1]) + 1))
        else:
            labels.extend(ends)
    return labels


def _cited_part(tail: str) -> str:
    """The start of ``tail`` that still belongs to the citation: parentheses balanced, and a
    line break ends it unless a parenthesis is open or the line ends with a comma."""
    depth = 0
    for i, char in enumerate(tail):
        if char == "\n" and depth == 0 and not tail[:i].rstrip().endswith(","):
            return tail[:i]
        if char in "([":
            depth += 1
        elif char in ")]":
            if depth == 0:
                return tail[:i]
            depth -= 1
    return tail


def references_in(tail: str) -> tuple[Reference, ...]:
    """What the text right after a guide file's name cites in that file."""
    tail = re.split(r"\n\s*\n", tail[:300])[0]
    found: list[Reference] = []
    heading = HEADING_NAME.match(tail)
    if heading:
        found.append(Reference("heading", " ".join((heading.group(1) or heading.group(2)).split())))
        tail = tail[heading.end():]
    tail = re.sub(r"\s*\n\s*(?:#+\s*)?", " ", _cited_part(tail))  # docstring and comment lines
    for stop in (FOREIGN.search(tail), END.search(tail), FILE.search(tail)):
        if stop:
            tail = tail[: stop.start()]
    for kind, pattern in KINDS.items():
        for match in pattern.finditer(tail):
            found.extend(Reference(kind, label) for label in _expand(match.group(1)))
    return tuple(found)


def citations_in(text: str, where: str) -> list[Citation]:
    """Every citation of a guide file in ``text`` (``where`` names the source in messages)."""
    citations = []
    for match in FILE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        citations.append(Citation(f"{match.group(1)}.md", references_in(text[match.end():]), f"{where}:{line}"))
    return citations


def registry_citations(checks) -> list[Citation]:
    """The citations of verify registry entries (``equation`` strings; SKO.md unless named)."""
    citations = []
    for check in checks:
        where = f"registry:{check.name}"
        named = citations_in(check.equation, where)
        citations.extend(named or [Citation("SKO.md", references_in(check.equation), where)])
    return citations


def source_citations(root: Path = ROOT) -> list[Citation]:
    """Citations in the project's Python sources, README and docs."""
    paths = [root / "README.md"]
    for folder in SCANNED:
        for pattern in ("*.py", "*.md", "*.rst"):
            paths.extend(p for p in (root / folder).rglob(pattern) if "_build" not in p.parts)
    citations = []
    for path in sorted(set(paths)):
        if path.name not in NOT_SCANNED and path.is_file():
            citations.extend(citations_in(path.read_text(encoding="utf-8"), str(path.relative_to(root))))
    return citations


@dataclass(frozen=True)
class Labels:
    """What one guide file defines."""

    sections: frozenset[str]
    lemmas: frozenset[str]
    corollaries: frozenset[str]
    algorithms: frozenset[str]
    equations: frozenset[str]
    headings: tuple[str, ...]

    def defines(self, reference: Reference) -> bool:
        if reference.kind == "heading":
            name = _normal(reference.label)
            return any(heading.startswith(name) for heading in self.headings)
        label = reference.label
        pool = {"section": self.sections, "lemma": self.lemmas, "corollary": self.corollaries,
                "algorithm": self.algorithms, "equation": self.equations}[reference.kind]
        return label in pool or (reference.kind == "equation" and label.rstrip("abcdefg") in pool)


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[*_`$]", "", text).lower().split())


def labels_of(text: str) -> Labels:
    """Parse the labels a guide file defines."""
    headings = re.findall(r"^#{1,6}\s+(.*)$", text, flags=re.MULTILINE)
    sections = {m for h in headings for m in re.findall(r"^§(\d+(?:\.\d+)?)(?!\d)", h)}
    equations: set[str] = set()
    for match in re.finditer(rf"\(Eq\.\s*({SEQUENCE})[):]|\\tag\{{Eq\.\s*({NUMBER})\}}", text):
        equations.update(_expand(match.group(1) or match.group(2)))

    def bold(word: str) -> frozenset[str]:
        return frozenset(re.findall(rf"\*\*{word}\s+({NUMBER})\b", text))

    return Labels(frozenset(sections), bold("Lemma"), bold("Corollary"), bold("Algorithm"),
                  frozenset(equations), tuple(_normal(re.sub(r"^§\S+\s*", "", h)) for h in headings))


@lru_cache(maxsize=None)
def guide_labels(file: str, theory: Path = THEORY) -> Labels | None:
    path = theory / file
    return labels_of(path.read_text(encoding="utf-8")) if path.is_file() else None


def unresolved(citations, theory: Path = THEORY) -> list[str]:
    """One message per citation (or cited label) that the guide does not resolve."""
    problems = []
    for citation in citations:
        labels = guide_labels(citation.file, theory)
        if labels is None:
            problems.append(f"{citation.where}: {citation.file} is not in docs/theory")
            continue
        problems.extend(f"{citation.where}: {citation.file} defines no {ref.kind} {ref.label!r}"
                        for ref in citation.references if not labels.defines(ref))
    return problems
