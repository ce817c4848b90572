from agentloop.cli import main

main()
