"""The one report writer: folders created, atomic replacement, named errors, streamed JSON Lines."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from ariadne_lc.errors import AriadneError
from ariadne_lc.report import JsonlWriter, ReportWriteError, write_json, write_text


class Row(BaseModel):
    n: int
    text: str


def test_folders_are_created_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "report.md"
    assert write_text(target, "# title\n") == target
    assert target.read_text(encoding="utf-8") == "# title\n"
    assert os.listdir(target.parent) == ["report.md"]


def test_the_file_gets_the_mode_a_plain_open_would_give(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("x", encoding="utf-8")
    written = write_text(tmp_path / "written.txt", "x")
    assert stat.S_IMODE(written.stat().st_mode) == stat.S_IMODE(plain.stat().st_mode)


def test_json_of_models_and_dicts(tmp_path: Path) -> None:
    write_json(tmp_path / "m.json", Row(n=1, text="é"))
    write_json(tmp_path / "d.json", {"n": 2})
    assert Row.model_validate_json((tmp_path / "m.json").read_text(encoding="utf-8")) == Row(n=1, text="é")
    assert json.loads((tmp_path / "d.json").read_text(encoding="utf-8")) == {"n": 2}


def test_a_failed_write_keeps_the_old_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "report.json"
    write_json(target, {"version": 1})

    def refuse(source: str, destination: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(ReportWriteError, match="No space left on device") as info:
        write_json(target, {"version": 2})
    assert isinstance(info.value, AriadneError) and isinstance(info.value, OSError)
    assert info.value.path == target
    assert json.loads(target.read_text(encoding="utf-8")) == {"version": 1}
    assert os.listdir(tmp_path) == ["report.json"]


def test_a_file_where_a_folder_should_be_is_a_named_error(tmp_path: Path) -> None:
    (tmp_path / "reports").write_text("", encoding="utf-8")
    with pytest.raises(ReportWriteError, match=r"cannot write .*reports/x\.json: .*choose another output path"):
        write_text(tmp_path / "reports" / "x.json", "{}")
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(ReportWriteError, match=r"dir\.json"):
        write_text(tmp_path / "dir.json", "{}")


def test_concurrent_writers_of_one_path_never_mix(tmp_path: Path) -> None:
    target = tmp_path / "shared.json"
    documents = [{"writer": i, "payload": str(i) * 20_000} for i in range(8)]
    threads = [threading.Thread(target=write_json, args=(target, d)) for d in documents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert json.loads(target.read_text(encoding="utf-8")) in documents
    assert os.listdir(tmp_path) == ["shared.json"]


def test_jsonl_lines_are_on_disk_as_soon_as_written(tmp_path: Path) -> None:
    path = tmp_path / "new" / "items.jsonl"
    with JsonlWriter(path) as sink:
        sink.write(Row(n=1, text="a"))
        assert path.read_text(encoding="utf-8").splitlines() == ['{"n":1,"text":"a"}']
        sink.write({"n": 2})
    assert [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] == [
        {"n": 1, "text": "a"},
        {"n": 2},
    ]
    with pytest.raises(RuntimeError, match="outside its with-block"):
        sink.write({"n": 3})
