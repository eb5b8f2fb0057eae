"""Reports: versioned JSON, Markdown and self-contained HTML."""

from ariadne_lc.report._ablation import ABLATION_SCHEMA, ablation_document, ablation_markdown

__all__ = ["ABLATION_SCHEMA", "ablation_document", "ablation_markdown"]
