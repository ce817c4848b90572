"""The stages of one evaluation, each a function of (evaluation, result) run in order by
evaluate.run_stages: static, start, correctness, timing, memcheck, profile."""
