"""Versions of the package and of the bundled jar, read from the packaged ``versions.properties``."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["PACKAGE_DIR", "package_version", "packaged_properties", "read_properties"]

#: The installed package's folder. dev/build-python.sh copies ``versions.properties`` and ``jars/`` into it
#: together, so the version read here always names the bundled jar. Read at call time (tests replace it).
PACKAGE_DIR = Path(__file__).resolve().parent


def read_properties(path: Path) -> dict[str, str]:
    r"""Read ``key=value`` lines of a Java properties file.

    Only the subset that ``versions.properties`` uses is understood: one ``key=value`` per line,
    ``#`` or ``!`` comments, blank lines.

    Parameters
    ----------
    path : Path
        The properties file.

    Returns
    -------
    dict[str, str]
        Keys and values, both stripped of surrounding whitespace.

    Examples
    --------
    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "v.properties"
    >>> _ = p.write_text("# comment\nspark=4.2.0\n")
    >>> read_properties(p)
    {'spark': '4.2.0'}
    """
    props: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "!")):
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def packaged_properties() -> dict[str, str] | None:
    """Return the ``versions.properties`` shipped inside the package, or ``None`` if it was not copied in."""
    path = PACKAGE_DIR / "versions.properties"
    return read_properties(path) if path.is_file() else None


def package_version() -> str:
    """Return the version of ``kinesis-spark``.

    The packaged ``versions.properties`` names the bundled jar, so it wins; the installed package's
    metadata (generated from the same file by ``setup.py``) is the fallback.

    Returns
    -------
    str
        For example ``"0.1.0"``; ``"0+unknown"`` if neither source exists (an uninstalled source tree).
    """
    props = packaged_properties()
    if props is not None and "kinesis-spark" in props:
        return props["kinesis-spark"]
    try:
        return metadata.version("kinesis-spark")
    except metadata.PackageNotFoundError:
        return "0+unknown"
