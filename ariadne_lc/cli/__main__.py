"""``python -m ariadne_lc.cli``, the same as the ``ariadne-lc`` command."""

from ariadne_lc.cli import main

main()
