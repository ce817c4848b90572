"""The `agentloop` subcommands, one module per concern; `agentloop.cli` assembles them into the command line."""
