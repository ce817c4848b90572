"""Code that runs inside sandboxed processes (candidate, memory check, profile, baseline), never in the evaluator."""
