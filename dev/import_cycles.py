"""Circles between the connector's Scala source files: which files need each other, directly or round about.

A file needs another when it names a top-level type (class, object or trait) the other defines: by its simple name
in the same package or through an import, or by its full name. Comments and string literals are left out. It reads
names, not the compiler's symbols, so it can see a need that is not there (a local name that shadows a type); it
does not miss one that is written out.

    python3 dev/import_cycles.py                     # the connector's main sources
    python3 dev/import_cycles.py path/to/scala/root

Prints each circle (a set of files that all need each other) and exits 1 if there is any.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

DEFAULT_ROOT = Path(__file__).resolve().parent.parent / "connector-jvm" / "src" / "main" / "scala"
TOP_LEVEL = re.compile(
    r"^(?:(?:final|sealed|abstract|case|implicit|private(?:\[\w+\])?)\s+)*(?:class|object|trait)\s+(\w+)", re.M
)
IMPORT = re.compile(r"^import (io\.kinesisspark(?:\.\w+)*)\.(\{[^}]*\}|\w+)", re.M)
MEMBER_IMPORT = re.compile(r"^import (io\.kinesisspark(?:\.\w+)*)\.(\w+)\.(?:_|\{[^}]*\}|\w+)\s*$", re.M)


def _code(text: str) -> str:
    """The text without comments and string literals."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"""(?:.|\n)*?"""', '""', text)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def needs(root: Path) -> dict[Path, set[Path]]:
    """Each file and the files whose top-level types it names."""
    code = {f: _code(f.read_text()) for f in sorted(root.rglob("*.scala"))}
    package = {f: re.search(r"^package ([\w.]+)", text, re.M).group(1) for f, text in code.items()}  # type: ignore[union-attr]
    defined: dict[tuple[str, str], Path] = {}
    for f, text in code.items():
        for name in TOP_LEVEL.findall(text):
            defined.setdefault((package[f], name), f)
    graph: dict[Path, set[Path]] = defaultdict(set)
    for f, text in code.items():
        declared = set(re.findall(r"\b(?:val|def|var)\s+([A-Z]\w*)", text))
        words = set(re.findall(r"\b[A-Z]\w*\b", text)) - declared
        imported = set()
        for base, names in IMPORT.findall(text):
            for name, _alias in re.findall(r"(\w+)(?:\s*=>\s*(\w+))?", names.strip("{}")):
                imported.add((base, name))
        imported |= set(MEMBER_IMPORT.findall(text))
        for (pkg, name), other in defined.items():
            if other == f:
                continue
            if (pkg == package[f] and name in words) or (pkg, name) in imported or f"{pkg}.{name}" in text:
                graph[f].add(other)
    return graph


def circles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """The strongly connected components of more than one file (Tarjan's algorithm, iterative)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    found: list[list[Path]] = []
    for start in list(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            step = next(successors, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_ROOT
    found = circles(needs(root))
    for component in found:
        print("circle: " + ", ".join(str(f.relative_to(root)) for f in component))
    print(f"{len(found)} circle(s) between files under {root}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
