"""``python -m ariadne_lc.bypass --input FILE.jsonl [--output out.json] [--model PATH] [--spans N] [--seed S]``."""

from __future__ import annotations

import sys

from ariadne_lc.bypass._command import main

sys.exit(main())
