"""A calibration run on disk: its manifest, and every audit appended (and fsynced) the moment it finishes.

Why JSON Lines and not a database: a calibration run is written by one process, append-only, and read back
whole by the analysis; one line per :class:`~ariadne_lc.calibration.records.CalibrationAudit` is the simplest
format that survives being killed at any instant. Each line is written, flushed and ``fsync``-ed before the runner
goes on, so an interrupted run loses at most the audit in flight; a torn last line (the process died mid-write) is
cut off when the log is opened again, and the run resumes from the audits that are complete.

The manifest (``run.json``) fixes what the audits are valid for (model, critic, scorer, τ, λ) and which queries
were asked (seed, questions per domain). Resuming into a directory made with another manifest is refused
(:class:`RunMismatchError`): mixing audits of two configurations would calibrate neither. The one change allowed is
more questions per domain: a seed's sample of n questions is the first n of its larger samples
(:func:`~ariadne_lc.demo.data.load_demo_queries`), so a run grows without a single audit being redone.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ariadne_lc.calibration.records import AgentKind, CalibrationAudit, CalibrationConfig, Method
from ariadne_lc.errors import ConfigurationError, StoreError

__all__ = [
    "AUDITS_FILE",
    "MANIFEST_FILE",
    "AuditKey",
    "AuditLog",
    "RunManifest",
    "RunMismatchError",
    "audit_key",
    "load_run",
    "make_key",
    "open_run",
]

AUDITS_FILE = "audits.jsonl"
MANIFEST_FILE = "run.json"

AuditKey = tuple[str, str, float | None, str, str]
"""(method, agent, p, query id, intervention type): one audit of one query on one agent."""


class RunMismatchError(ConfigurationError):
    """The output directory holds a run made with another configuration; the message says which fields differ."""


class RunManifest(BaseModel):
    """What a run is: its configuration, and the queries it asks (by seed and size)."""

    model_config = ConfigDict(frozen=True)

    config: CalibrationConfig
    seed: int
    n_per_domain: int
    domains: tuple[str, ...]
    ps: tuple[float, ...]
    """The mixture rates validated on the held-out half."""
    interventions: tuple[str, ...]
    agents: tuple[str, ...]
    """Which agent families run: ``ground_truth``, ``natural``, ``reference``."""
    created_at: datetime = Field(default_factory=lambda: datetime.now(UTC))

    def identity(self) -> dict[str, object]:
        """Everything but the creation time: two manifests with equal identities describe the same run."""
        return self.model_dump(mode="json", exclude={"created_at"})


def audit_key(audit: CalibrationAudit) -> AuditKey:
    """The key that identifies an audit across restarts."""
    return (audit.method, audit.agent, audit.p, audit.query_id, audit.result.intervention_type)


def make_key(method: Method, agent: AgentKind, p: float | None, query_id: str, intervention: str) -> AuditKey:
    """The key of an audit not yet made (see :func:`audit_key`)."""
    return (method, agent, p, query_id, intervention)


class AuditLog:
    """Append-only JSON Lines of :class:`CalibrationAudit`, fsynced per line; thread-safe.

    A committed run keeps its audits gzipped beside the file (``audits.jsonl.gz``): they are read first, read only,
    and a resumed run appends its new audits to ``audits.jsonl`` (so ``--report-only`` and ``--n`` growth work on a
    committed run as on a live one).

    Args:
        path: the ``audits.jsonl`` file; created when missing. A torn last line is cut off on open.

    Raises:
        StoreError: a complete line in the middle of the file is not a valid audit (the file was edited or
            belongs to something else); nothing is truncated then.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._audits: list[CalibrationAudit] = self._load()
        self._keys: set[AuditKey] = {audit_key(a) for a in self._audits}

    def _load(self) -> list[CalibrationAudit]:
        return self._load_packed() + self._load_plain()

    def _load_packed(self) -> list[CalibrationAudit]:
        packed = self.path.with_name(self.path.name + ".gz")
        if not packed.is_file():
            return []
        with gzip.open(packed, "rt", encoding="utf-8") as fh:
            lines = fh.read().splitlines()
        try:
            return [CalibrationAudit.model_validate_json(line) for line in lines if line.strip()]
        except ValidationError as exc:
            raise StoreError(f"{packed}: not a calibration audit ({exc.error_count()} errors)") from exc

    def _load_plain(self) -> list[CalibrationAudit]:
        if not self.path.exists():
            return []
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        audits: list[CalibrationAudit] = []
        good_bytes = 0
        for number, line in enumerate(lines, 1):
            last = number == len(lines)
            if not line.strip():
                good_bytes += len(line) + (0 if last else 1)
                continue
            try:
                audits.append(CalibrationAudit.model_validate_json(line))
            except ValidationError as exc:
                if last or (number == len(lines) - 1 and not lines[-1]):
                    break  # the write that was in flight when the run stopped: drop it
                raise StoreError(f"{self.path}:{number}: not a calibration audit ({exc.error_count()} errors)") from exc
            good_bytes += len(line) + (0 if last else 1)
        if good_bytes < len(raw):
            with self.path.open("r+b") as fh:
                fh.truncate(good_bytes)
        return audits

    def append(self, audit: CalibrationAudit) -> None:
        """Write one audit and make it durable before returning."""
        line = audit.model_dump_json() + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(line)
                fh.flush()
                os.fsync(fh.fileno())
            self._audits.append(audit)
            self._keys.add(audit_key(audit))

    def has(self, key: AuditKey) -> bool:
        """Whether an audit with this key is already stored."""
        with self._lock:
            return key in self._keys

    def audits(self) -> list[CalibrationAudit]:
        """All stored audits, in the order they were written."""
        with self._lock:
            return list(self._audits)

    def __len__(self) -> int:
        with self._lock:
            return len(self._audits)


def open_run(directory: str | Path, manifest: RunManifest) -> AuditLog:
    """Create or resume the run in ``directory``.

    A stored run with fewer questions per domain and otherwise the same manifest is extended: its manifest is
    rewritten with the larger ``n_per_domain`` (and its creation time), and its audits stay valid.

    Raises:
        RunMismatchError: the directory holds a run with another manifest, or with more questions per domain.
        StoreError: the stored manifest cannot be read.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / MANIFEST_FILE
    if path.exists():
        try:
            stored = RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise StoreError(f"{path}: not a calibration run manifest ({exc.error_count()} errors)") from exc
        old, new = stored.identity(), manifest.identity()
        differ = sorted(k for k in new if old.get(k) != new.get(k))
        if differ == ["n_per_domain"] and manifest.n_per_domain > stored.n_per_domain:
            _write_manifest(path, manifest.model_copy(update={"created_at": stored.created_at}))
        elif differ:
            grow = " (a run can grow, never shrink: --n at least the stored one)" if differ == ["n_per_domain"] else ""
            raise RunMismatchError(
                f"{folder} holds a calibration run with another configuration (differs in: {', '.join(differ)}){grow}; "
                "resume it with the same options, or choose another --output"
            )
    else:
        _write_manifest(path, manifest)
    return AuditLog(folder / AUDITS_FILE)


def _write_manifest(path: Path, manifest: RunManifest) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def load_run(directory: str | Path) -> tuple[RunManifest, AuditLog]:
    """An existing run, as it stands (to analyse a run that was stopped, without running anything).

    Raises:
        StoreError: the directory holds no run, or its manifest cannot be read.
    """
    path = Path(directory) / MANIFEST_FILE
    if not path.is_file():
        raise StoreError(f"{directory} holds no calibration run (no {MANIFEST_FILE})")
    try:
        manifest = RunManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise StoreError(f"{path}: not a calibration run manifest ({exc.error_count()} errors)") from exc
    return manifest, AuditLog(Path(directory) / AUDITS_FILE)
