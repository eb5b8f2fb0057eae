"""Calibration: measure the audit's own error on agents whose faithfulness is known by construction.

Ground-truth agents (coupled, bypass, mixtures at a known rate) run on the same model and questions as the
agent under audit; their audits give the pipeline's false-alarm and miss rates, with which a report corrects
an observed violation rate (Rogan–Gladen) and says when the audit carries no information at all.
"""

__all__: list[str] = []
