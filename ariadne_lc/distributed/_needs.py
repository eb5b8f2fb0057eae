"""What the jobs waiting need of a starting worker: every link their plans name, registered in its process.

The serving side stores each job with the links it is to be audited on (``OnlineAuditor(links=...)``), looked up in
the serving process's registry; a link a team registers itself (:func:`ariadne_lc.links.register`) is registered by
an import. A worker whose process lacks that import could only fail each such job when it claims it. So a starting
worker reads the links the unfinished jobs name (one query), imports the ``--graph`` module when some are unknown (a
link is usually registered beside the graph, as ``--link`` is looked up), and refuses to start, in one line, when
any is still unknown. A job stored after start-up that names an unknown link fails at once (a
:class:`~ariadne_lc.errors.ConfigurationError` is never retried), with the same words.
"""

from __future__ import annotations

import importlib

from ariadne_lc import links
from ariadne_lc.errors import ConfigurationError
from ariadne_lc.store._pg import one_line

__all__ = ["check_job_links", "missing_link_hint", "named_links"]

_NAMED = (
    "SELECT DISTINCT json_array_elements_text(audit_plan->'links') FROM ariadne_online_jobs "
    "WHERE state IN ('pending', 'running') AND audit_plan IS NOT NULL"
)


def missing_link_hint(unknown: list[str]) -> str:
    """What to do about links a worker's process has not registered."""
    return (
        f"jobs name links this worker does not know: {', '.join(unknown)} (registered here: "
        f"{', '.join(links.names())}). The serving side registered them (ariadne_lc.links.register) in a module this "
        "worker does not import: import that module from the --graph module, so that every worker registers them"
    )


def named_links(url: str) -> set[str]:
    """The links the unfinished jobs at ``url`` name (none when the job tables do not exist yet)."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=3, autocommit=True) as conn:
            return {str(row[0]) for row in conn.execute(_NAMED).fetchall()}
    except psycopg.errors.UndefinedTable:
        return set()
    except psycopg.Error as exc:
        raise ConfigurationError(f"could not read the links the jobs name: {one_line(exc)}") from None


def check_job_links(url: str, *, graph: str) -> None:
    """Refuse to start when unfinished jobs at ``url`` name a link this process has not registered, once the
    ``graph`` module (``package.module:attribute``) is imported.

    Raises:
        ConfigurationError: Links named by jobs and unknown here (see the module docstring).
    """
    named = named_links(url)
    unknown = sorted(named - set(links.names()))
    if unknown:
        module = graph.partition(":")[0]
        try:
            importlib.import_module(module)  # the module only: a graph factory is not called here
        except ImportError as exc:
            raise ConfigurationError(f"--graph: cannot import {module!r}: {exc}") from None
        unknown = sorted(named - set(links.names()))
    if unknown:
        raise ConfigurationError(missing_link_hint(unknown))
