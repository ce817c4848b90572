"""agentloop: LLMs write Triton kernels over several rounds, scored by an evaluator that cannot be fooled."""

__version__ = "0.1.0"
