"""Package registries on 127.0.0.1, for the tests that install the connector as users will once it is published.

- A PyPI-compatible server (pypiserver, from PyPI) that takes ``twine upload`` and serves ``pip install
  --index-url``.
- A Maven repository over HTTP that takes a Maven deploy and serves ``spark-submit --packages --repositories``:
  Debian's nginx (``dev/nginx/install.sh``) with its WebDAV module, which stores what is PUT under its root and
  creates the folders of the Maven layout as it goes.

Both store into a folder the caller gives, so a second test process (each Spark line's smoke run) can serve what the
first uploaded without uploading again: :func:`released` uploads only what the folders lack.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from harness.emulator import free_loopback_port
from harness.jobs import run_checked
from harness.spark import REPO_ROOT

NGINX = REPO_ROOT / "dev" / "nginx" / "root" / "usr" / "sbin" / "nginx"
RELEASE = REPO_ROOT / "dev" / "release.sh"
START_TIMEOUT_S = 30


@dataclass(frozen=True)
class Registries:
    """The two registries' URLs: ``pypi`` is the upload URL (``simple/`` below it is the index), ``maven`` the
    repository's root."""

    pypi: str
    maven: str

    @property
    def pypi_index(self) -> str:
        return f"{self.pypi}simple/"


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer in {START_TIMEOUT_S} s: {log.read_text()[-2000:]}")


def _launch(stack: ExitStack, command: list[str], log: Path, url: str) -> None:
    output = stack.enter_context(log.open("wb"))
    process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)

    def stop() -> None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()

    stack.callback(stop)
    _wait_for(url, process, log)


def start_pypi(stack: ExitStack, packages: Path, work: Path) -> str:
    """pypiserver over ``packages``, taking uploads from anyone (``-a . -P .``: no authentication)."""
    packages.mkdir(parents=True, exist_ok=True)
    port = free_loopback_port()
    server = Path(sys.executable).with_name("pypi-server")
    url = f"http://127.0.0.1:{port}/"
    # simple-dir: the folder is listed on each request (the cached backend's file watch would miss a folder
    # emptied and filled again by another test process).
    _launch(stack, [str(server), "run", "-i", "127.0.0.1", "-p", str(port), "-a", ".", "-P", ".",
                    "--disable-fallback", "--backend", "simple-dir", str(packages)],
            work / "pypiserver.log", url)  # fmt: skip
    return url


def start_maven(stack: ExitStack, repository: Path, work: Path) -> str:
    """nginx over ``repository``: GET serves it, PUT stores into it (creating the folders of the path). One process
    as the invoking user (``master_process off``): started as root, nginx's workers would run as nobody, who may not
    write into the test's folders."""
    if not NGINX.is_file():
        raise RuntimeError(f"{NGINX} is missing: run bash dev/nginx/install.sh (dev/test.sh does)")
    repository.mkdir(parents=True, exist_ok=True)
    prefix = work / "nginx"
    prefix.mkdir(parents=True, exist_ok=True)
    port = free_loopback_port()
    config = prefix / "nginx.conf"
    config.write_text(
        f"""
daemon off;
master_process off;
pid {prefix}/nginx.pid;
events {{ worker_connections 64; }}
http {{
    access_log {prefix}/access.log;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    default_type application/octet-stream;
    server {{
        listen 127.0.0.1:{port};
        root {repository};
        client_max_body_size 512m;
        location / {{
            dav_methods PUT;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }}
    }}
}}
"""
    )
    url = f"http://127.0.0.1:{port}/"
    _launch(stack, [str(NGINX), "-p", str(prefix), "-c", str(config), "-e", "stderr"], work / "nginx.log", url)
    return url


def _sha1(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def _digests(folder: Path) -> dict[Path, str]:
    """The artifacts and signatures under ``folder`` by content; not the checksum files, which a Maven deploy writes
    for what it uploads (not for signatures) and the release folder writes for every file."""
    return {path.relative_to(folder): _sha1(path) for path in folder.rglob("*")
            if path.is_file() and path.suffix in (".jar", ".pom", ".asc")}  # fmt: skip


def released(stack: ExitStack, release: Path, storage: Path, work: Path) -> Registries:
    """Both registries over ``storage``, holding the release in ``release`` (built by ``dev/release.sh build``).

    Uploads with ``dev/release.sh upload``, as a release does, unless ``storage`` already holds exactly these
    files (a previous test process of the same run uploaded them): every file of the release is compared by
    content, signatures included.
    """
    if not sorted((release / "maven").rglob("*.jar")) or not sorted((release / "python").glob("kinesis_spark-*")):
        raise RuntimeError(f"{release} holds no release: run bash dev/release.sh build {release}")
    storage.mkdir(parents=True, exist_ok=True)
    # Two Spark lines' smoke runs go at once (dev/test.sh): one uploads while the other waits, then finds it done.
    lock = stack.enter_context((storage / ".lock").open("w"))
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        registries = Registries(
            pypi=start_pypi(stack, storage / "pypi", work), maven=start_maven(stack, storage / "maven", work)
        )
        stored = _digests(storage / "maven")
        same = all(stored.get(path) == digest for path, digest in _digests(release / "maven").items()) and all(
            (storage / "pypi" / path.name).is_file() and _sha1(storage / "pypi" / path.name) == _sha1(path)
            for path in (release / "python").iterdir()
        )
        if not same:
            for folder in (storage / "maven", storage / "pypi"):  # emptied, not replaced: the servers serve them
                for child in folder.iterdir():
                    if child.is_dir():
                        shutil.rmtree(child)
                    else:
                        child.unlink()
            # pypiserver takes uploads from anyone (-a .), but twine asks for credentials as PyPI wants them. A
            # developer's own release credentials (MAVEN_*, TWINE_*) stay out of this upload to 127.0.0.1.
            env = {key: value for key, value in os.environ.items() if not key.startswith(("MAVEN_", "TWINE_"))}
            env.update({"TWINE_USERNAME": "kinesis-spark", "TWINE_PASSWORD": "local-registry"})
            run_checked(
                ["bash", str(RELEASE), "upload", str(release), "--pypi", registries.pypi, "--maven", registries.maven],
                env=env,
                timeout=600,
            )
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
    return registries


#: A release folder built already by ``dev/release.sh build`` (dev/test.sh builds one per run, signed with a
#: throwaway key); unset, the tests take target/release, or build one into a temporary folder (sbt: minutes).
RELEASE_VARIABLE = "KINESIS_SPARK_RELEASE_DIR"
#: Where the registries keep what was uploaded, shared by the test processes of one dev/test.sh run.
STORAGE = REPO_ROOT / "target" / "registries"


def release_dir(scratch: Path) -> Path:
    """The release the tests install from: ``KINESIS_SPARK_RELEASE_DIR``, else ``target/release`` when a release
    was built there (``dev/release.sh build``), else one built into ``scratch``."""
    prebuilt = os.environ.get(RELEASE_VARIABLE, "")
    if prebuilt:
        return Path(prebuilt)
    if list((REPO_ROOT / "target" / "release" / "python").glob("kinesis_spark-*.whl")):
        return REPO_ROOT / "target" / "release"
    run_checked(["bash", str(RELEASE), "build", str(scratch)], timeout=1800)
    return scratch
