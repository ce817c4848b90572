"""Trace store, pair harvesting, repair-bias statistics, A/B analysis and reports (see the issues)."""
