"""The review dataset in the backends' own dataset stores: Phoenix datasets and MLflow evaluation datasets.

A team reviews where it already curates examples. Each :class:`~ariadne_lc.export.review.ReviewRow` becomes one
example split the way both backends split one: ``inputs`` (the question and the step with its edit, what a re-run
would be given), ``outputs`` (the recorded answer and the answer after the edit), and the rest as metadata (Phoenix)
or string tags (MLflow): why it is there, the verdict and φ, and the ids to find the run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ariadne_lc.errors import ConfigurationError, MissingExtraError
from ariadne_lc.export.review import ReviewRow

if TYPE_CHECKING:
    from phoenix.client import Client as PhoenixClient

__all__ = ["upload_to_mlflow", "upload_to_phoenix"]

_INPUTS = ("question", "agent", "link", "step", "unit", "intervention", "edited", "recorded", "edit")
_OUTPUTS = ("effect", "before", "after")


def _split(row: ReviewRow) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    data = row.model_dump()
    inputs = {k: data.pop(k) for k in _INPUTS}
    outputs = {k: data.pop(k) for k in _OUTPUTS}
    return inputs, outputs, data


def _named(rows: Sequence[ReviewRow], name: str) -> None:
    if not name.strip():
        raise ConfigurationError("a dataset needs a name")
    if not rows:
        raise ConfigurationError(f"dataset {name!r}: no rows to upload (no audit was flagged or borderline)")


def upload_to_phoenix(
    rows: Sequence[ReviewRow],
    name: str,
    *,
    client: PhoenixClient | None = None,
    base_url: str | None = None,
    description: str | None = None,
) -> str:
    """Phoenix dataset ``name`` with one example per row: created, or, when it exists, given the rows it does not hold
    yet (by result id: an export run again adds nothing twice); return its id.

    Raises:
        ConfigurationError: No rows, or no name.
        MissingExtraError: ``arize-phoenix-client`` is not installed (extra ``phoenix``).
    """
    _named(rows, name)
    if client is None:
        try:
            from phoenix.client import Client
        except ImportError as exc:
            raise MissingExtraError("upload_to_phoenix", "phoenix", "It needs arize-phoenix-client.") from exc
        client = Client(base_url=base_url)
    existing = next((d for d in client.datasets.list() if d.get("name") == name), None)
    held: set[str] = set()
    if existing is not None:  # an export run again: add what is new, never a row twice
        examples = client.datasets.get_dataset(dataset=name).examples
        held = {str((e.get("metadata") or {}).get("result_id")) for e in examples}
    split = [_split(row) for row in rows if row.result_id not in held]
    inputs, outputs, metadata = [i for i, _, _ in split], [o for _, o, _ in split], [m for _, _, m in split]
    if existing is None:
        description = description or "Flagged and borderline causal-faithfulness audits (ariadne_lc export)"
        created = client.datasets.create_dataset(name=name, inputs=inputs, outputs=outputs, metadata=metadata,
                                                 dataset_description=description)  # fmt: skip
        return str(created.id)
    if split:
        client.datasets.add_examples_to_dataset(dataset=name, inputs=inputs, outputs=outputs, metadata=metadata)
    return str(existing["id"])


def _tags(metadata: dict[str, Any]) -> dict[str, str]:
    """MLflow keeps record tags as strings."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items() if v is not None}


def upload_to_mlflow(rows: Sequence[ReviewRow], name: str, *, experiment_id: str | None = None) -> str:
    """MLflow evaluation dataset ``name`` (of ``experiment_id``) with one record per row: created, or merged into when
    it exists (MLflow keeps one record per inputs); return its id.

    MLflow's dataset API writes to the tracking server MLflow is configured with (``mlflow.set_tracking_uri`` or
    ``MLFLOW_TRACKING_URI``), which must have a SQL backend. A record's source is the agent's trace
    (``tr-<otel trace id>``) when the row knows it.

    Raises:
        ConfigurationError: No rows, or no name.
        MissingExtraError: MLflow is not installed (extra ``mlflow``).
    """
    _named(rows, name)
    try:
        from mlflow.genai.datasets import create_dataset, search_datasets
    except ImportError as exc:
        raise MissingExtraError("upload_to_mlflow", "mlflow", "It needs mlflow (3.6 or newer).") from exc
    records = []
    for row in rows:
        inputs, outputs, metadata = _split(row)
        record: dict[str, Any] = {"inputs": inputs, "outputs": outputs, "tags": _tags(metadata)}
        if row.otel_trace_id is not None:
            record["source"] = {"source_type": "TRACE", "source_data": {"trace_id": f"tr-{row.otel_trace_id}"}}
        records.append(record)
    found = [d for d in search_datasets(experiment_ids=experiment_id) if d.name == name]  # any name, quotes too
    dataset = found[0] if found else create_dataset(name=name, experiment_id=experiment_id)
    dataset.merge_records(records)  # MLflow merges a record whose inputs it holds already
    return str(dataset.dataset_id)
